import { createSub, Harness, ORDERS_SUB, useHarness } from './helpers';

let h: Harness;
let sid: number;
const T0 = Date.parse('2026-06-15T12:00:00Z') / 1000;
const H = '/service/history/production/history';
useHarness((started) => {
  h = started;
}, { now: T0, tokenTtlSeconds: 30 * 86400 }, { reset: true, now: T0 });
beforeEach(async () => {
  sid = await createSub(h, ORDERS_SUB);
});

const create = (attrs: Record<string, unknown>, s = sid) => h.api('POST', `${H}/${s}`, { data: { type: 'HistoryTransaction', attributes: attrs } });
const cancel = (path: string, id = 'x') => h.api('PATCH', path, { data: { type: 'HistoryTransaction', id, attributes: { status: 'cancelled' } } });
const RANGE = { start_date: '2026-06-01', end_date: '2026-06-10' };

describe('create', () => {
  test('201 pending record, readable, listed by subscription', async () => {
    const r = await create({ ...RANGE, stage_id: 1000 });
    expect(r.status).toBe(201);
    // Minimal reads: id and status only.
    expect(r.body.data).toEqual({ type: 'HistoryTransaction', id: expect.any(String), attributes: { status: 'pending' } });
    const id = r.body.data.id;
    expect((await h.state()).history.find((x: any) => x.id === id)).toMatchObject({ subscription_id: sid, status: 'pending', stage_id: 1000, start_date: '2026-06-01' });
    expect((await h.api('GET', `${H}/${id}`)).body.data.id).toBe(id);
    expect((await h.api('GET', `${H}/status/${sid}`)).body.data.map((x: any) => x.id)).toEqual([id]);
    const d = await create({ dates: ['2026-06-03', '2026-06-01'] });
    expect(d.status).toBe(201);
    expect((await h.state()).history.find((x: any) => x.id === d.body.data.id).dates).toEqual(['2026-06-01', '2026-06-03']);
  });

  test.each([
    ['no dates', {}, /dates/],
    ['start without end', { start_date: '2026-06-01' }, /start_date and end_date/],
    ['dates and range', { ...RANGE, dates: ['2026-06-01'] }, /not both/],
    ['bad date', { start_date: '2026-02-30', end_date: '2026-03-01' }, /YYYY-MM-DD/],
    ['inverted range', { start_date: '2026-06-10', end_date: '2026-06-01' }, /after/],
    ['future date', { start_date: '2026-06-10', end_date: '2026-06-20' }, /future/],
    ['too many days for the stage', { start_date: '2026-05-01', end_date: '2026-06-10', stage_id: 1001 }, /at most 14 days/],
    ['too old', { start_date: '2023-01-01', end_date: '2023-01-02' }, /maximum request age/],
    ['unknown stage', { ...RANGE, stage_id: 1500 }, /stage_id 1500/],
    ['foreign product_id', { ...RANGE, product_id: 3002 }, /product_id/],
    ['bad start_time', { ...RANGE, start_time: '2026-06-15T10:00' }, /start_time/],
  ])('400: %s', async (_n, attrs, msg) => {
    const r = await create(attrs);
    expect(r.status).toBe(400);
    expect(r.body.errors.map((e: any) => e.detail).join(' | ')).toMatch(msg);
  });

  test('products without history settings and inactive subscriptions are refused', async () => {
    const st = await createSub(h, { product: 4001 });
    expect((await create(RANGE, st)).status).toBe(400);
    await h.api('PATCH', `/v2/sub/${sid}`, { data: { type: 'Subscription', id: String(sid), attributes: { status: 'paused' } } });
    expect((await create(RANGE)).status).toBe(400);
  });

  test('ownership: 403 for another account, 404 unknown', async () => {
    expect((await create(RANGE, 8701)).status).toBe(403);
    expect((await create(RANGE, 99999)).status).toBe(404);
    const id = (await create(RANGE)).body.data.id;
    expect((await h.other('GET', `${H}/${id}`)).status).toBe(403);
    expect((await h.api('GET', `${H}/h-999`)).status).toBe(404);
  });

  test('the active-request ceiling (per account) -> 409 until one completes', async () => {
    expect((await h.api('GET', `${H}/meta/max-request`)).body).toEqual({ data: { type: 'HistoryMaxRequest', attributes: { max_request: 3 } } });
    for (let i = 0; i < 3; i++) expect((await create(RANGE)).status).toBe(201);
    const r = await create(RANGE);
    expect(r.status).toBe(409);
    expect(r.body.errors[0].detail).toMatch(/ceiling of 3/);
    await h.admin('POST', '/clock', { advance: 360 });
    expect((await create(RANGE)).status).toBe(201);
    await h.admin('POST', '/fixtures', { historyMaxRequests: 5 });
    expect((await h.api('GET', `${H}/meta/max-request`)).body.data.attributes.max_request).toBe(5);
  });
});

describe('lifecycle', () => {
  test('pending -> processing after 60 s -> completed 300 s later', async () => {
    const id = (await create(RANGE)).body.data.id;
    const status = async () => (await h.api('GET', `${H}/${id}`)).body.data.attributes.status;
    expect(await status()).toBe('pending');
    await h.admin('POST', '/clock', { advance: 60 });
    expect(await status()).toBe('processing');
    await h.admin('POST', '/clock', { advance: 300 });
    expect(await status()).toBe('completed');
  });

  test('start_time delays processing', async () => {
    const id = (await create({ ...RANGE, start_time: '2026-06-15 14:00:00' })).body.data.id;
    await h.admin('POST', '/clock', { advance: 3600 });
    expect((await h.api('GET', `${H}/${id}`)).body.data.attributes.status).toBe('pending');
    await h.admin('POST', '/clock', { now: Date.parse('2026-06-15T14:01:00Z') / 1000 });
    expect((await h.api('GET', `${H}/${id}`)).body.data.attributes.status).toBe('processing');
  });

  test('failing subscriptions end failed with an error message', async () => {
    await h.admin('POST', '/fixtures', { failingHistorySubscriptions: [sid] });
    const id = (await create(RANGE)).body.data.id;
    await h.admin('POST', '/clock', { advance: 400 });
    expect((await h.api('GET', `${H}/${id}`)).body.data.attributes).toEqual({ status: 'failed' });
    expect((await h.state()).history.find((x: any) => x.id === id).error_message).toMatch(/failed/);
  });
});

describe('cancel', () => {
  test('PATCH H/{id} and PATCH H/status/{id} cancel one; terminal states cannot be cancelled', async () => {
    const a = (await create(RANGE)).body.data.id;
    const b = (await create(RANGE)).body.data.id;
    const r = await cancel(`${H}/${a}`, a);
    expect(r.status).toBe(200);
    expect(r.body.data.attributes.status).toBe('cancelled');
    await h.admin('POST', '/clock', { advance: 60 });
    const r2 = await cancel(`${H}/status/${b}`, b);
    expect(r2.body.data).toMatchObject({ id: b, attributes: { status: 'cancelled' } });
    expect((await cancel(`${H}/${a}`, a)).status).toBe(400);
    const c = (await create(RANGE)).body.data.id;
    await h.admin('POST', '/clock', { advance: 400 });
    expect((await cancel(`${H}/${c}`, c)).status).toBe(400);
  });

  test('PATCH H/status/{subscription_id} cancels all pending or processing of the subscription', async () => {
    const a = (await create(RANGE)).body.data.id;
    await h.admin('POST', '/clock', { advance: 400 });
    const b = (await create(RANGE)).body.data.id;
    const c = (await create(RANGE)).body.data.id;
    const r = await cancel(`${H}/status/${sid}`, String(sid));
    expect(r.status).toBe(200);
    expect(r.body.data.map((x: any) => x.id).sort()).toEqual([b, c].sort());
    const all = (await h.api('GET', `${H}/status/${sid}`)).body.data;
    expect(Object.fromEntries(all.map((x: any) => [x.id, x.attributes.status]))).toEqual({ [a]: 'completed', [b]: 'cancelled', [c]: 'cancelled' });
  });

  test('only status=cancelled is accepted; ownership enforced', async () => {
    const a = (await create(RANGE)).body.data.id;
    expect((await h.api('PATCH', `${H}/${a}`, { data: { id: a, attributes: { status: 'completed' } } })).status).toBe(400);
    expect((await h.other('PATCH', `${H}/${a}`, { data: { id: a, attributes: { status: 'cancelled' } } })).status).toBe(403);
    expect((await cancel(`${H}/status/8701`)).status).toBe(403);
    expect((await cancel(`${H}/status/nothing`)).status).toBe(404);
  });
});
