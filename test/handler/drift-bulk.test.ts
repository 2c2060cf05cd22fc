/**
 * The drift engine's bulk reads against the real emulator: at 300 and at 2,000 resources (pipelines of a fleet and
 * subscriptions, from synthetic journal records and emulator fixtures) a run makes at most 0.2 service requests per
 * resource (counted in the emulator's request log), while it still reads every record: a paused subscription is
 * MODIFIED, a deleted one DELETED (through the single-read fallback: 404), another account's one NOT_CHECKED (403).
 */
import { DpiClient } from '../../src/client';
import { DEFAULT_REFRESH_TOKEN, ReadMode, RunningEmulator, startEmulator } from '../../src/emulator';
import type { SubscriptionFixture } from '../../src/emulator/fixtures';
import { checkDrift, DriftResource } from '../../src/handler/drift';
import { Journal, JournalRecord } from '../../src/handler/journal';
import { ResourceTypes } from '../../src/kinds';

const ROLE = 'arn:aws:iam::123456789012:role/dpi-management';
const TYPES = ['ORDER_CHANGE', 'REPORT_PROCESSING_FINISHED'];

function journalOf(records: ReadonlyArray<JournalRecord<unknown>>): Journal {
  const byKey = new Map<string, Array<JournalRecord<unknown>>>();
  for (const r of records) byKey.set(r.key, [...(byKey.get(r.key) ?? []), r]);
  const notUsed = (): never => {
    throw new Error('the drift check must not write the journal');
  };
  return {
    records: async <D>(key: string) => (byKey.get(key) ?? []) as Array<JournalRecord<D>>,
    create: notUsed,
    save: notUsed,
    claim: notUsed,
    owners: notUsed,
    transfer: notUsed,
    scan: notUsed,
    lock: notUsed,
    unlock: notUsed,
    fact: notUsed,
    setFact: notUsed,
    dropFact: notUsed,
  };
}

interface Fleet {
  fixtures: SubscriptionFixture[];
  records: Array<JournalRecord<unknown>>;
  resources: DriftResource[];
}

/** `n` resources: 20 subscriptions of product 3001, the rest fleet pipelines (product 107), one per identity. */
function fleet(n: number): Fleet {
  const out: Fleet = { fixtures: [], records: [], resources: [] };
  for (let i = 0; i < n; i++) {
    const id = 50_000 + i;
    const pipeline = i >= 20;
    const key = pipeline ? `Fleet/Pipelines/Identity${i}` : `App/Orders${i}`;
    out.fixtures.push({
      id,
      account: 1001,
      user: 2001,
      product: pipeline ? 107 : 3001,
      status: 'active',
      date_start: '2026-01-01T00:00:00Z',
      ...(pipeline ? {} : { name: `orders-${i}` }),
      remote_identity: 10_000 + i,
      storage_group: 501,
      product_parameters: pipeline ? { subscriptions: JSON.stringify(Object.fromEntries(TYPES.map((t) => [t, `up-${i}-${t}`]))) } : { marketplace_id: 'ATVPDKIKX0DER' },
    });
    const doc = pipeline
      ? {
        identity: String(10_000 + i),
        subscriptionId: String(id),
        selection: { types: TYPES, roleArn: ROLE, region: 'us-east-1', accountType: 'seller' },
        applied: { types: TYPES, roleArn: ROLE, region: 'us-east-1', accountType: 'seller' },
      }
      : {
        product: 3001,
        identity: String(10_000 + i),
        subscriptionId: String(id),
        applied: { params: { marketplace_id: 'ATVPDKIKX0DER', remote_identity_id: String(10_000 + i) }, status: 'active', name: `orders-${i}`, storageGroupId: 501 },
      };
    out.records.push({ key, id: '2026-01-01T00:00:00.000Z#00000001', state: 'active', physicalId: String(id), version: 1, updatedAt: '', doc });
    const [stack, ...rest] = key.split('/');
    out.resources.push({
      stack, logicalId: rest.join('/'), key, type: pipeline ? ResourceTypes.NOTIFICATION_PIPELINE : ResourceTypes.SUBSCRIPTION, physicalId: String(id),
    });
  }
  return out;
}

let emu: RunningEmulator | undefined;
afterEach(async () => {
  await emu?.stop();
  emu = undefined;
});

type DriftRun = { calls: Array<{ method: string; path: string }>; rows: Awaited<ReturnType<typeof checkDrift>> };

async function run(n: number, reads: ReadMode): Promise<DriftRun> {
  const f = fleet(n);
  // Behind the stack's back: one subscription paused, one deleted from the service, one now another account's.
  f.fixtures[3].status = 'paused';
  const deleted = f.fixtures.splice(5, 1)[0];
  f.fixtures[6] = { ...f.fixtures[6], account: 1002, user: 2002 };
  emu = await startEmulator({ host: '127.0.0.1', port: 0, reads, rateLimit: 'off', fixtures: { subscriptions: f.fixtures } });
  const client = new DpiClient({
    endpoints: { baseUrl: emu.url, subscriptionsUrl: emu.url, accountUrl: emu.url, userUrl: emu.url, remoteIdentityUrl: emu.url, authUrl: emu.url },
    refreshToken: DEFAULT_REFRESH_TOKEN,
    maxAttempts: 1,
  });
  await fetch(`${emu.url}/_emulator/requests`, { method: 'DELETE' });
  const rows = await checkDrift(f.resources, { client, journal: journalOf(f.records) });
  const calls = await (await fetch(`${emu.url}/_emulator/requests`)).json() as Array<{ method: string; path: string }>;
  expect(rows.find((r) => r.physicalId === String(deleted.id))).toMatchObject({ status: 'DELETED', reason: 'not found (404)' });
  return { calls, rows };
}

describe.each(['minimal', 'vendor'] as const)('%s reads', (reads) => {
  test.each([300, 2000])('%i resources: at most 0.2 service requests per resource, every record still judged', async (n) => {
    const { calls, rows } = await run(n, reads);
    expect(calls.length).toBeLessThanOrEqual(0.2 * n);
    // No subscription read alone except the ones the listings do not show (the deleted one, another account's one).
    expect(calls.filter((c) => /^\/(v2\/)?sub\/\d+$/.test(c.path)).map((c) => c.path).sort()).toEqual(['/sub/50005', '/sub/50007']);
    // One listing per product, page after page (100 a page, the client's page_size; both read modes paginate).
    const listings = calls.filter((c) => c.path === '/v2/sub').length;
    expect(listings).toBe(1 + Math.ceil((n - 20) / 100));
    expect(rows.filter((r) => r.status === 'MODIFIED').map((r) => [r.physicalId, r.differences[0]])).toEqual([
      ['50003', { property: 'status', declared: 'active', live: 'paused' }],
    ]);
    expect(rows.find((r) => r.physicalId === '50007')).toMatchObject({ status: 'NOT_CHECKED' });
    expect(rows.filter((r) => r.status === 'IN_SYNC').length).toBe(n - 3);
    if (reads === 'vendor') {
      // The listings show name, storage and identity; the parameter reads the stored types: nothing is left unchecked but region and roles.
      const pipelineRow = rows.find((r) => r.type === ResourceTypes.NOTIFICATION_PIPELINE && r.status === 'IN_SYNC')!;
      expect(pipelineRow.notChecked).toEqual(['deploymentRegion', 'roles']);
      expect(rows.find((r) => r.physicalId === '50000')!.notChecked).toEqual([]);
    }
  });
});
