/**
 * The provider serves only what it was bound to at synth time (issue 31, "the provider believes the event"): its
 * stacks, its connections (addresses, secret, journal table), https addresses, and journal keys of the event's own
 * stack. Each refusal happens before the secret is read and before any call.
 */
import { HandlerHarness, useHandlerHarness } from './helpers';
import { useTrapServer } from './trap-server';
import { BOUND_CONNECTION_FIELDS, BOUND_CONNECTIONS_ENV, BOUND_STACKS_ENV } from '../../src/contract';
import { DEFAULT_REFRESH_TOKEN } from '../../src/emulator';
import { configureLocalRuntime } from '../../src/handler';
import { isLoopbackHost as handlerLoopback } from '../../src/handler/binding';
import { isLoopbackHost as localLoopback } from '../../src/local/transport';

const SUB = 'Custom::DpiSubscription';
const ORDERS = { ProductId: '3001', RemoteIdentityId: '362', ProductParameters: { marketplace_id: 'ATVPDKIKX0DER' }, Status: 'active', OnDelete: 'invalid' };
const stackId = (name: string): string => `arn:aws:cloudformation:us-east-1:123456789012:stack/${name}/11111111-2222-3333-4444-555555555555`;

let h: HandlerHarness;
useHandlerHarness((started) => {
  h = started;
}, { resetEach: true });

const trap = useTrapServer();
beforeEach(() => {
  h.bound = { stacks: ['HandlerTest'], connections: [] };
  h.configure();
});

/** The event fails; nothing was read or sent: no secret read, no service call, no request to the trap. */
async function refusedUntouched(event: Parameters<HandlerHarness['onEvent']>[0]): Promise<string> {
  const reads = h.secretReads;
  await h.clearRequests();
  const reason = await h.fails(event);
  expect(h.secretReads).toBe(reads);
  expect(await h.requests()).toEqual([]);
  expect(trap.requests).toEqual([]);
  expect(reason).toContain('nothing was done');
  return reason;
}

describe('the connection is the one bound at synth time', () => {
  test('an AuthUrl that is not bound (another server on 127.0.0.1): refused, the second server receives nothing, the secret is not read', async () => {
    for (const type of ['Create', 'Delete'] as const) {
      const event = h.event(SUB, type, ORDERS, { ...(type === 'Delete' ? { PhysicalResourceId: '8601' } : {}) });
      event.ResourceProperties.Connection = { ...h.connection, AuthUrl: trap.url };
      const reason = await refusedUntouched(event);
      expect(reason).toContain(`Connection.AuthUrl '${trap.url}' (the provider serves '${h.emu.url}')`);
      expect(reason).not.toContain(DEFAULT_REFRESH_TOKEN);
    }
    expect(h.state().subscriptions.find((s: any) => String(s.id) === '8601').status).toBe('active');
  });

  test('every bound field counts: another gateway, another secret, another journal table are refused', async () => {
    for (const [field, value] of [['BaseUrl', trap.url], ['RefreshTokenSecretArn', 'arn:aws:secretsmanager:us-east-1:123456789012:secret:other-AbCdEf'],
      ['JournalTableName', 'someone-elses-journal']] as const) {
      const event = h.event(SUB, 'Create', ORDERS);
      event.ResourceProperties.Connection = { ...h.connection, [field]: value };
      expect(await refusedUntouched(event)).toContain(`Connection.${field} '${value}'`);
    }
  });

  test('a connection bound besides the first is served (several connections share the provider of a stack)', async () => {
    const other = { ...h.connection, JournalTableName: 'second-connection-journal' };
    h.bound.connections.push(other);
    const event = h.event(SUB, 'Create', ORDERS);
    event.ResourceProperties.Connection = other;
    expect((await h.onEvent(event)).PhysicalResourceId).toMatch(/^\d+$/);
  });

  test('a provider without a binding in its environment refuses every event', async () => {
    configureLocalRuntime({ readSecret: async () => DEFAULT_REFRESH_TOKEN, journalEndpoint: h.journal.endpoint, environment: {} });
    expect(await refusedUntouched(h.event(SUB, 'Create', ORDERS))).toContain(`environment has no ${BOUND_CONNECTIONS_ENV}`);
  });
});

describe('https at run time', () => {
  test('plain http to a host that is not this machine is refused even when bound (a token that resolved to it)', async () => {
    const remote = { ...h.connection, AuthUrl: 'http://auth.dpi.example' };
    h.bound.connections.push(remote);
    const event = h.event(SUB, 'Create', ORDERS);
    event.ResourceProperties.Connection = remote;
    expect(await refusedUntouched(event)).toContain('Connection.AuthUrl \'http://auth.dpi.example\' is not https');
  });

  test('in Lambda (no local runtime) even a bound loopback http address is refused, before the secret is read', async () => {
    const sdkCalls: string[] = [];
    jest.resetModules();
    jest.doMock('@aws-sdk/client-secrets-manager', () => ({
      GetSecretValueCommand: class { constructor(public readonly input: unknown) {} },
      SecretsManagerClient: class {
        async send(): Promise<unknown> {
          sdkCalls.push('GetSecretValue');
          return { SecretString: DEFAULT_REFRESH_TOKEN };
        }
      },
    }));
    const env = h.environment();
    const saved = { c: process.env[BOUND_CONNECTIONS_ENV], s: process.env[BOUND_STACKS_ENV] };
    process.env[BOUND_CONNECTIONS_ENV] = env[BOUND_CONNECTIONS_ENV];
    process.env[BOUND_STACKS_ENV] = env[BOUND_STACKS_ENV];
    try {
      // A fresh module: configureLocalRuntime never called, as in Lambda.
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      const lambda = require('../../src/handler') as typeof import('../../src/handler');
      await h.clearRequests();
      await expect(lambda.onEvent(h.event(SUB, 'Create', ORDERS), { getRemainingTimeInMillis: () => 600_000 }))
        .rejects.toThrow(`Connection.BaseUrl '${h.emu.url}' is not https`);
      expect(sdkCalls).toEqual([]);
      expect(await h.requests()).toEqual([]);
    } finally {
      for (const [k, v] of [[BOUND_CONNECTIONS_ENV, saved.c], [BOUND_STACKS_ENV, saved.s]] as const) {
        if (v === undefined) delete process.env[k];
        else process.env[k] = v;
      }
      jest.dontMock('@aws-sdk/client-secrets-manager');
      jest.resetModules();
    }
  });

  test('the handler\'s loopback rule is the local runner\'s (src/local/transport.ts)', () => {
    for (const host of ['127.0.0.1', '127.1.2.3', 'localhost', 'LOCALHOST.', '[::1]', '::1', '128.0.0.1', '127.0.0.256', '10.0.0.1', 'example.com',
      'localhost.example.com', '[::ffff:127.0.0.1]', '0.0.0.0']) {
      expect([host, handlerLoopback(host)]).toEqual([host, localLoopback(host)]);
    }
  });
});

describe('the stacks it serves and the journal key', () => {
  /** TeamA's stack made subscription X under TeamA/Sub with TeamA's provider; returns X. */
  async function teamA(): Promise<string> {
    h.bound.stacks = ['TeamA'];
    const made = await h.onEvent(h.event(SUB, 'Create', ORDERS, { StackId: stackId('TeamA'), LogicalResourceId: 'Sub' }));
    expect((await h.journalRecords('TeamA/Sub')).map((r) => r.physicalId)).toContain(made.PhysicalResourceId);
    return made.PhysicalResourceId;
  }

  async function untouched(id: string, before: unknown): Promise<void> {
    expect(h.state().subscriptions.find((s: any) => String(s.id) === id).status).toBe('active');
    expect(await h.journalRecords('TeamA/Sub')).toEqual(before);
  }

  test('a foreign JournalKey (TeamA/Sub declared in another stack with its own provider) reads and ends nothing of TeamA\'s', async () => {
    const id = await teamA();
    const before = await h.journalRecords('TeamA/Sub');
    // Mallory's own provider (same account, same shared journal table and service account).
    h.bound.stacks = ['Mallory'];
    const create = h.event(SUB, 'Create', { ...ORDERS, JournalKey: 'TeamA/Sub' }, { StackId: stackId('Mallory'), LogicalResourceId: 'Mine' });
    expect(await refusedUntouched(create)).toContain('JournalKey \'TeamA/Sub\' belongs to stack TeamA, not to stack Mallory');
    const del = h.event(SUB, 'Delete', { ...ORDERS, JournalKey: 'TeamA/Sub' }, { StackId: stackId('Mallory'), LogicalResourceId: 'Mine', PhysicalResourceId: id });
    expect(await refusedUntouched(del)).toContain('JournalKey \'TeamA/Sub\'');
    // A stack named like a nested stack of TeamA is not one: its provider does not serve TeamA's nested stacks.
    h.bound.stacks = ['TeamA-Nested'];
    const lookalike = h.event(SUB, 'Delete', { ...ORDERS, JournalKey: 'TeamA/Sub' }, { StackId: stackId('TeamA-Nested'), PhysicalResourceId: id });
    expect(await refusedUntouched(lookalike)).toContain('belongs to stack TeamA, not to stack TeamA-Nested');
    await untouched(id, before);
  });

  test('another stack naming TeamA\'s provider (its service token) is refused, whatever its properties', async () => {
    const id = await teamA();
    const before = await h.journalRecords('TeamA/Sub');
    const del = h.event(SUB, 'Delete', { ...ORDERS, JournalKey: 'TeamA/Sub' }, { StackId: stackId('Mallory'), LogicalResourceId: 'Sub', PhysicalResourceId: id });
    expect(await refusedUntouched(del)).toContain('stack Mallory is not served by this provider (it serves TeamA)');
    const made = h.event(SUB, 'Create', ORDERS, { StackId: stackId('Mallory'), LogicalResourceId: 'Sub' });
    expect(await refusedUntouched(made)).toContain('stack Mallory is not served by this provider');
    await untouched(id, before);
  });

  test('a fleet\'s nested stack (served by its parent\'s provider) keeps its JournalKey of the parent; other keys are refused', async () => {
    h.bound = { stacks: ['TeamA', 'TeamA-*'], connections: [], stackId: stackId('TeamA') };
    const nested = stackId('TeamA-FleetPipelines0NestedStackResourceA1B2C3D4-1XYZ');
    h.lineage = { [nested]: { ParentId: stackId('TeamA'), RootId: stackId('TeamA') } };
    const key = 'TeamA/Fleet/Pipelines0/Identity362';
    const made = await h.onEvent(h.event(SUB, 'Create', { ...ORDERS, JournalKey: key }, { StackId: nested, LogicalResourceId: 'Identity362A1B2' }));
    expect((await h.journalRecords(key)).map((r) => r.physicalId)).toContain(made.PhysicalResourceId);
    // The nested stack's own name as the stack part works too; another stack's does not, nor a key without one.
    expect((await h.onEvent(h.event(SUB, 'Create', { ...ORDERS, RemoteIdentityId: '364', JournalKey: 'TeamA-FleetPipelines0NestedStackResourceA1B2C3D4-1XYZ/X' },
      { StackId: nested }))).PhysicalResourceId).toMatch(/^\d+$/);
    // The parent's own resources' keys (`<parent>/<logical ID>`) are not a fleet's: a stack named like a nested one
    // (any deployer may name a stack so) must not reach them.
    for (const bad of ['TeamB/Fleet/Pipelines0/Identity362', 'Sub', '/Sub', 'TeamA/Sub', 'TeamA/Fleet/Sub']) {
      const event = h.event(SUB, 'Create', { ...ORDERS, JournalKey: bad }, { StackId: nested });
      expect(await refusedUntouched(event)).toContain(`JournalKey '${bad}'`);
    }
    await h.onEvent(h.event(SUB, 'Delete', { ...ORDERS, JournalKey: key }, { StackId: nested, LogicalResourceId: 'Identity362A1B2', PhysicalResourceId: made.PhysicalResourceId }));
    expect(h.state().subscriptions.find((s: any) => String(s.id) === made.PhysicalResourceId).status).toBe('invalid');
  });

  test('a top-level stack named like a nested one (TeamA-Evil) is refused with a fleet key: CloudFormation gives it no parent', async () => {
    h.bound = { stacks: ['TeamA', 'TeamA-*'], connections: [], stackId: stackId('TeamA') };
    const key = 'TeamA/Fleet/Pipelines0/Identity362';
    const nested = stackId('TeamA-FleetPipelines0NestedStackResourceA1B2C3D4-1XYZ');
    h.lineage = { [nested]: { ParentId: stackId('TeamA'), RootId: stackId('TeamA') }, [stackId('Other')]: {} };
    const made = await h.onEvent(h.event(SUB, 'Create', { ...ORDERS, JournalKey: key }, { StackId: nested, LogicalResourceId: 'Identity362A1B2' }));
    const before = await h.journalRecords(key);
    for (const [evil, lineage] of [['TeamA-Evil', {}], ['TeamA-Evil2', { ParentId: stackId('Other'), RootId: stackId('Other') }]] as const) {
      h.lineage[stackId(evil)] = lineage;
      const del = h.event(SUB, 'Delete', { ...ORDERS, JournalKey: key }, { StackId: stackId(evil), LogicalResourceId: 'Identity362A1B2', PhysicalResourceId: made.PhysicalResourceId });
      expect(await refusedUntouched(del)).toContain(`stack ${evil} is named like a nested stack of this provider's stack, but CloudFormation gives it`);
    }
    // Not provable (DescribeStacks fails, or the provider has no bound stack ID): refused too.
    const unknown = h.event(SUB, 'Create', { ...ORDERS, JournalKey: key }, { StackId: stackId('TeamA-Unknown'), LogicalResourceId: 'X' });
    expect(await refusedUntouched(unknown)).toContain('CloudFormation gives it no parent');
    expect(await h.journalRecords(key)).toEqual(before);
    expect(h.state().subscriptions.find((s: any) => String(s.id) === made.PhysicalResourceId).status).toBe('active');
  });

  test('DescribeStacks throttled (as a fleet deploy makes it): asked again with backoff, then the nested stack is served; asked once per container', async () => {
    h.bound = { stacks: ['TeamA', 'TeamA-*'], connections: [], stackId: stackId('TeamA') };
    const nested = stackId('TeamA-FleetPipelines1NestedStackResourceB1B2C3D4-1XYZ');
    let asked = 0;
    const throttled = Object.assign(new Error('Rate exceeded'), { name: 'Throttling', $metadata: { httpStatusCode: 400 } });
    configureLocalRuntime({
      ...h.runtime(),
      describeStack: async (id) => {
        asked++;
        if (asked <= 2) throw throttled;
        return id === nested ? { ParentId: stackId('TeamA'), RootId: stackId('TeamA') } : {};
      },
    });
    const key = 'TeamA/Fleet/Pipelines1/Identity362';
    const made = await h.onEvent(h.event(SUB, 'Create', { ...ORDERS, JournalKey: key }, { StackId: nested, LogicalResourceId: 'Identity362A1B2' }));
    expect(made.PhysicalResourceId).toMatch(/^\d+$/);
    expect(asked).toBe(3);
    // The two backoffs: 500 ms then 1 s, each times 0.5 to 1 (src/handler/runtime.ts): under 1 s, so the 1 s wait for
    // a new journal table that is still CREATING (a rare race of the local DynamoDB) is not counted.
    expect(h.slept.filter((ms) => ms >= 250 && ms < 1000)).toHaveLength(2);
    await h.onEvent(h.event(SUB, 'Delete', { ...ORDERS, JournalKey: key }, { StackId: nested, LogicalResourceId: 'Identity362A1B2', PhysicalResourceId: made.PhysicalResourceId }));
    expect(asked).toBe(3);
    // An answer (access denied, a stack that does not exist) is not asked again: refused at once.
    const denied = Object.assign(new Error('not authorized to perform: cloudformation:DescribeStacks'), { name: 'AccessDenied', $metadata: { httpStatusCode: 403 } });
    configureLocalRuntime({ ...h.runtime(), describeStack: async () => { asked++; throw denied; } });
    asked = 0;
    const other = h.event(SUB, 'Create', { ...ORDERS, JournalKey: key }, { StackId: stackId('TeamA-Other'), LogicalResourceId: 'X' });
    expect(await refusedUntouched(other)).toContain('could not be proven a nested stack of this provider\'s stack (DescribeStacks: not authorized');
    expect(asked).toBe(1);
  });

  test('isComplete is checked too', async () => {
    const event = h.event('Custom::DpiHistoryRequest', 'Create', {}, { StackId: stackId('Mallory'), PhysicalResourceId: 'x' });
    await expect(h.isComplete(event)).rejects.toThrow('stack Mallory is not served by this provider');
  });

  test('the environment lists the fields in the contract\'s order', () => {
    expect(JSON.parse(h.environment()[BOUND_CONNECTIONS_ENV])).toContainEqual(BOUND_CONNECTION_FIELDS.map((f) => h.connection[f]));
  });
});
