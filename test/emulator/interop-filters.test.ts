/**
 * The vendor-documented list filters (written from the vendor's public API documentation; black-box HTTP), in both
 * read modes: subscriptions (`/sub`, `/v2/sub`), remote identities (`/sri`, `/ri`) and storages (`/storages`,
 * `/v2/storages`).
 */
import { createSub, Harness, ORDERS_SUB, useHarness } from './helpers';
import { ReadMode } from '../../src/emulator';

const T0 = Date.parse('2026-06-15T12:00:00Z') / 1000;
/** Tokens outlive the clock moves of a test. */
const TTL = 10 * 86400;
const DAY = 86400;

describe.each(['minimal', 'vendor'] as ReadMode[])("vendor list filters, reads: '%s'", (reads) => {
  let h: Harness;
  useHarness((started) => {
    h = started;
  }, { reads, now: T0, tokenTtlSeconds: TTL }, { reset: true, now: T0 });

  const ids = async (path: string): Promise<string[]> => {
    const r = await h.api('GET', path);
    if (r.status !== 200) throw new Error(`${path}: ${r.status} ${JSON.stringify(r.body)}`);
    return r.body.data.map((x: any) => x.id);
  };
  const patch = (id: number, attributes: Record<string, unknown>) =>
    h.api('PATCH', `/v2/sub/${id}`, { data: { type: 'Subscription', id: String(id), attributes } });

  /** 8601 (fixture, created at T0), a (orders, T0), b (storage product, T0 + 1 day, paused), c (T0 + 2 days, invalid). */
  async function three(): Promise<{ a: string; b: string; c: string }> {
    await h.admin('POST', '/reset'); // the clock is at T0 now: the fixture subscription is created at T0
    const a = await createSub(h, { ...ORDERS_SUB, name: 'alpha' });
    await h.admin('POST', '/clock', { now: T0 + DAY });
    const b = await createSub(h, { product: 4001, name: 'beta', date_start: '2026-03-01T00:00:00Z' });
    expect((await patch(b, { status: 'paused' })).status).toBe(200);
    await h.admin('POST', '/clock', { now: T0 + 2 * DAY });
    const c = await createSub(h, { product: 4001, name: 'gamma' });
    expect((await patch(c, { status: 'invalid' })).status).toBe(200);
    return { a: String(a), b: String(b), c: String(c) };
  }

  test.each(['/sub', '/v2/sub'])('%s: status, status__not, product, storage_group, remote_identity, user, id, name', async (path) => {
    const { a, b, c } = await three();
    expect(await ids(path)).toEqual(['8601', a, b, c]);
    expect(await ids(`${path}?status=paused`)).toEqual([b]);
    expect(await ids(`${path}?status__not=invalid`)).toEqual(['8601', a, b]);
    expect(await ids(`${path}?status__not=invalid&product=4001`)).toEqual([b]);
    expect(await ids(`${path}?storage_group=501`)).toEqual([a]);
    expect(await ids(`${path}?remote_identity=364`)).toEqual(['8601']);
    expect(await ids(`${path}?user=2001&id=${c}`)).toEqual([c]);
    expect(await ids(`${path}?name=beta`)).toEqual([b]);
    expect(await ids(`${path}?account=1001&page_size=2&page=2`)).toEqual([b, c]);
    expect((await h.api('GET', `${path}?product=abc`)).status).toBe(400);
  });

  test.each(['/sub', '/v2/sub'])('%s: time lookups of created_at, modified_at, date_start, invalidated_at', async (path) => {
    const { a, b, c } = await three();
    expect(await ids(`${path}?created_at__gte=2026-06-16T00:00:00`)).toEqual([b, c]);
    expect(await ids(`${path}?created_at__gte=2026-06-16T00:00:00&created_at__lt=2026-06-17`)).toEqual([b]);
    expect(await ids(`${path}?created_at__lte=${encodeURIComponent('2026-06-15 12:00:00')}`)).toEqual(['8601', a]);
    expect(await ids(`${path}?modified_at__gt=2026-06-16T12:00:00Z`)).toEqual([c]);
    expect(await ids(`${path}?date_start__lt=2026-01-01`)).toEqual(['8601']);
    expect(await ids(`${path}?date_start__gte=2026-02-01&date_start__lte=2026-04-01`)).toEqual([b]);
    expect(await ids(`${path}?invalidated_at__gte=2026-01-01`)).toEqual([c]);
    expect((await h.api('GET', `${path}?created_at__gte=yesterday`)).status).toBe(400);
  });

  test('/sub: no account needed; another account is refused (403); the unversioned date_end filter', async () => {
    const id = await createSub(h, { product: 4001 });
    expect((await h.api('PATCH', `/sub/${id}`, { data: { type: 'Subscription', id: String(id), attributes: { date_end: '2027-01-01T00:00:00Z' } } })).status)
      .toBe(200);
    expect(await ids('/sub')).toEqual(['8601', String(id)]);
    expect((await h.api('GET', '/sub?account=1002')).status).toBe(403);
    expect(await ids('/sub?date_end__gte=2026-12-31')).toEqual([String(id)]);
    // v2 has no date_end filter: an unknown parameter there, ignored.
    expect(await ids('/v2/sub?date_end__gte=2026-12-31')).toEqual(['8601', String(id)]);
  });

  test.each(['/sri', '/ri'])('%s: remote_identity_type, invalid_identity, invalidated_at, ordering=-id', async (path) => {
    await h.admin('POST', '/fixtures', { remoteIdentities: [{ id: 366, account: 1001, remote_identity_type_id: 17, invalid_identity: 1 }] });
    expect(await ids(path)).toEqual(['362', '363', '364', '365', '366']);
    expect(await ids(`${path}?remote_identity_type=17`)).toEqual(['362', '364', '366']);
    expect(await ids(`${path}?invalid_identity=1`)).toEqual(['366']);
    expect(await ids(`${path}?invalid_identity=0&remote_identity_type=17`)).toEqual(['362', '364']);
    expect(await ids(`${path}?invalidated_at__gte=2020-01-01T00:00:00`)).toEqual(['366']);
    expect(await ids(`${path}?ordering=-id&page_size=2`)).toEqual(['366', '365']);
    expect((await h.api('GET', `${path}?invalid_identity=maybe`)).status).toBe(400);
  });

  test.each(['/storages', '/v2/storages'])('%s: status, status__not, product', async (path) => {
    await h.admin('POST', '/fixtures', { storages: [{ id: 503, account: 1001, status: 'active', product: 4002 }] });
    expect(await ids(path)).toEqual(['501', '502', '503']);
    expect(await ids(`${path}?status=active`)).toEqual(['501', '503']);
    expect(await ids(`${path}?status__not=active`)).toEqual(['502']);
    expect(await ids(`${path}?status=active&product=4001`)).toEqual(['501']);
  });

  test('/product and /v2/product: is_storage_product, remote_identity_type, active', async () => {
    for (const path of ['/product', '/v2/product']) {
      expect(await ids(`${path}?is_storage_product=1`)).toEqual(['4001']);
      expect(await ids(`${path}?remote_identity_type=17`)).toEqual(['86', '107', '3001']);
      expect(await ids(`${path}?active=0`)).toEqual(['3003']);
    }
  });
});
