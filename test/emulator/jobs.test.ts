import { createSub, Harness, ORDERS_SUB, useHarness } from './helpers';

let h: Harness;
let sid: number;
let primary: string;
const T0 = Date.parse('2026-06-15T12:00:00Z') / 1000;
useHarness((started) => {
  h = started;
}, { now: T0, tokenTtlSeconds: 30 * 86400 }, { reset: true, now: T0 });
beforeEach(async () => {
  sid = await createSub(h, ORDERS_SUB);
  const jobs = (await h.api('GET', `/service/jobs/jobs?subscription_ids=${sid}`)).body.data;
  primary = jobs.find((j: any) => j.attributes.is_primary).id;
});

const orders = (n: number) => Array.from({ length: n }, (_, i) => `111-${String(1000000 + i)}-${String(2000000 + i)}`);
const job = (attrs: Record<string, unknown>) => ({
  data: {
    type: 'Job',
    attributes: {
      is_primary: false,
      valid_date_start: '2026-06-16',
      valid_date_end: '2026-06-16',
      stage_id: 1000,
      extra_context: JSON.stringify({ order_ids: orders(3) }),
      request_start: 1,
      request_end: 0,
      schedule: '15 2 16 6 *',
      ...attrs,
    },
  },
});

describe('jobs', () => {
  test('a primary job exists for initialize_job products only', async () => {
    const r = await h.api('GET', `/service/jobs/jobs?subscription_ids=${sid}`);
    expect(r.body.data).toHaveLength(1);
    // Minimal reads: a job listing shows id and is_primary (what the spec shows).
    expect(r.body.data).toEqual([{ type: 'Job', id: primary, attributes: { is_primary: true } }]);
    expect((await h.state()).jobs.find((j: any) => j.id === primary)).toMatchObject({ subscription_id: sid, is_primary: true });
    const ads = await createSub(h, { product: 3002, remote_identity: 365, product_parameters: { profile_id: '1' } });
    expect((await h.api('GET', `/service/jobs/jobs?subscription_ids=${ads}`)).body.data).toHaveLength(0);
    expect((await h.api('GET', `/service/jobs/jobs?subscription_ids=${sid},${ads}`)).body.data).toHaveLength(1);
  });

  test('create secondary jobs; list with stage_id', async () => {
    const r = await h.api('POST', `/service/jobs/jobs/${primary}`, job({}));
    expect(r.status).toBe(201);
    expect(r.body.data).toEqual({ type: 'Job', id: expect.any(String), attributes: { is_primary: false } });
    const rec = (await h.state()).jobs.find((j: any) => j.id === r.body.data.id);
    expect(rec).toMatchObject({ is_primary: false, parent_job_id: primary, subscription_id: sid, stage_id: 1000, schedule: '15 2 16 6 *' });
    const second = (await h.api('POST', `/service/jobs/jobs/${primary}`, job({ stage_id: 1001 }))).body.data.id;
    const l = (await h.api('GET', `/service/jobs/jobs?subscription_ids=${sid}&stage_id=1001`)).body.data;
    expect(l.map((j: any) => [j.id, j.attributes.is_primary])).toEqual([[primary, true], [second, false]]);
    expect((await h.api('POST', `/service/jobs/jobs/${primary}`, job({ extra_context: JSON.stringify({ order_ids: orders(100) }) }))).status).toBe(201);
  });

  test.each([
    ['101 order IDs', { extra_context: JSON.stringify({ order_ids: orders(101) }) }, /at most 100/],
    ['bad order ID', { extra_context: JSON.stringify({ order_ids: ['123-456'] }) }, /123-456/],
    ['no order IDs', { extra_context: JSON.stringify({ order_ids: [] }) }, /order_ids/],
    ['extra_context not JSON', { extra_context: 'nope' }, /extra_context/],
    ['different dates', { valid_date_end: '2026-06-17' }, /equal/],
    ['past date', { valid_date_start: '2026-06-01', valid_date_end: '2026-06-01' }, /today/],
    ['bad schedule', { schedule: 'every day' }, /cron/],
    ['is_primary true', { is_primary: true }, /is_primary/],
    ['legacy stage', { stage_id: 10 }, /stage_id/],
  ])('400: %s', async (_n, attrs, msg) => {
    const r = await h.api('POST', `/service/jobs/jobs/${primary}`, job(attrs));
    expect(r.status).toBe(400);
    expect(r.body.errors[0].detail).toMatch(msg);
  });

  test('parent must be a primary job of the account', async () => {
    const sec = (await h.api('POST', `/service/jobs/jobs/${primary}`, job({}))).body.data.id;
    expect((await h.api('POST', `/service/jobs/jobs/${sec}`, job({}))).status).toBe(400);
    expect((await h.api('POST', '/service/jobs/jobs/j-9999', job({}))).status).toBe(400);
    const foreign = (await h.other('GET', '/service/jobs/jobs?subscription_ids=8701')).body.data[0].id;
    expect((await h.api('POST', `/service/jobs/jobs/${foreign}`, job({}))).status).toBe(400);
  });

  test('listing errors', async () => {
    expect((await h.api('GET', '/service/jobs/jobs?subscription_ids=')).status).toBe(400);
    expect((await h.api('GET', '/service/jobs/jobs?subscription_ids=a,b')).status).toBe(400);
    expect((await h.api('GET', '/service/jobs/jobs?subscription_ids=8701')).status).toBe(403);
  });
});
