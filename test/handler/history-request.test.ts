import { daysAgo, HandlerHarness, TEST_READS, useHandlerHarness } from './helpers';
import { ResourceTypes } from '../../src/kinds';

const T = ResourceTypes.HISTORY_REQUEST;

let h: HandlerHarness;
let subId: string;
useHandlerHarness((started) => {
  h = started;
}, { resetEach: true });
beforeEach(async () => {
  h.onSleep = undefined;
  subId = await h.subscribe(3001, 362, { marketplace_id: 'ATVPDKIKX0DER' });
});

function props(extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { SubscriptionId: subId, StartDate: daysAgo(10), EndDate: daysAgo(5), StageId: '1000', WaitForCompletion: 'false', TimeoutSeconds: '600', ...extra };
}
const hist = (id: string): any => h.state().history.find((x: any) => x.id === id);

describe('Custom::DpiHistoryRequest', () => {
  test('create returns the history transaction ID; WaitForCompletion false completes at once', async () => {
    const r = await h.onEvent(h.event(T, 'Create', props()));
    expect(r.PhysicalResourceId).toMatch(/^(h-\d+|\d+)$/);
    expect(r.Data).toMatchObject({ HistoryTransactionId: r.PhysicalResourceId, Status: 'pending' });
    expect(hist(r.PhysicalResourceId)).toMatchObject({
      subscription_id: Number(subId), start_date: daysAgo(10), end_date: daysAgo(5), stage_id: 1000,
    });
    await h.clearRequests();
    expect(await h.isComplete({ ...h.event(T, 'Create', props()), PhysicalResourceId: r.PhysicalResourceId, Data: r.Data })).toEqual({ IsComplete: true });
    expect(await h.requests()).toEqual([]);
    // The journal records the request under the resource and claims its ID.
    expect((await h.journalRecords()).map((x) => [x.state, x.physicalId])).toEqual([['active', r.PhysicalResourceId]]);
    expect(await h.journalOwner('history', r.PhysicalResourceId)).toBe('HandlerTest/Resource');
    // A repeated delivery of the same Create finds the request in the journal: no second POST.
    const again = await h.onEvent(h.event(T, 'Create', props()));
    expect(again.PhysicalResourceId).toBe(r.PhysicalResourceId);
    expect(await h.changingRequests()).toEqual([]);
    expect(h.state().history).toHaveLength(1);
    expect(await h.journalRecords()).toHaveLength(1);
  });

  test('a POST applied but its response lost: the request is found among the subscription\'s requests (new and unclaimed), not made twice', async () => {
    await h.admin('POST', '/faults', { method: 'POST', pathPrefix: '/service/history/', dropResponse: true, count: 1 });
    const r = await h.onEvent(h.event(T, 'Create', props()));
    expect(h.state().history).toHaveLength(1);
    expect(r.PhysicalResourceId).toBe(String(h.state().history[0].id));
    expect(await h.journalOwner('history', r.PhysicalResourceId)).toBe('HandlerTest/Resource');
    expect((await h.journalRecords()).map((x) => [x.state, x.physicalId])).toEqual([['active', r.PhysicalResourceId]]);
  });

  test('a POST dropped before the service took it is sent once more after the lookup finds nothing', async () => {
    await h.admin('POST', '/faults', { method: 'POST', pathPrefix: '/service/history/', drop: true, count: 1 });
    const r = await h.onEvent(h.event(T, 'Create', props()));
    expect(h.state().history.map((x: any) => String(x.id))).toEqual([r.PhysicalResourceId]);
  });

  test('a request another resource claims, or one that existed before the POST, is never taken for a lost response', async () => {
    const other = await h.onEvent(h.event(T, 'Create', props({ StartDate: daysAgo(20), EndDate: daysAgo(15) }), { LogicalResourceId: 'Other' }));
    await h.admin('POST', '/faults', { method: 'POST', pathPrefix: '/service/history/', drop: true, count: 2 });
    const reason = await h.fails(h.event(T, 'Create', props()));
    expect(reason).toContain('had no clear outcome twice');
    expect(h.state().history.map((x: any) => String(x.id))).toEqual([other.PhysicalResourceId]);
  });

  test('Delete cancels and closes the journal record: a later Create with the same dates requests anew', async () => {
    const r = await h.onEvent(h.event(T, 'Create', props()));
    await h.onEvent(h.event(T, 'Delete', props(), { PhysicalResourceId: r.PhysicalResourceId }));
    expect(hist(r.PhysicalResourceId).status).toBe('cancelled');
    const again = await h.onEvent(h.event(T, 'Create', props()));
    expect(again.PhysicalResourceId).not.toBe(r.PhysicalResourceId);
    expect(hist(again.PhysicalResourceId).status).toBe('pending');
  });

  test('ending a subscription cancels its open history requests (one whose Create failed without a clear outcome is not left pending)', async () => {
    await h.admin('POST', '/faults', { method: 'POST', pathPrefix: '/service/history/', dropResponse: true, count: 1 });
    await h.admin('POST', '/faults', { method: 'GET', pathPrefix: '/service/history/production/history/status/', status: 403, count: 1, skip: 1 });
    await h.fails(h.event(T, 'Create', props()));
    expect(h.state().history.map((x: any) => x.status)).toEqual(['pending']);
    // The subscription is the stack's (its resource's claim).
    await h.seedClaim('sub', subId, 'HandlerTest/Orders');
    await h.onEvent(h.event(ResourceTypes.SUBSCRIPTION, 'Delete', {
      ProductId: '3001', RemoteIdentityId: '362', Status: 'active', OnDelete: 'invalid',
    }, { LogicalResourceId: 'Orders', PhysicalResourceId: subId }));
    expect(h.state().history.map((x: any) => x.status)).toEqual(['cancelled']);
  });

  test('the journal is per resource: the same request under another logical ID is a new request', async () => {
    const a = await h.onEvent(h.event(T, 'Create', props()));
    const b = await h.onEvent(h.event(T, 'Create', props(), { LogicalResourceId: 'Other' }));
    expect(b.PhysicalResourceId).not.toBe(a.PhysicalResourceId);
    expect(h.state().history).toHaveLength(2);
    expect(await h.journalOwner('history', b.PhysicalResourceId)).toBe('HandlerTest/Other');
  });

  test('validation against the product card (ProductId given) fails listing the problems, before any create', async () => {
    const reason = await h.fails(h.event(T, 'Create', props({ StartDate: daysAgo(50), EndDate: daysAgo(1), ProductId: '3001' })));
    expect(reason).toContain('at most 30 day(s)');
    expect((await h.changingRequests()).filter((x) => x.includes('/history'))).toEqual([]);
  });

  test('the product of a subscription made by a Subscription resource comes from the journal (reads do not show it)', async () => {
    const sub = await h.onEvent(h.event(ResourceTypes.SUBSCRIPTION, 'Create', {
      ProductId: '3001', RemoteIdentityId: '362', ProductParameters: { marketplace_id: 'ATVPDKIKX0DER' }, Status: 'active', OnDelete: 'invalid',
    }, { LogicalResourceId: 'Orders' }));
    await h.clearRequests();
    const from = h.logs.length;
    const reason = await h.fails(h.event(T, 'Create', props({ SubscriptionId: sub.PhysicalResourceId, StartDate: daysAgo(50), EndDate: daysAgo(1) })));
    expect(reason).toContain('at most 30 day(s)');
    expect((await h.requests()).map((x) => x.path)).toContain('/service/product-cards/card/3001');
    expect((await h.changingRequests()).filter((x) => x.includes('/history'))).toEqual([]);
    expect(h.logs.slice(from).some((l) => l.includes('the subscription\'s product is not known'))).toBe(false);
    // The Subscription resource's claim is what leads there.
    expect(await h.journalOwner('sub', sub.PhysicalResourceId)).toBe('HandlerTest/Orders');
  });

  test('ProductId in the request wins over the journal and the reads', async () => {
    // Product 3002's card allows other limits than 3001's: the card read follows ProductId.
    await h.fails(h.event(T, 'Create', props({ StartDate: daysAgo(50), EndDate: daysAgo(1), ProductId: '3002' })));
    const cards = (await h.requests()).map((x) => x.path).filter((x) => x.startsWith('/service/product-cards/card/'));
    expect(cards).toEqual(['/service/product-cards/card/3002']);
  });

  test('an unknown product: the check is skipped with a warning and the service\'s own answer is reported', async () => {
    const from = h.logs.length;
    const reason = await h.fails(h.event(T, 'Create', props({ StartDate: daysAgo(50), EndDate: daysAgo(1) })));
    const warned = h.logs.slice(from).some((l) => l.includes('the subscription\'s product is not known'));
    // Minimal reads show no product: the check is skipped; vendor reads show it (used as a last resort).
    expect(warned).toBe(TEST_READS === 'minimal');
    expect(reason).toContain(warned ? 'the service rejected the history request' : 'at most 30 day(s)');
    expect(h.logs.some((l) => l.includes('/service/product-cards/card/undefined'))).toBe(false);
  });

  test('WaitForCompletion: isComplete polls until completed', async () => {
    const ev = h.event(T, 'Create', props({ WaitForCompletion: 'true' }));
    const r = await h.onEvent(ev);
    const complete = { ...ev, PhysicalResourceId: r.PhysicalResourceId, Data: r.Data };
    expect(await h.isComplete(complete)).toEqual({ IsComplete: false });
    await h.admin('POST', '/clock', { advance: 400 });
    expect(await h.isComplete(complete)).toEqual({ IsComplete: true, Data: { HistoryTransactionId: r.PhysicalResourceId, Status: 'completed' } });
  });

  test('WaitForCompletion: a failed request fails the deploy with the reason; a timeout fails too', async () => {
    await h.admin('POST', '/fixtures', { failingHistorySubscriptions: [Number(subId)] });
    const ev = h.event(T, 'Create', props({ WaitForCompletion: 'true' }));
    const r = await h.onEvent(ev);
    const complete = { ...ev, PhysicalResourceId: r.PhysicalResourceId, Data: r.Data };
    await h.admin('POST', '/clock', { advance: 400 });
    // The reason is the service's error message where the read shows it (the spec shows only `status`).
    await expect(h.isComplete(complete)).rejects.toThrow(`history request ${r.PhysicalResourceId} failed: `);

    const ev2 = h.event(T, 'Create', props({ WaitForCompletion: 'true', TimeoutSeconds: '60', StartDate: daysAgo(4), EndDate: daysAgo(3) }));
    const r2 = await h.onEvent(ev2);
    const old = { ...r2.Data, StartedAt: new Date(Date.now() - 120_000).toISOString() };
    await expect(h.isComplete({ ...ev2, PhysicalResourceId: r2.PhysicalResourceId, Data: old })).rejects.toThrow('still pending after 60 s');
  });

  test('ceiling reached: onEvent waits (polling) until capacity is free, then creates', async () => {
    await h.admin('POST', '/fixtures', { historyMaxRequests: 1 });
    const first = await h.onEvent(h.event(T, 'Create', props(), { LogicalResourceId: 'First' }));
    h.slept.length = 0;
    // While onEvent polls, the emulator clock moves on: the first request completes.
    h.onSleep = async (ms) => {
      await h.admin('POST', '/clock', { advance: ms / 1000 * 10 });
    };
    const second = await h.onEvent(h.event(T, 'Create', props({ StartDate: daysAgo(3), EndDate: daysAgo(2) }), { LogicalResourceId: 'Second' }));
    expect(second.PhysicalResourceId).not.toBe(first.PhysicalResourceId);
    expect(h.slept.filter((x) => x === 20_000).length).toBeGreaterThanOrEqual(1);
    const posts = (await h.requests()).filter((r) => r.method === 'POST' && r.path === `/service/history/production/history/${subId}`);
    expect(posts.map((p) => p.status)).toEqual([201, ...h.slept.filter((x) => x === 20_000).map(() => 409), 201]);
    expect(hist(first.PhysicalResourceId).status).toBe('completed');
  });

  test('ceiling still reached after the timeout: a clear failure', async () => {
    await h.admin('POST', '/fixtures', { historyMaxRequests: 1 });
    await h.onEvent(h.event(T, 'Create', props(), { LogicalResourceId: 'First' }));
    const reason = await h.fails(h.event(T, 'Create', props({ StartDate: daysAgo(3), EndDate: daysAgo(2), TimeoutSeconds: '60' }), { LogicalResourceId: 'Second' }));
    expect(reason).toMatch(/^history request ceiling \(1\) still reached after \d+ s; raise timeout or cancel other requests$/);
    expect(h.state().history).toHaveLength(1);
  });

  test('Update: dates change -> new request; WaitForCompletion/TimeoutSeconds change -> no changing call', async () => {
    const a = await h.onEvent(h.event(T, 'Create', props()));
    await h.clearRequests();
    const same = await h.onEvent(h.event(T, 'Update', props({ WaitForCompletion: 'true', TimeoutSeconds: '900' }),
      { PhysicalResourceId: a.PhysicalResourceId, OldResourceProperties: { Connection: h.connection, ...props() } }));
    expect(same).toEqual({ PhysicalResourceId: a.PhysicalResourceId, Data: { HistoryTransactionId: a.PhysicalResourceId, Status: 'pending' } });
    expect(await h.changingRequests()).toEqual([]);
    const b = await h.onEvent(h.event(T, 'Update', props({ StartDate: daysAgo(8) }),
      { PhysicalResourceId: a.PhysicalResourceId, OldResourceProperties: { Connection: h.connection, ...props() } }));
    expect(b.PhysicalResourceId).not.toBe(a.PhysicalResourceId);
    expect((await h.journalRecords()).map((x) => x.physicalId).sort()).toEqual([a.PhysicalResourceId, b.PhysicalResourceId].sort());
  });

  test('Delete cancels a pending request; finished, unknown and placeholder IDs succeed', async () => {
    const a = await h.onEvent(h.event(T, 'Create', props()));
    await h.onEvent(h.event(T, 'Delete', props(), { PhysicalResourceId: a.PhysicalResourceId }));
    expect(hist(a.PhysicalResourceId).status).toBe('cancelled');
    await h.clearRequests();
    for (const id of [a.PhysicalResourceId, 'h-9999', 'pending:abc:Resource', '']) {
      await h.onEvent(h.event(T, 'Delete', props(), { PhysicalResourceId: id }));
    }
    expect(await h.changingRequests()).toEqual([]);
  });
});
