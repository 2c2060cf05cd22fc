import { HandlerHarness, useHandlerHarness } from './helpers';
import { CfnEvent } from '../../src/handler';
import { ResourceTypes } from '../../src/kinds';

const T = ResourceTypes.PRODUCT_ORDER_JOBS;

let h: HandlerHarness;
let subId: string;
useHandlerHarness((started) => {
  h = started;
}, { resetEach: true });
beforeEach(async () => {
  subId = await h.subscribe(3001, 362, { marketplace_id: 'ATVPDKIKX0DER' });
});

function orderIds(n: number, from = 0): string[] {
  return Array.from({ length: n }, (_, i) => `123-${String(1000000 + from + i)}-${String(7000000 + from + i)}`);
}

const secondaries = (): any[] => h.state().jobs.filter((j: any) => !j.is_primary && String(j.subscription_id) === subId);

function minuteOfCron(cron: string): number {
  const [m, hh, d, mon] = cron.split(' ').map(Number);
  return Date.UTC(new Date().getUTCFullYear(), mon - 1, d, hh, m) / 60_000;
}

describe('Custom::DpiProductOrderJobs', () => {
  test('250 order IDs -> 3 batches of <= 100, 15 minutes apart, valid_date_start == valid_date_end', async () => {
    h.slept.length = 0;
    const r = await h.onEvent(h.event(T, 'Create', { SubscriptionId: subId, OrderIds: orderIds(250) }));
    const primary = h.state().jobs.find((j: any) => j.is_primary && String(j.subscription_id) === subId);
    expect(r.PhysicalResourceId).toBe(primary.id);
    const jobs = secondaries();
    expect(jobs.map((j) => JSON.parse(j.extra_context).order_ids.length)).toEqual([100, 100, 50]);
    expect(jobs.every((j) => j.parent_job_id === primary.id && j.stage_id === 1000 && j.valid_date_start === j.valid_date_end)).toBe(true);
    const minutes = jobs.map((j) => minuteOfCron(j.schedule));
    expect([minutes[1] - minutes[0], minutes[2] - minutes[1]]).toEqual([15, 15]);
    expect(r.Data).toEqual({ PrimaryJobId: primary.id, JobIds: jobs.map((j) => j.id).join(','), BatchCount: '3' });
    // A short pause between requests (fake sleep here).
    expect(h.slept.filter((x) => x === 1000)).toHaveLength(2);
    // The journal keeps every submitted order ID under the primary job.
    const recs = await h.journalRecords();
    expect(recs).toHaveLength(1);
    expect(recs[0]).toMatchObject({ state: 'active', physicalId: primary.id, doc: { subscriptionId: subId, stageId: 1000, primaryJobId: primary.id } });
    expect([...recs[0].doc.submitted].sort()).toEqual(orderIds(250).sort());
    expect(recs[0].doc.jobIds).toEqual(jobs.map((j) => j.id));
    expect(recs[0].doc.inFlight).toBeUndefined();
  });

  test('a rollback Update with fewer order IDs submits nothing; the rolled-forward IDs are not sent again', async () => {
    const first = orderIds(120);
    const more = [...first, ...orderIds(30, 500)];
    const r = await h.onEvent(h.event(T, 'Create', { SubscriptionId: subId, OrderIds: first }));
    const ev = (ids: string[], was: string[]): CfnEvent => h.event(T, 'Update', { SubscriptionId: subId, OrderIds: ids }, {
      PhysicalResourceId: r.PhysicalResourceId, OldResourceProperties: { Connection: h.connection, SubscriptionId: subId, OrderIds: was },
    });
    expect((await h.onEvent(ev(more, first))).Data!.BatchCount).toBe('1');
    expect(secondaries()).toHaveLength(3);
    // UPDATE_ROLLBACK: back to the first 120.
    await h.clearRequests();
    const back = await h.onEvent(ev(first, more));
    expect(back.PhysicalResourceId).toBe(r.PhysicalResourceId);
    expect(back.Data!.BatchCount).toBe('0');
    expect(await h.changingRequests()).toEqual([]);
    // Deploying the larger set again: all 150 were submitted already.
    expect((await h.onEvent(ev(more, first))).Data!.BatchCount).toBe('0');
    expect(secondaries()).toHaveLength(3);
    expect(secondaries().flatMap((j) => JSON.parse(j.extra_context).order_ids).sort()).toEqual([...more].sort());
  });

  test('a batch whose response was lost is found under the primary job (the one new, unclaimed job): not sent twice, the Create completes', async () => {
    await h.admin('POST', '/faults', { method: 'POST', pathPrefix: '/service/jobs/jobs/', dropResponse: true, count: 1 });
    const ids = orderIds(150);
    const r = await h.onEvent(h.event(T, 'Create', { SubscriptionId: subId, OrderIds: ids }));
    expect(r.Data!.BatchCount).toBe('2');
    const sent = secondaries().flatMap((j) => JSON.parse(j.extra_context).order_ids as string[]);
    expect(sent).toHaveLength(150);
    expect(new Set(sent)).toEqual(new Set(ids));
    const rec = (await h.journalRecords())[0];
    expect([...rec.doc.submitted].sort()).toEqual([...ids].sort());
    expect(rec.doc.inFlight).toBeUndefined();
    expect(rec.doc.jobIds).toEqual(secondaries().map((j) => j.id));
    for (const id of rec.doc.jobIds) expect(await h.journalOwner('job', id)).toBe('HandlerTest/Resource');
    expect(h.logs.some((l) => l.includes('a batch had no clear outcome'))).toBe(true);
  });

  test('a batch that was dropped before the service took it is sent once more; a second failure ends the Create, and the retry sends only what is missing', async () => {
    await h.admin('POST', '/faults', { method: 'POST', pathPrefix: '/service/jobs/jobs/', drop: true, count: 2 });
    const ids = orderIds(150);
    const reason = await h.fails(h.event(T, 'Create', { SubscriptionId: subId, OrderIds: ids }));
    expect(reason).toContain('batch 1 of 2 was rejected');
    expect(secondaries()).toHaveLength(0);
    await h.onEvent(h.event(T, 'Create', { SubscriptionId: subId, OrderIds: ids }));
    const sent = secondaries().flatMap((j) => JSON.parse(j.extra_context).order_ids as string[]);
    expect(sent).toHaveLength(150);
  });

  test('Update submits only the new order IDs; a repeated delivery submits nothing twice; Delete makes no call', async () => {
    const first = orderIds(120);
    const r = await h.onEvent(h.event(T, 'Create', { SubscriptionId: subId, OrderIds: first, StageId: '1001' }));
    await h.onEvent(h.event(T, 'Create', { SubscriptionId: subId, OrderIds: first, StageId: '1001' }));
    expect(secondaries()).toHaveLength(2);
    await h.clearRequests();
    const next = [...first.slice(10), ...orderIds(5, 500)];
    const u = await h.onEvent(h.event(T, 'Update', { SubscriptionId: subId, OrderIds: next, StageId: '1001' }, {
      PhysicalResourceId: r.PhysicalResourceId, OldResourceProperties: { Connection: h.connection, SubscriptionId: subId, OrderIds: first, StageId: '1001' },
    }));
    expect(u.PhysicalResourceId).toBe(r.PhysicalResourceId);
    expect(u.Data!.BatchCount).toBe('1');
    expect(await h.changingRequests()).toEqual([`POST /service/jobs/jobs/${r.PhysicalResourceId} 201`]);
    const jobs = secondaries();
    expect(JSON.parse(jobs[2].extra_context).order_ids).toEqual(orderIds(5, 500));
    expect(jobs[2].stage_id).toBe(1001);
    await h.clearRequests();
    await h.onEvent(h.event(T, 'Delete', { SubscriptionId: subId, OrderIds: next }, { PhysicalResourceId: r.PhysicalResourceId }));
    expect(await h.requests()).toEqual([]);
  });

  test('a product without a primary job fails clearly', async () => {
    const ads = await h.subscribe(3002, 365, { profile_id: '1' });
    const reason = await h.fails(h.event(T, 'Create', { SubscriptionId: ads, OrderIds: orderIds(3) }));
    expect(reason).toContain(`subscription ${ads} has no primary job: the product does not initialize jobs`);
  });

  test('9,000 order IDs -> 90 batches; Data stays under 4 KB', async () => {
    const r = await h.onEvent(h.event(T, 'Create', { SubscriptionId: subId, OrderIds: orderIds(9000) }));
    expect(Buffer.byteLength(JSON.stringify(r.Data))).toBeLessThan(4096);
    expect(r.Data!.BatchCount).toBe('90');
    expect(r.Data!.JobIds.split(',')).toHaveLength(90);
  });
});
