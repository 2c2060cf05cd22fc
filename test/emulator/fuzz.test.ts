import { Harness, useHarness } from './helpers';

let h: Harness;
useHarness((started) => {
  h = started;
});

/** Small deterministic PRNG (Park-Miller) so a failure can be replayed with EMULATOR_FUZZ_SEED. */
function rng(seed: number): () => number {
  let a = (Math.abs(Math.floor(seed)) % 2147483646) + 1;
  return () => {
    a = (a * 16807) % 2147483647;
    return (a - 1) / 2147483646;
  };
}

const PATHS = [
  '/auth/api/ref', '/account', '/user', '/sri', '/ri', '/product', '/v2/product', '/v2/product/{n}', '/storages', '/v2/storages',
  '/v2/sub', '/sub', '/sub/{n}', '/v2/sub/{n}', '/service/transactions/tx', '/service/sp/marketplaces/{n}', '/service/sp/sp-id',
  '/service/sp/validate-creds', '/service/sp/validate-asins/{n}', '/service/sp/notifications-unified/list-notification-types',
  '/service/sp/notifications-unified/{n}', '/service/sp/notifications-unified/{n}/{n}', '/service/sp/notifications/list-notification-types',
  '/service/sp/notifications/{n}/{n}', '/service/product-cards/card', '/service/product-cards/card/{n}', '/service/products/product/{n}/payloads',
  '/service/history/production/history/{n}', '/service/history/production/history/status/{n}', '/service/history/production/history/meta/max-request',
  '/service/jobs/jobs', '/service/jobs/jobs/{n}', '/nowhere', '/service', '/%zz', '/v2/sub/../../etc',
];
const METHODS = ['GET', 'POST', 'PATCH', 'DELETE', 'PUT', 'HEAD', 'OPTIONS'];
const IDS = ['362', '363', '364', '365', '372', '8601', '8701', '9001', '-1', '0', 'abc', '99999999999999999999', 'h-1', 'j-1', '%00', ''];
const QUERY_KEYS = ['subscription_id', 'limit', 'cursor', 'tree', 'tree_depth', 'account_type', 'account', 'product', 'status', 'is_storage_product',
  'stage_id__gte', 'enabled', 'subscription_ids', 'stage_id', 'timestamp_from', 'timestamp_to', 'x'];
const VALUES = ['1', '0', '-5', 'true', 'false', 'seller', 'vendor', '8701', '9001', '1,2', 'abc', '', '%E2%82%AC', '1e3', '201', '4', '5'];

function pick<T>(r: () => number, xs: readonly T[]): T {
  return xs[Math.floor(r() * xs.length)];
}

function randomValue(r: () => number, depth = 0): unknown {
  const k = Math.floor(r() * (depth > 2 ? 6 : 9));
  switch (k) {
    case 0: return null;
    case 1: return Math.floor(r() * 20000) - 100;
    case 2: return pick(r, ['active', 'cancelled', 'ORDER_CHANGE', '2026-01-01', 'arn:aws:iam::123456789012:role/dpi-management', '', 'us-east-1']);
    case 3: return r() < 0.5;
    case 4: return 'x'.repeat(Math.floor(r() * 50));
    case 5: return r() * 1e6;
    case 6: return Array.from({ length: Math.floor(r() * 4) }, () => randomValue(r, depth + 1));
    default: {
      const o: Record<string, unknown> = {};
      const keys = ['data', 'type', 'attributes', 'id', 'notification_types', 'role_arn', 'aws_region', 'status', 'product', 'account', 'user',
        'date_start', 'product_parameters', 'asins', 'start_date', 'end_date', 'dates', 'extra_context', 'schedule', 'queue_arn', 'refresh_token'];
      for (let i = 0; i < Math.floor(r() * 5); i++) o[pick(r, keys)] = randomValue(r, depth + 1);
      return o;
    }
  }
}

test('random requests never produce a 5xx and the server keeps answering', async () => {
  const r = rng(Number(process.env.EMULATOR_FUZZ_SEED ?? 20261122));
  const count = Number(process.env.EMULATOR_FUZZ_COUNT ?? 300);
  const byClass: Record<string, number> = {};
  const seen5xx: string[] = [];
  const started = Date.now();
  for (let i = 0; i < count; i++) {
    const method = pick(r, METHODS);
    let path = pick(r, PATHS).replace(/\{n\}/g, () => pick(r, IDS));
    const q: string[] = [];
    for (let j = 0; j < Math.floor(r() * 4); j++) q.push(`${pick(r, QUERY_KEYS)}=${pick(r, VALUES)}`);
    if (q.length) path += `?${q.join('&')}`;
    const headers: Record<string, string> = {};
    const auth = r();
    if (auth < 0.7) headers.authorization = `Bearer ${h.token}`;
    else if (auth < 0.8) headers.authorization = `Bearer ${h.otherToken}`;
    else if (auth < 0.9) headers.authorization = 'Bearer garbage';
    let body: string | undefined;
    if (method !== 'GET' && method !== 'HEAD' && r() < 0.85) {
      const b = r();
      body = b < 0.1 ? '{"broken' : b < 0.2 ? 'plain text' : JSON.stringify(b < 0.6 ? { data: randomValue(r) } : randomValue(r));
      headers['content-type'] = b < 0.2 && r() < 0.5 ? 'text/plain' : 'application/json';
    }
    let status: number;
    try {
      const res = await fetch(h.url + path, { method, headers, body });
      status = res.status;
      const text = await res.text();
      if (method !== 'HEAD' && status !== 204 && text !== '') JSON.parse(text); // every answer is JSON
    } catch (e) {
      throw new Error(`${method} ${path} ${body ?? ''}: ${(e as Error).message}`);
    }
    byClass[`${Math.floor(status / 100)}xx`] = (byClass[`${Math.floor(status / 100)}xx`] ?? 0) + 1;
    if (status >= 500) seen5xx.push(`${status} ${method} ${path} ${body ?? ''}`);
  }
  expect(seen5xx).toEqual([]);
  expect(byClass['2xx']).toBeGreaterThan(10);
  expect(byClass['4xx']).toBeGreaterThan(100);
  if (count <= 300) expect(Date.now() - started).toBeLessThan(10000);
  expect((await h.api('GET', '/account')).status).toBe(200);
  const state = await h.state();
  expect(Array.isArray(state.subscriptions)).toBe(true);
});
