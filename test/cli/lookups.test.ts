import { addFixtures, CLI_FIXTURES, dpi, fault, requests, REVOKED_IDENTITY, startCliEmulator, testNoSecretsPrinted, useCliEmulator } from './helpers';
import { DEFAULT_REFRESH_TOKEN, RunningEmulator } from '../../src/emulator';

let emu: RunningEmulator;
// Names, types and statuses of identities and storages are shown by the vendor's reads, not by the spec's.
useCliEmulator((started) => {
  emu = started;
}, { reads: 'vendor' });

describe('lookups', () => {
  test('dpi products: source products by default, --storage for destinations', async () => {
    const r = await dpi(['products'], { emu });
    expect(r.code).toBe(0);
    expect(r.stdout).toBe([
      'ID    NAME                           ACTIVE  REMOTE IDENTITY TYPE  REQUIRED META FIELDS',
      '86    SP-API Notifications (legacy)  yes     17                    remote_identity_id',
      '107   SP-API Notifications           yes     17                    remote_identity_id, subscriptions, meta',
      '3001  Marketplace Orders             yes     17                    remote_identity_id, marketplace_id',
      '3002  Advertising                    yes     5                     remote_identity_id, profile_id',
      '3003  Retired Source                 no      -                     -',
      '',
    ].join('\n'));
    const s = await dpi(['products', '--storage', '--json'], { emu });
    expect(s.code).toBe(0);
    expect(JSON.parse(s.stdout)).toEqual([expect.objectContaining({
      id: '4001', active: 1, name: 'Object Storage Destination', is_storage_product: 1, required_meta_fields: [], remote_identity_type: null,
    })]);
    const qs = (await requests(emu, '/v2/product')).map((x) => x.query);
    expect(qs).toEqual([{ is_storage_product: '0', page_size: '100' }, { is_storage_product: '1', page_size: '100' }]);
  });

  test('dpi stages: named stages >= 1000 from the payloads, with history limits from the card', async () => {
    const r = await dpi(['stages', '3001'], { emu });
    expect(r.code).toBe(0);
    expect(r.stdout).toBe([
      'product 3001 (Marketplace Orders)',
      'STAGE ID  NAME         ENABLED  HISTORY DAYS  MAX REQUEST AGE (DAYS)  RESTRICTED TO',
      '1000      orders       yes      30            730                     -',
      '1001      order_items  yes      14            365                     -',
      '1002      order_fees   no       -             -                       -',
      '',
    ].join('\n'));
    expect(r.stdout).not.toContain('orders_legacy'); // stage 10 is a legacy record
    const j = await dpi(['stages', '3001', '--json'], { emu });
    const doc = JSON.parse(j.stdout) as { product_id: number; stages: Array<{ stage_id: number; enabled: boolean; history: unknown[] }> };
    expect(doc.product_id).toBe(3001);
    expect(doc.stages[0]).toEqual({
      stage_id: 1000,
      name: 'orders',
      enabled: true,
      restricted_to: null,
      history: [{ subproduct_id: 'default', days: 30, max_request_time: 730, schedule_offset: null }],
    });
    const payloadQueries = (await requests(emu, '/service/products/product/3001/payloads')).map((x) => x.query);
    expect(payloadQueries).toContainEqual({ stage_id__gte: '1000' });
    expect(payloadQueries).toContainEqual({ stage_id__gte: '1000', enabled: 'true' });
  });

  test('dpi stages: unknown product, catalog failure, bad argument', async () => {
    const unknown = await dpi(['stages', '999'], { emu });
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toBe('dpi: product 999 does not exist (see dpi products)\n');
    await fault(emu, { pathPrefix: '/service/product-cards/card/3002', status: 500, count: 5, body: { error: 'catalog down' } });
    const down = await dpi(['stages', '3002'], { emu });
    expect(down.code).toBe(2);
    expect(down.stderr).toContain('500 service failure: GET /service/product-cards/card/3002 (service said: catalog down)');
    const bad = await dpi(['stages', 'orders'], { emu });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("product ID must be an integer, got 'orders'");
    const missing = await dpi(['stages'], { emu });
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain("missing required argument 'product-id'");
  });

  test('dpi identities: id, name, type; seller (17) and vendor (18) marked', async () => {
    const r = await dpi(['identities'], { emu });
    expect(r.code).toBe(0);
    expect(r.stdout).toBe([
      // The vendor's read shows the type as a relationship (its ID), not its name.
      'ID   NAME                         TYPE  TYPE NAME  SP ACCOUNT  HEALTH',
      '362  Seller US                    17    -          seller      valid',
      '363  Vendor US                    18    -          vendor      valid',
      '364  Seller MX (legacy pipeline)  17    -          seller      valid',
      '365  Advertising                  5     -          -           valid',
      '',
    ].join('\n'));
    const j = JSON.parse((await dpi(['identities', '--json'], { emu })).stdout) as Array<{ id: string; sp_account_type: string | null }>;
    expect(j.map((x) => [x.id, x.sp_account_type])).toEqual([['362', 'seller'], ['363', 'vendor'], ['364', 'seller'], ['365', null]]);
  });

  test('dpi storages: active destinations of the account', async () => {
    const r = await dpi(['storages'], { emu });
    expect(r.code).toBe(0);
    expect(r.stdout).toBe('ID   NAME         STATUS  STORAGE PRODUCT\n501  Main bucket  active  4001\n');
    expect(JSON.parse((await dpi(['storages', '--json'], { emu })).stdout)).toEqual([
      expect.objectContaining({ id: '501', name: 'Main bucket', status: 'active', product: 4001 }),
    ]);
    expect((await requests(emu, '/storages')).every((x) => x.query.status === 'active')).toBe(true);
  });
});

test('a service message echoing the token or a JWT is scrubbed', async () => {
  await fault(emu, {
    pathPrefix: '/storages',
    status: 500,
    count: 5,
    body: { error: `token ${DEFAULT_REFRESH_TOKEN} and Bearer eyJhbGciOiJIUzI1NiJ9.eyJhY2NvdW50IjoxMDAxfQ.c2lnbmF0dXJl rejected` },
  });
  const r = await dpi(['storages'], { emu });
  expect(r.code).toBe(2);
  expect(r.stderr).toContain('500 service failure: GET /storages');
  expect(r.stderr).toContain('token *** and Bearer *** rejected');
});

test('with the spec\'s minimal reads, identities and storages show their IDs and "-" for what the spec does not show', async () => {
  const minimal = await startCliEmulator(CLI_FIXTURES, 'minimal');
  try {
    const r = await dpi(['identities'], { emu: minimal });
    expect(r.code).toBe(0);
    expect(r.stdout.split('\n')[1]).toMatch(/^362\s+-\s+-\s+-\s+-\s+-$/);
    expect(JSON.parse((await dpi(['storages', '--json'], { emu: minimal })).stdout)).toEqual([{ id: '501' }]);
  } finally {
    await minimal.stop();
  }
});

describe('identity health', () => {
  test('vendor reads: an invalid identity is marked with its date, named on stderr with what to do; --json has the fields', async () => {
    const e = await startCliEmulator(CLI_FIXTURES, 'vendor');
    try {
      await addFixtures(e, { remoteIdentities: [REVOKED_IDENTITY] });
      const r = await dpi(['identities'], { emu: e });
      expect(r.code).toBe(0);
      const rows = r.stdout.trimEnd().split('\n').map((l) => l.split(/\s{2,}/));
      expect(rows[0]).toEqual(['ID', 'NAME', 'TYPE', 'TYPE NAME', 'SP ACCOUNT', 'HEALTH']);
      expect(rows.find((x) => x[0] === '366')).toEqual(['366', 'Revoked seller', '17', '-', 'seller', 'INVALID since 2024-01-01T00:00:00']);
      expect(rows.find((x) => x[0] === '362')?.[5]).toBe('valid');
      expect(r.stderr).toBe('1 invalid remote identity: 366 (Revoked seller) since 2024-01-01T00:00:00; its pipelines and subscriptions get no data: '
        + 'the seller must re-authorize it in the service\'s UI (or authorize a new identity and use its ID)\n');
      const j = JSON.parse((await dpi(['identities', '--json'], { emu: e })).stdout) as any[];
      expect(j.find((x) => x.id === '366')).toMatchObject({ invalid_identity: 1, invalidated_at: '2024-01-01T00:00:00', health: 'invalid' });
      expect(j.find((x) => x.id === '362')).toMatchObject({ invalid_identity: 0, invalidated_at: null, health: 'valid' });
    } finally {
      await e.stop();
    }
  });

  test('minimal reads: health is not shown, said once on stderr with the reason; --json health unknown', async () => {
    const e = await startCliEmulator(CLI_FIXTURES, 'minimal');
    try {
      await addFixtures(e, { remoteIdentities: [REVOKED_IDENTITY] });
      const r = await dpi(['identities'], { emu: e });
      expect(r.code).toBe(0);
      expect(r.stdout).not.toMatch(/INVALID/);
      expect(r.stderr.match(/remote identity health is not shown/g)).toHaveLength(1);
      expect(r.stderr).toContain('no invalid_identity or invalidated_at (minimal reads)');
      const j = JSON.parse((await dpi(['identities', '--json'], { emu: e })).stdout) as any[];
      expect(j.find((x) => x.id === '366')).toMatchObject({ invalid_identity: null, invalidated_at: null, health: 'unknown' });
    } finally {
      await e.stop();
    }
  });
});

// Runs last (tests run in file order): secrets are never printed, error paths included.
testNoSecretsPrinted();
