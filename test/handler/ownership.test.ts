/**
 * Ownership rules of the handler (docs/handler.md, "Ownership"): concurrent creates of one product with lost answers,
 * rollbacks that cannot undo a stored parameter, the legacy update's checks before its PATCH, and an earlier attempt
 * resumed with today's declaration.
 */
import { HandlerHarness, SELLER_PIPELINE, useHandlerHarness } from './helpers';
import { DEFAULT_CLOUD_ACCOUNT, DEFAULT_FIXTURES } from '../../src/emulator';
import { dynamoJournal } from '../../src/handler/journal';
import { ResourceTypes } from '../../src/kinds';

const SUB = ResourceTypes.SUBSCRIPTION;
const PIPE = ResourceTypes.NOTIFICATION_PIPELINE;
const LEGACY = ResourceTypes.LEGACY_NOTIFICATION_PIPELINE;
const ORDERS = {
  ProductId: '3001', RemoteIdentityId: '362', ProductParameters: { marketplace_id: 'ATVPDKIKX0DER' }, Status: 'active', OnDelete: 'invalid',
};

/** The legacy pipeline of identity 364 the emulator's fixtures hold (subscription 8601). */
const LEGACY_8601 = {
  SubscriptionId: '8601',
  RemoteIdentityId: '364',
  QueueArn: 'arn:aws:sqs:us-east-1:123456789012:legacy-notifications',
  NotificationTypes: ['ORDER_CHANGE'],
  Retired: 'false',
};

let h: HandlerHarness;
useHandlerHarness((started) => {
  h = started;
}, { resetEach: true });
beforeEach(() => {
  h.configure();
  h.callerAccount = DEFAULT_CLOUD_ACCOUNT;
});

const subOf = (id: string): any => h.state().subscriptions.find((s: any) => String(s.id) === id);
const old = (props: Record<string, unknown>): Record<string, unknown> => ({ Connection: h.connection, ...props });

describe('concurrent creates of one product', () => {
  test('three creates at once, two answers lost, a subscription made beforehand by hand: each resource gets its own, the hand-made one is untouched', async () => {
    const byHand = await h.subscribe(3001, 362, { marketplace_id: 'ATVPDKIKX0DER' });
    const was = JSON.stringify(subOf(byHand));
    await h.admin('POST', '/faults', { method: 'POST', pathPrefix: '/v2/sub', dropResponse: true, count: 2 });
    const names = ['A', 'B', 'C'];
    const results = await Promise.all(names.map((n) => h.onEvent(h.event(SUB, 'Create', { ...ORDERS, Name: n }, { LogicalResourceId: n }))));
    const ids = results.map((r) => r.PhysicalResourceId);
    expect(new Set(ids).size).toBe(3);
    expect(ids).not.toContain(byHand);
    const fresh = h.state().subscriptions.filter((s: any) => s.id >= 9001 && s.product === 3001 && String(s.id) !== byHand && s.status === 'active');
    expect(fresh.map((s: any) => String(s.id)).sort()).toEqual([...ids].sort());
    for (const [i, n] of names.entries()) expect(await h.journalOwner('sub', ids[i])).toBe(`HandlerTest/${n}`);
    expect(JSON.stringify(subOf(byHand))).toBe(was);
    // Every in-flight mark is cleared once the outcomes are recorded.
    expect((await h.journalItems()).filter((x) => x.pk.startsWith('inflight#') && x.sk.startsWith('lock'))).toEqual([]);
  });
});

describe('rollbacks always finish', () => {
  test('an update that added a stored parameter rolls back: the service keeps it (no removal), the journal records it, drift names it', async () => {
    const { PhysicalResourceId: id } = await h.onEvent(h.event(SUB, 'Create', ORDERS));
    const v2 = { ...ORDERS, ProductParameters: { ...ORDERS.ProductParameters, report_window: '7' }, StageIds: ['1000'] };
    await h.onEvent(h.event(SUB, 'Update', v2, { PhysicalResourceId: id, OldResourceProperties: old(ORDERS) }));
    // UPDATE_ROLLBACK: back to the previous properties.
    await h.clearRequests();
    const back = await h.onEvent(h.event(SUB, 'Update', ORDERS, { PhysicalResourceId: id, OldResourceProperties: old(v2) }));
    expect(back.PhysicalResourceId).toBe(id);
    expect(await h.changingRequests()).toEqual([]);
    const rec = (await h.journalRecords())[0];
    expect(rec.state).toBe('active');
    expect(Object.keys(rec.doc.kept).sort()).toEqual(['report_window', 'stage_ids']);
    expect(subOf(id).product_parameters.report_window).toBe('7');
    expect(h.logs.some((l) => l.includes('the service keeps stored parameters that the last change added'))).toBe(true);
  });

  test('dropping a parameter that the last change did not add is still refused before any change', async () => {
    const withWindow = { ...ORDERS, ProductParameters: { ...ORDERS.ProductParameters, report_window: '7' } };
    const { PhysicalResourceId: id } = await h.onEvent(h.event(SUB, 'Create', withWindow));
    await h.clearRequests();
    expect(await h.fails(h.event(SUB, 'Update', ORDERS, { PhysicalResourceId: id, OldResourceProperties: old(withWindow) })))
      .toContain('cannot drop the stored parameter report_window');
    expect(await h.changingRequests()).toEqual([]);
  });
});

describe('check before you destroy', () => {
  test('the legacy update maps product 86\'s stored keys before its PATCH: an unfillable key fails with no call made', async () => {
    const p86 = DEFAULT_FIXTURES.products!.find((p) => p.id === 86)!;
    await h.admin('POST', '/fixtures', { products: [{ ...p86, required_meta_fields: ['remote_identity_id', 'pipeline_owner'] }] });
    const base = LEGACY_8601;
    await h.onEvent(h.event(LEGACY, 'Create', base));
    const queueBefore = JSON.stringify(h.state().legacyPipelines);
    await h.clearRequests();
    const moved = { ...base, QueueArn: 'arn:aws:sqs:us-east-1:123456789012:other-queue' };
    expect(await h.fails(h.event(LEGACY, 'Update', moved, { PhysicalResourceId: '8601', OldResourceProperties: old(base) })))
      .toContain('pipeline_owner');
    expect(await h.changingRequests()).toEqual([]);
    expect(JSON.stringify(h.state().legacyPipelines)).toBe(queueBefore);
  });
});

describe('a resumed attempt uses today\'s declaration', () => {
  const PIPELINE = { ...SELLER_PIPELINE, StorageGroupId: '511', Name: 'Seller' };

  test('a refused storage group, fixed in the app: the next Create records the pipeline with the new storage group and types', async () => {
    const reason = await h.fails(h.event(PIPE, 'Create', PIPELINE));
    expect(reason).toContain('511');
    expect(h.state().pipelines).toHaveLength(1);
    const fixed = { ...PIPELINE, StorageGroupId: '501', NotificationTypes: ['ORDER_CHANGE', 'REPORT_PROCESSING_FINISHED'] };
    const r = await h.onEvent(h.event(PIPE, 'Create', fixed));
    const s = subOf(r.PhysicalResourceId);
    expect(s.storage_group).toBe(501);
    expect(h.state().pipelines).toHaveLength(1);
    expect([...h.state().pipelines[0].notificationTypes].sort()).toEqual(['ORDER_CHANGE', 'REPORT_PROCESSING_FINISHED']);
    expect(r.Data!.SubscribedTypes!.split(',').sort()).toEqual(['ORDER_CHANGE', 'REPORT_PROCESSING_FINISHED']);
  });
});

describe('what appeared long after an attempt is never taken', () => {
  test('a `recording` attempt an hour old and one subscription made since by hand: named, not taken, not changed', async () => {
    // The journal as a killed invocation left it an hour ago: the list before its POST, no outcome.
    await h.onEvent(h.event(SUB, 'Create', { ...ORDERS, Name: 'warm-up' }, { LogicalResourceId: 'WarmUp' }));
    const journal = dynamoJournal({ create: true, table: h.journalTable, endpoint: h.journal.endpoint, sleep: async () => undefined });
    const before = h.state().subscriptions.filter((s: any) => s.product === 3001).map((s: any) => String(s.id));
    const hourAgo = new Date(Date.now() - 3600_000).toISOString().replace(/\.\d{3}Z$/, 'Z');
    await journal.create('HandlerTest/Resource', 'recording', { product: 3001, identity: '362', attempt: { product: 3001, before, startedAt: hourAgo } });
    const byHand = await h.subscribe(3001, 362, { marketplace_id: 'ATVPDKIKX0DER' });
    const was = JSON.stringify(subOf(byHand));
    await h.clearRequests();
    const reason = await h.fails(h.event(SUB, 'Create', ORDERS));
    expect(reason).toContain(`subscription ${byHand} of the product appeared since`);
    expect(reason).toContain('--keep-candidates');
    expect(await h.changingRequests()).toEqual([]);
    expect(JSON.stringify(subOf(byHand))).toBe(was);
    expect(await h.journalOwner('sub', byHand)).toBeUndefined();
    // The rollback Delete of that failed Create finishes and changes nothing either.
    await h.onEvent(h.event(SUB, 'Delete', ORDERS, { PhysicalResourceId: 'HandlerTest-Resource-1A2B' }));
    expect(await h.changingRequests()).toEqual([]);
    expect((await h.journalRecords()).map((x) => x.state)).toEqual(['recording']);
  });
});

describe('one adopter per record', () => {
  test('a legacy pipeline another resource manages is refused before any change', async () => {
    const base = LEGACY_8601;
    await h.onEvent(h.event(LEGACY, 'Create', base, { LogicalResourceId: 'First' }));
    await h.clearRequests();
    expect(await h.fails(h.event(LEGACY, 'Create', { ...base, Retired: 'true' }, { LogicalResourceId: 'Second' })))
      .toContain('is managed by HandlerTest/First');
    expect(await h.changingRequests()).toEqual([]);
    expect(subOf('8601').status).toBe('active');
  });
});

describe('the creates lock', () => {
  test('a lock left by a killed invocation of the same resource does not hold up its next deploy; another resource\'s does', async () => {
    const journal = dynamoJournal({ create: true, table: h.journalTable, endpoint: h.journal.endpoint, sleep: async () => undefined });
    // The service is known to narrow its lists to an identity (learned as test/handler/narrowing.test.ts shows).
    await journal.setFact('sub#3001', `narrows#${h.emu.url}`, 'yes');
    await h.onEvent(h.event(SUB, 'Create', { ...ORDERS, Name: 'warm-up' }, { LogicalResourceId: 'WarmUp' }));
    // Killed between taking the lock and recording its attempt (a record that is not resumed).
    // (The lock of its identity's creates: its lists are narrowed to identity 362.)
    expect(await journal.lock('sub#3001', 'HandlerTest/Resource|2026-11-24T00:00:00.000Z#dead', '2000-01-01T00:00:00.000Z', '362')).toBeUndefined();
    const r = await h.onEvent(h.event(SUB, 'Create', ORDERS));
    expect(subOf(r.PhysicalResourceId).status).toBe('active');
    // Another resource's live lock is waited for (and, with the lock never released, refused near the deadline).
    expect(await journal.lock('sub#3001', 'HandlerTest/Other|2026-11-24T00:00:00.000Z#live', '2000-01-01T00:00:00.000Z', '362')).toBeUndefined();
    const reason = await h.onEvent(h.event(SUB, 'Create', ORDERS, { LogicalResourceId: 'Third' }), 70_000).then(() => 'created', (e: Error) => e.message);
    expect(reason).toContain('another product-3001 subscription create (HandlerTest/Other');
  });
});

describe('the list before a create is one identity\'s', () => {
  test('a pipeline create in an account with 250 other identities\' pipelines lists its identity\'s subscriptions only (one page)', async () => {
    const others = Array.from({ length: 250 }, (_, i) => ({
      id: 50_000 + i,
      account: 1001,
      user: 2001,
      product: 107,
      status: 'active',
      remote_identity: 70_000 + i,
      product_parameters: { remote_identity_id: String(70_000 + i) },
    }));
    await h.admin('POST', '/fixtures', { subscriptions: others });
    await h.clearRequests();
    const { PhysicalResourceId: id } = await h.onEvent(h.event(PIPE, 'Create', SELLER_PIPELINE));
    const lists = (await h.requests()).filter((r) => r.method === 'GET' && r.path === '/v2/sub');
    // Then, once per journal and service, the lists that learn whether the service narrows its lists to an identity
    // (src/handler/narrowing.ts): the identity's shows the pipeline's new subscription, that of identity 0 does not.
    expect(lists.map((r) => r.query)).toEqual([
      expect.objectContaining({ product: '107', remote_identity: '362' }),
      expect.objectContaining({ product: '107', remote_identity: '362' }),
      expect.objectContaining({ product: '107', remote_identity: '0' }),
    ]);
    const rec = (await h.journalRecords()).find((r) => r.physicalId === id)!;
    expect(rec.state).toBe('active');
    // A lost answer is resolved against the same filter: the create's own subscription is found, nothing else is taken.
    await h.reset({ keepEmulator: true });
    await h.admin('POST', '/faults', { method: 'POST', pathPrefix: '/v2/sub', dropResponse: true, count: 1 });
    const again = await h.onEvent(h.event(PIPE, 'Create', { ...SELLER_PIPELINE, RemoteIdentityId: '363', AccountType: 'vendor', NotificationTypes: ['ITEM_SALES_EVENT_CHANGE'] },
      { LogicalResourceId: 'Vendor' }));
    expect(h.state().subscriptions.find((s: any) => String(s.id) === again.PhysicalResourceId).remote_identity).toBe(363);
    expect(h.state().subscriptions.filter((s: any) => s.product === 107 && s.status === 'active')).toHaveLength(252);
  });
});
