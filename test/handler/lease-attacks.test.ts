/**
 * A hostile principal in the same account against the resource lease (src/handler/lease.ts, journal-lease.ts),
 * deleteProven and the provider binding: each test asserts that the victim is not harmed. Still open (need journal
 * write access; docs/handler.md): a forged lastCreateSince, and a forged cancelledBy that fails a running Update.
 *
 * Access needed per attack:
 *  - S*: only "deploy a stack in the account" (the victim's provider serves `<Victim>-*`: a fleet's nested stacks).
 *  - J*: write access to the journal table (issue 31 item 3: the journal is the only proof of ownership).
 */
import { DynamoDBClient, GetItemCommand, PutItemCommand } from '@aws-sdk/client-dynamodb';
import { HandlerHarness, useHandlerHarness } from './helpers';
import { ResourceTypes } from '../../src/kinds';

jest.setTimeout(120_000);

const SUB = ResourceTypes.SUBSCRIPTION;
const ORDERS = {
  ProductId: '3001',
  RemoteIdentityId: '362',
  ProductParameters: { marketplace_id: 'ATVPDKIKX0DER', report_window: '7' },
  Status: 'active',
  Name: 'Orders',
  OnDelete: 'invalid',
};
const stackId = (name: string): string => `arn:aws:cloudformation:us-east-1:123456789012:stack/${name}/11111111-2222-3333-4444-555555555555`;
const KEY = 'HandlerTest/Resource';

let h: HandlerHarness;
useHandlerHarness((started) => {
  h = started;
}, { resetEach: true });

const realFetch = globalThis.fetch;
beforeEach(() => {
  h.bound = { stacks: ['HandlerTest'], connections: [] };
  h.onSleep = undefined;
});
afterEach(() => {
  h.bound = { stacks: ['HandlerTest'], connections: [] };
  h.onSleep = undefined;
  globalThis.fetch = realFetch;
});

const subOf = (id: string): any => h.state().subscriptions.find((s: any) => String(s.id) === String(id));
const snapshot = (id: string): string => JSON.stringify(subOf(id));
const S = (v: string): { S: string } => ({ S: v });

function ddb(): DynamoDBClient {
  return new DynamoDBClient({ endpoint: h.journal.endpoint, region: 'us-east-1', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } });
}
async function put(item: Record<string, any>): Promise<void> {
  const c = ddb();
  try {
    await c.send(new PutItemCommand({ TableName: h.journalTable, Item: item }));
  } finally {
    c.destroy();
  }
}
async function leaseOf(key: string): Promise<Record<string, any> | undefined> {
  const c = ddb();
  try {
    return (await c.send(new GetItemCommand({ TableName: h.journalTable, Key: { pk: S(`lease#${key}`), sk: S('lease') }, ConsistentRead: true }))).Item;
  } finally {
    c.destroy();
  }
}
/** Runs onEvent and returns the outcome as a string (so a failing expectation shows the handler's reason). */
async function outcome(p: Promise<{ PhysicalResourceId: string }>): Promise<string> {
  return p.then((r) => `ok ${r.PhysicalResourceId}`, (e: Error) => `failed: ${e.message}`);
}

// ---------------------------------------------------------------------------------------------------------------------
// S: stack-deploy access only. The victim's provider serves `Victim` and `Victim-*` (it has a fleet). The attacker
// deploys a top-level stack named `Victim-Evil` whose custom resource names the victim's service token.
// ---------------------------------------------------------------------------------------------------------------------
describe('S. a stack named like a nested stack of the victim (stack-deploy access only)', () => {
  async function victim(): Promise<string> {
    h.bound.stacks = ['Victim', 'Victim-*'];
    const made = await h.onEvent(h.event(SUB, 'Create', ORDERS, { StackId: stackId('Victim'), LogicalResourceId: 'Sub' }));
    expect(subOf(made.PhysicalResourceId).status).toBe('active');
    return made.PhysicalResourceId;
  }

  test('S1 blind kill: a Delete with an invented physical ID and JournalKey Victim/Sub (a top-level resource) leaves the victim\'s subscription active', async () => {
    const id = await victim();
    const before = snapshot(id);
    // The attacker needs no ID: the lease's lastCreate points at the victim's own Create.
    const del = h.event(SUB, 'Delete', { ...ORDERS, JournalKey: 'Victim/Sub' },
      { StackId: stackId('Victim-Evil'), LogicalResourceId: 'X', PhysicalResourceId: 'Victim-Evil-X-1A2B3C4D5E6F' });
    await outcome(h.onEvent(del));
    expect(snapshot(id)).toBe(before);
  });

  test('S2 take-over: a Create with JournalKey Victim/Sub (same product and identity) neither returns nor changes the victim\'s subscription', async () => {
    const id = await victim();
    const before = snapshot(id);
    const create = h.event(SUB, 'Create', { ...ORDERS, JournalKey: 'Victim/Sub', Name: 'pwned', ProductParameters: { marketplace_id: 'ATVPDKIKX0DER', report_window: '30' } },
      { StackId: stackId('Victim-Evil'), LogicalResourceId: 'X' });
    const got = await outcome(h.onEvent(create));
    expect({ got: got === `ok ${id}` ? 'the victim\'s ID' : got.slice(0, 2), victim: snapshot(id) }).toEqual({ got: expect.not.stringMatching(/victim/), victim: before });
  });

  test('S3 a Delete with the victim\'s physical ID and JournalKey Victim/Sub leaves it active', async () => {
    const id = await victim();
    const before = snapshot(id);
    const del = h.event(SUB, 'Delete', { ...ORDERS, JournalKey: 'Victim/Sub' }, { StackId: stackId('Victim-Evil'), LogicalResourceId: 'X', PhysicalResourceId: id });
    await outcome(h.onEvent(del));
    expect(snapshot(id)).toBe(before);
  });

  test('S4 control: without `Victim-*` bound, the same lookalike is refused and nothing changes', async () => {
    const id = await victim();
    const before = snapshot(id);
    h.bound.stacks = ['Victim'];
    const del = h.event(SUB, 'Delete', { ...ORDERS, JournalKey: 'Victim/Sub' },
      { StackId: stackId('Victim-Evil'), LogicalResourceId: 'X', PhysicalResourceId: 'Victim-Evil-X-1A2B3C4D5E6F' });
    expect(await outcome(h.onEvent(del))).toContain('not served by this provider');
    expect(snapshot(id)).toBe(before);
  });

  test('S5 the attacker\'s own stack (own provider, same journal table) cannot touch the victim\'s lease or records via its own keys', async () => {
    const id = await victim();
    const before = snapshot(id);
    const leaseBefore = JSON.stringify(await leaseOf('Victim/Sub'));
    h.bound.stacks = ['Mallory'];
    // A Delete with an invented ID under its own key, and a Delete naming the victim's ID under its own key.
    await outcome(h.onEvent(h.event(SUB, 'Delete', ORDERS, { StackId: stackId('Mallory'), LogicalResourceId: 'Sub', PhysicalResourceId: 'Mallory-Sub-XYZ' })));
    await outcome(h.onEvent(h.event(SUB, 'Delete', ORDERS, { StackId: stackId('Mallory'), LogicalResourceId: 'Sub', PhysicalResourceId: id })));
    // Adopting it is refused (the victim's live record holds the claim).
    await outcome(h.onEvent(h.event(SUB, 'Create', { ...ORDERS, AdoptId: id, RemovalPolicy: 'destroy' },
      { StackId: stackId('Mallory'), LogicalResourceId: 'Adopt' })));
    expect(snapshot(id)).toBe(before);
    expect(JSON.stringify(await leaseOf('Victim/Sub'))).toBe(leaseBefore);
  });
});

// ---------------------------------------------------------------------------------------------------------------------
// J: write access to the journal table.
// ---------------------------------------------------------------------------------------------------------------------
describe('J. forged lease items and records (journal write access)', () => {
  async function victim(): Promise<string> {
    const made = await h.onEvent(h.event(SUB, 'Create', ORDERS));
    return made.PhysicalResourceId;
  }
  const rename = (id: string, name: string): ReturnType<HandlerHarness['event']> => h.event(SUB, 'Update', { ...ORDERS, Name: name },
    { PhysicalResourceId: id, OldResourceProperties: { Connection: h.connection, ...ORDERS } });
  const stackDelete = (id: string): ReturnType<HandlerHarness['event']> => h.event(SUB, 'Delete', ORDERS, { PhysicalResourceId: id });
  /** 70 s left: the waiting invocation gives up at once (60 s reserve + 15 s margin) instead of polling 5,000 rounds. */
  const SHORT = 70_000;

  test('J1 DoS: a lease held until 9999 does not block the victim\'s Update, nor its rollback / stack Delete', async () => {
    const id = await victim();
    await put({
      pk: S(`lease#${KEY}`),
      sk: S('lease'),
      holder: S('evil|000000000000'),
      requestId: S('evil'),
      requestType: S('Delete'),
      since: S(new Date().toISOString()),
      requestSince: S(new Date().toISOString()),
      expiresAt: S('9999-12-31T23:59:59.000Z'),
      version: { N: '99' },
    });
    const upd = await outcome(h.onEvent(rename(id, 'Orders2'), SHORT));
    const del = await outcome(h.onEvent(stackDelete(id), SHORT));
    expect({ upd, del, status: subOf(id).status }).toEqual({ upd: `ok ${id}`, del: `ok ${id}`, status: 'invalid' });
  });

  test('J1b DoS: a lease whose expiresAt is not a time ("zzz") does not block the victim', async () => {
    const id = await victim();
    await put({
      pk: S(`lease#${KEY}`),
      sk: S('lease'),
      holder: S('evil|000000000000'),
      requestId: S('evil'),
      requestType: S('Delete'),
      since: S('zzz'),
      expiresAt: S('zzz'),
      version: { N: '99' },
    });
    const del = await outcome(h.onEvent(stackDelete(id), SHORT));
    expect(del).toBe(`ok ${id}`);
  });

  test('J2 DoS: a lease item whose version is not a number does not wedge the resource with an unexplained DynamoDB error', async () => {
    const id = await victim();
    await put({ pk: S(`lease#${KEY}`), sk: S('lease'), requestId: S('evil'), requestType: S('Update'), version: S('1') });
    const del = await outcome(h.onEvent(stackDelete(id), SHORT));
    expect(del).toBe(`ok ${id}`);
  });

  test('J2b DoS: a lease item with 50 huge cancelledRequests does not wedge the resource (item size limit)', async () => {
    const id = await victim();
    const big = Array.from({ length: 50 }, (_, i) => `${i}-${'x'.repeat(7_900)}`);
    await put({ pk: S(`lease#${KEY}`), sk: S('lease'), requestId: S('evil'), requestType: S('Delete'), version: { N: '5' }, cancelledRequests: { SS: big } });
    const del = await outcome(h.onEvent(stackDelete(id), SHORT));
    expect(del).toBe(`ok ${id}`);
  });

  test('J3 a forged record (future ID) under the victim\'s key does not make the victim\'s cancellation Delete end another resource\'s claimed subscription', async () => {
    const other = await h.subscribe(3001, 362, { marketplace_id: 'ATVPDKIKX0DER', remote_identity_id: '362' });
    const created = await victim();
    await h.seedClaim('sub', other, 'OtherStack/Sub');
    const before = snapshot(other);
    // Forged: a finished record of the victim's resource, created "in the future" so it is always >= lastCreateSince.
    await put({
      pk: S(KEY),
      sk: S('9999-01-01T00:00:00.000Z#deadbeef'),
      state: S('active'),
      version: { N: '1' },
      updatedAt: S(new Date().toISOString()),
      physicalId: S(other),
      doc: S(JSON.stringify({ product: 3001, identity: '362', subscriptionId: other, removalPolicy: 'destroy' })),
    });
    // The victim's own rollback: CloudFormation cancelled its Create (another resource failed) and sends an invented ID.
    await outcome(h.onEvent(h.event(SUB, 'Delete', ORDERS, { PhysicalResourceId: 'HandlerTest-Resource-1A2B3C4D5E6F' })));
    expect(subOf(created).status).toBe('invalid');
    expect(snapshot(other)).toBe(before);
    expect(await h.journalOwner('sub', other)).toBe('OtherStack/Sub');
  });

  test('J3b-control (no forgery): the same cancellation Delete leaves the earlier, taken-over record as it is', async () => {
    const earlier = await victim();
    const before = snapshot(earlier);
    await h.onEvent(h.event(SUB, 'Create', ORDERS));
    await outcome(h.onEvent(h.event(SUB, 'Delete', ORDERS, { PhysicalResourceId: 'HandlerTest-Resource-1A2B3C4D5E6F' })));
    expect(snapshot(earlier)).toBe(before);
  });

  test('J5 a forged active record (future ID) under the victim\'s key does not make the victim\'s Create take another resource\'s subscription', async () => {
    const other = await h.subscribe(3001, 362, { marketplace_id: 'ATVPDKIKX0DER', remote_identity_id: '362' });
    await h.seedClaim('sub', other, 'OtherStack/Sub');
    const before = snapshot(other);
    await put({
      pk: S(KEY),
      sk: S('9999-01-01T00:00:00.000Z#deadbeef'),
      state: S('active'),
      version: { N: '1' },
      updatedAt: S(new Date().toISOString()),
      physicalId: S(other),
      doc: S(JSON.stringify({ product: 3001, identity: '362', subscriptionId: other, removalPolicy: 'destroy' })),
    });
    const got = await outcome(h.onEvent(h.event(SUB, 'Create', ORDERS)));
    expect({ took: got === `ok ${other}`, other: snapshot(other) }).toEqual({ took: false, other: before });
  });
});
