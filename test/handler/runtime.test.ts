import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { HandlerHarness, SECRET_ARN, SELLER_PIPELINE, useHandlerHarness } from './helpers';
import { DEFAULT_REFRESH_TOKEN } from '../../src/emulator';
import { configureLocalRuntime } from '../../src/handler';
import { ResourceTypes } from '../../src/kinds';

// The AWS SDK clients as the Lambda runtime provides them (mocked: no AWS access in tests).
const sdkCalls: Array<{ client: string; input: unknown }> = [];
jest.mock('@aws-sdk/client-secrets-manager', () => ({
  GetSecretValueCommand: class { constructor(public readonly input: unknown) {} },
  SecretsManagerClient: class {
    async send(cmd: { input: { SecretId: string } }): Promise<unknown> {
      sdkCalls.push({ client: 'secretsmanager', input: cmd.input });
      return { SecretString: JSON.stringify({ refresh_token: 'emulator-refresh-token' }) };
    }
  },
}));
jest.mock('@aws-sdk/client-sts', () => ({
  GetCallerIdentityCommand: class { constructor(public readonly input: unknown) {} },
  STSClient: class {
    async send(cmd: { input: unknown }): Promise<unknown> {
      sdkCalls.push({ client: 'sts', input: cmd.input });
      return { Account: '123456789012' };
    }
  },
}));

const NP = SELLER_PIPELINE;

let h: HandlerHarness;
useHandlerHarness((started) => {
  h = started;
});

describe('runtime', () => {
  test('without overrides: the secret is read with GetSecretValue and the account with GetCallerIdentity, once each', async () => {
    // The journal runs on the local DynamoDB-compatible server (its SDK is real, not mocked).
    configureLocalRuntime({ sleep: async () => undefined, journalEndpoint: h.journal.endpoint, environment: h.environment() });
    sdkCalls.length = 0;
    const r = await h.onEvent(h.event(ResourceTypes.NOTIFICATION_PIPELINE, 'Create', NP));
    await h.onEvent(h.event(ResourceTypes.NOTIFICATION_PIPELINE, 'Delete', NP, { PhysicalResourceId: r.PhysicalResourceId }));
    expect(sdkCalls).toEqual([
      { client: 'sts', input: {} },
      { client: 'secretsmanager', input: { SecretId: SECRET_ARN } },
    ]);
    // The lifecycle journal went to the configured endpoint (the connection's table).
    expect((await h.journalRecords()).map((x) => x.physicalId)).toContain(r.PhysicalResourceId);
  });

  test('account and user IDs are looked up once when the connection omits them', async () => {
    h.configure();
    await h.clearRequests();
    const sub = { ProductId: '3001', RemoteIdentityId: '362', ProductParameters: { marketplace_id: 'ATVPDKIKX0DER' }, Status: 'active', OnDelete: 'invalid' };
    await h.onEvent(h.event(ResourceTypes.SUBSCRIPTION, 'Create', sub, { LogicalResourceId: 'A' }));
    await h.onEvent(h.event(ResourceTypes.SUBSCRIPTION, 'Create', { ...sub, RemoteIdentityId: '364' }, { LogicalResourceId: 'B' }));
    const reqs = await h.requests();
    expect(reqs.filter((x) => x.path === '/account' || x.path === '/user').map((x) => x.path)).toEqual(['/account', '/user']);
    expect(h.state().subscriptions.filter((s: any) => s.product === 3001 && s.account === 1001 && s.user === 2001)).toHaveLength(2);
  });

  test('logs: one JSON line per event and per service call, properties summarized, never the token', async () => {
    h.configure();
    // Subscription 8601 is the resource's (its claim in the journal): its Delete ends it.
    await h.seedClaim('sub', '8601');
    h.logs.length = 0;
    await h.onEvent(h.event(ResourceTypes.SUBSCRIPTION, 'Delete', {}, { PhysicalResourceId: '8601' }));
    const lines = h.logs.map((l) => JSON.parse(l));
    expect(lines[0]).toMatchObject({ msg: 'onEvent', RequestType: 'Delete', ResourceType: ResourceTypes.SUBSCRIPTION, PhysicalResourceId: '8601' });
    expect(lines[0].properties.Connection).toEqual({ BaseUrl: h.emu.url, RefreshTokenSecret: 'set' });
    expect(lines.filter((l) => l.msg === 'service call').map((l) => `${l.method} ${l.path} ${l.status}`))
      .toEqual(['POST /auth/api/ref 200', 'GET /sub/8601 200', 'PATCH /v2/sub/8601 200', 'GET /service/history/production/history/status/8601 200']);
    expect(h.logs.join('\n')).not.toContain(DEFAULT_REFRESH_TOKEN);
  });

  test('an unknown refresh token fails with an actionable reason that does not echo it', async () => {
    configureLocalRuntime({
      readSecret: async () => 'wrong-refresh-token-value', callerAccountId: async () => '123456789012', journalEndpoint: h.journal.endpoint, environment: h.environment(),
    });
    await h.seedClaim('sub', '8601');
    const reason = await h.fails(h.event(ResourceTypes.SUBSCRIPTION, 'Delete', {}, { PhysicalResourceId: '8601' }));
    expect(reason).toContain('check the refresh token stored in the connection\'s secret');
    expect(reason).not.toContain('wrong-refresh-token-value');
    expect(h.logs.join('\n')).not.toContain('wrong-refresh-token-value');
  });

  test('an unknown resource type fails clearly', async () => {
    h.configure();
    expect(await h.fails(h.event('Custom::Nope', 'Create', {}))).toContain('unknown resource type Custom::Nope');
  });
});

const BUNDLE = join(__dirname, '..', '..', 'assets', 'handler', 'index', 'index.js');
(existsSync(BUNDLE) ? describe : describe.skip)('the bundle (assets/handler/index/index.js)', () => {
  test('loads without the Secrets Manager and STS SDKs when overridden and serves onEvent/isComplete', async () => {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const mod = require(BUNDLE) as typeof import('../../src/handler');
    expect(typeof mod.onEvent).toBe('function');
    expect(typeof mod.isComplete).toBe('function');
    mod.configureLocalRuntime({
      readSecret: async () => DEFAULT_REFRESH_TOKEN, callerAccountId: async () => '123456789012', sleep: async () => undefined, journalEndpoint: h.journal.endpoint, environment: h.environment(),
    });
    const ctx = { getRemainingTimeInMillis: () => 600_000 };
    const ev = h.event(ResourceTypes.NOTIFICATION_PIPELINE, 'Create', NP, { LogicalResourceId: 'FromBundle' });
    const r = await mod.onEvent(ev, ctx);
    expect(r.PhysicalResourceId).toMatch(/^\d+$/);
    expect(await mod.isComplete({ ...ev, ...r }, ctx)).toEqual({ IsComplete: true });
    await mod.onEvent(h.event(ResourceTypes.NOTIFICATION_PIPELINE, 'Delete', NP, { PhysicalResourceId: r.PhysicalResourceId, LogicalResourceId: 'FromBundle' }), ctx);
    expect(h.state().subscriptions.find((s: any) => String(s.id) === r.PhysicalResourceId).status).toBe('invalid');
  });
});
