/**
 * A service that does not paginate (the emulator's `pagination: false`: every list is `{data: [...]}` with all its
 * records, no `links` or `meta`, as the interface specification shows lists): a small app deployed, drift-checked and
 * destroyed through the bundled handler (`runLocalDeploy`), with 150 more subscriptions of the app's product than one
 * page holds and the web UI's bystanders. Every list is read in one call, the deploy's own records are found, drift
 * is clean and nothing else is touched. Both read modes (`DPI_EMULATOR_READS`). Needs `npx projen bundle`.
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RunningEmulator, startEmulator } from '../../src/emulator';
import { defaultHandlerPath } from '../../src/local';
import { failures, legacy, orders, physical, READS, Scene, stackStatus, synthApp } from '../local/do-no-harm-apps';

jest.setTimeout(60_000);

if (!existsSync(defaultHandlerPath())) throw new Error(`${defaultHandlerPath()} is missing: run 'npx projen bundle' first`);

/** More subscriptions of product 3001 than one page of the client (100) holds. */
const EXTRA = Array.from({ length: 150 }, (_, i) => 20_000 + i);

let emu: RunningEmulator;
let work: string;
beforeAll(async () => {
  emu = await startEmulator({ host: '127.0.0.1', port: 0, reads: READS, pagination: false });
  work = mkdtempSync(join(tmpdir(), 'dpi-no-pagination-'));
});
afterAll(async () => {
  await emu.stop();
  rmSync(work, { recursive: true, force: true });
});

interface Logged { method: string; path: string; status: number; query: Record<string, unknown> }

test('deploy, drift and destroy against a service that does not paginate: every list read once, nothing else harmed', async () => {
  const s = new Scene(emu, join(work, 'scene'));
  // Unpaginated, as a service that does not paginate answers: all records, no links, no meta.
  const probe = await s.ui('GET', '/sub?page_size=1');
  expect(Object.keys(probe)).toEqual(['data']);

  await s.admin('POST', '/fixtures', { subscriptions: EXTRA.map((id) => ({ id, account: 1001, user: 2001, product: 3001, name: `extra ${id}` })) });
  const by = await s.uiBystanders();
  const ids = [by.orders, by.paused, by.ads, by.storage, 8601, 8701, ...EXTRA];
  const before = s.kept(ids);
  expect(before.length).toBeGreaterThan(150);
  const legacyBefore = s.legacyPipelines();
  await s.admin('DELETE', '/requests');

  const dir = synthApp(join(work, 'app'), 'Flat', (stack, connection) => {
    orders(stack, connection, 'Us', { name: 'flat orders us' });
    orders(stack, connection, 'Ca', { name: 'flat orders ca', productParameters: { marketplace_id: 'A2EUQ1WTGCTBG2' } });
    legacy(stack, connection);
  });
  const deployed = await s.deploy(dir);
  expect(failures(deployed)).toEqual([]);
  expect(deployed.success).toBe(true);
  expect(stackStatus(deployed, 'Flat')).toBe('CREATE_COMPLETE');
  const made = [physical(deployed, 'Us'), physical(deployed, 'Ca')].map(Number);
  expect(made.every((id) => id > 0 && !ids.includes(id))).toBe(true);
  expect(emu.state().subscriptions.filter((x) => made.includes(x.id)).map((x) => [x.name, x.status]).sort())
    .toEqual([['flat orders ca', 'active'], ['flat orders us', 'active']]);

  // Every list was read in one call (no page 2 asked for), and nothing was refused.
  const log = (await s.admin('GET', '/requests')) as Logged[];
  const lists = log.filter((r) => r.method === 'GET' && ['/sub', '/v2/sub', '/service/jobs/jobs'].includes(r.path));
  expect(lists.length).toBeGreaterThan(0);
  expect(log.filter((r) => r.query && r.query.page !== undefined)).toEqual([]);
  expect(log.filter((r) => r.status >= 400).map((r) => `${r.method} ${r.path} ${r.status}`)).toEqual([]);

  // Drift (the bulk reads list the product's subscriptions: 150 + 6, one answer) finds the stack as declared.
  await s.admin('DELETE', '/requests');
  const drift = await s.dpi(['drift', '--local', '--state', s.stateFile, '--json']);
  expect([drift.code, drift.stderr]).toEqual([0, '']);
  const doc = JSON.parse(drift.stdout) as { drifted: number; stacks: Array<{ resources: Array<{ logicalId: string; status: string }> }> };
  expect(doc.drifted).toBe(0);
  const rows = doc.stacks.flatMap((x) => x.resources);
  expect(rows.length).toBeGreaterThanOrEqual(3);
  expect(rows.every((x) => x.status === 'IN_SYNC')).toBe(true);
  const driftLog = (await s.admin('GET', '/requests')) as Logged[];
  expect(driftLog.filter((r) => r.method !== 'GET' && r.path !== '/auth/api/ref')).toEqual([]);
  expect(driftLog.filter((r) => r.query && r.query.page !== undefined)).toEqual([]);

  // Destroy: the stack's own subscriptions end; the bystanders, the 150 others and the adopted legacy pipeline stay.
  const destroyed = await s.deploy(undefined, { destroy: true });
  expect(failures(destroyed)).toEqual([]);
  expect(destroyed.success).toBe(true);
  expect(emu.state().subscriptions.filter((x) => made.includes(x.id)).map((x) => x.status)).toEqual(['invalid', 'invalid']); // the service's DELETE
  expect(s.kept(ids)).toEqual(before);
  expect(s.legacyPipelines()).toEqual(legacyBefore);
});
