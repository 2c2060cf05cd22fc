import { ScriptedServer } from './scripted-server';
import { DpiClient, endpointsFromBase, MAX_PARAMETER_READ_IDS, ServiceError } from '../../src/client';

let server: ScriptedServer;
let c: DpiClient;

beforeEach(async () => {
  server = await ScriptedServer.start();
  c = new DpiClient({ endpoints: endpointsFromBase(server.url), refreshToken: 'rt', baseDelayMs: 1, sleep: async () => {} });
});
afterEach(async () => {
  await server.close();
});

const spp = (id: string | number, attributes: Record<string, unknown>): object => ({ type: 'SubscriptionProductParameters', id: String(id), attributes });

describe('stored product parameters (vendor SPP reads)', () => {
  test('get: GET /v2/spp?subscription_id=ID returns the stored string map', async () => {
    server.on('GET', '/v2/spp', { status: 200, body: { data: spp(48, { stage_ids: '[1000]', remote_identity_id: '7460' }) } });
    expect(await c.parameters.get('48')).toEqual({ stage_ids: '[1000]', remote_identity_id: '7460' });
    const seen = server.seen('GET', '/v2/spp');
    expect(seen).toHaveLength(1);
    expect(seen[0].query.get('subscription_id')).toBe('48');
  });

  test.each([404, 405, 400])('get: %d means not shown (undefined), never an error', async (status) => {
    server.on('GET', '/v2/spp', { status, body: { errors: [{ detail: 'no' }] } });
    expect(await c.parameters.get(48)).toBeUndefined();
  });

  test('get: other failures are thrown', async () => {
    server.on('GET', '/v2/spp', { status: 403, body: { errors: [{ detail: 'forbidden' }] } });
    await expect(c.parameters.get(48)).rejects.toBeInstanceOf(ServiceError);
  });

  test('bulk: chunks of 100 unique IDs, one call each, keyed by subscription ID', async () => {
    const ids = Array.from({ length: 250 }, (_, i) => String(1000 + i));
    server.on('GET', '/v2/spp/bulk', (req) => ({
      status: 200,
      body: { data: req.query.get('subscription_ids')!.split(',').map((id) => spp(id, { stage_ids: `[${id}]` })) },
    }));
    const out = await c.parameters.bulk([...ids, ids[0]]);
    expect(out!.size).toBe(250);
    expect(out!.get('1249')).toEqual({ stage_ids: '[1249]' });
    const seen = server.seen('GET', '/v2/spp/bulk').map((r) => r.query.get('subscription_ids')!.split(','));
    expect(seen.map((x) => x.length)).toEqual([MAX_PARAMETER_READ_IDS, MAX_PARAMETER_READ_IDS, 50]);
    expect(seen.flat()).toEqual(ids);
  });

  test('bulk: an all-or-nothing 404 naming unresolved IDs reads the chunk once more without them', async () => {
    server.on('GET', '/v2/spp/bulk',
      { status: 404, body: { errors: [{ detail: 'Subscriptions were not found or are not accessible: 2,4' }] } },
      { status: 200, body: { data: [spp(1, { a: '1' }), spp(3, {})] } });
    const out = await c.parameters.bulk([1, 2, 3, 4]);
    expect([...out!.entries()]).toEqual([['1', { a: '1' }], ['3', {}]]);
    expect(server.seen('GET', '/v2/spp/bulk').map((r) => r.query.get('subscription_ids'))).toEqual(['1,2,3,4', '1,3']);
  });

  test('bulk: a 404 that names no requested ID (route not served), 405 or 400 means not shown', async () => {
    expect(await c.parameters.bulk([1, 2])).toBeUndefined(); // the scripted server's unknown route
    server.on('GET', '/v2/spp/bulk', { status: 405, body: {} });
    expect(await c.parameters.bulk([1])).toBeUndefined();
    server.on('GET', '/v2/spp/bulk', { status: 400, body: {} });
    expect(await c.parameters.bulk([1])).toBeUndefined();
  });

  test('bulk: no IDs, no call; a non-integer ID is refused before anything is sent', async () => {
    expect((await c.parameters.bulk([]))!.size).toBe(0);
    await expect(c.parameters.bulk(['1', 'x'])).rejects.toThrow(/subscription_ids/);
    expect(server.seen('GET', '/v2/spp/bulk')).toHaveLength(0);
  });
});
