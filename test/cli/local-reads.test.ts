/**
 * `dpi status --local` and `dpi subscriptions [--local]`: what a local deployment left in its embedded emulator (the
 * saved `emulator-state.json` beside --state), under minimal reads too, without curl on the admin API.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CLI_FIXTURES, dpi, startCliEmulator, SUB } from './helpers';
import { startEmulator } from '../../src/emulator';

let dir: string;
const state = (): string => join(dir, 'local-state.json');

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'dpi-local-reads-'));
  // What a local-deploy leaves: the embedded emulator's saved state beside the state file.
  await (await startEmulator({ stateFile: join(dir, 'emulator-state.json'), fixtures: CLI_FIXTURES })).stop();
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

test('dpi subscriptions --local lists what remains in the embedded emulator; minimal reads show ID and status and say so', async () => {
  const r = await dpi(['subscriptions', '--local', '--state', state()], { env: {} });
  expect(r.code).toBe(0);
  expect(r.stdout).toMatch(/^2 subscriptions in the local-deploy emulator \(2 active\)\n/);
  expect(r.stdout).toMatch(new RegExp(`^${SUB}\\s+active\\s+-\\s+-\\s+-\\s*$`, 'm'));
  expect(r.stderr).toContain('the service shows only the ID and status of each subscription');
  const vendor = await dpi(['subscriptions', '--local', '--state', state(), '--reads', 'vendor', '--json'], { env: {} });
  expect(vendor.code).toBe(0);
  expect((JSON.parse(vendor.stdout) as Array<{ id: string; product?: number }>).find((s) => s.id === String(SUB))?.product).toBe(3001);
});

test('dpi subscriptions against a service: --status filters; --product is the service\'s filter', async () => {
  const emu = await startCliEmulator(CLI_FIXTURES, 'vendor');
  try {
    const r = await dpi(['subscriptions', '--product', '3001'], { emu });
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^1 subscription \(1 active\)\n/);
    expect(r.stdout).toMatch(new RegExp(`^${SUB}\\s+active\\s+3001\\s+362\\s+CLI orders`, 'm'));
    expect(r.stderr).toBe('');
    const none = await dpi(['subscriptions', '--status', 'cancelled'], { emu });
    expect(none.stdout).toBe('0 subscriptions\n');
  } finally {
    await emu.stop();
  }
});

test('dpi status --local reads the embedded emulator (no service address needed)', async () => {
  const r = await dpi(['status', '--local', '--state', state()], { env: {} });
  expect(r.code).toBe(0);
  expect(r.stdout).toMatch(/^account 1001: latest healthcheck per subscription and payload/);
  const watch = await dpi(['status', '--local', '--state', state(), '--watch', '5'], { env: {} });
  expect(watch.code).toBe(2);
  expect(watch.stderr).toContain('--watch reads a running service');
});

test('--local without a local-deploy state, or while a local-deploy holds it: exit 2, saying why', async () => {
  const missing = join(dir, 'nope', 'local-state.json');
  const r = await dpi(['status', '--local', '--state', missing], { env: {} });
  expect(r.code).toBe(2);
  expect(r.stderr).toContain(`--local: ${join(dir, 'nope', 'emulator-state.json')} does not exist`);
  // The lock of a live process other than this one (the parent: the test runner's).
  writeFileSync(`${state()}.lock`, `${process.ppid}\n`);
  const busy = await dpi(['subscriptions', '--local', '--state', state()], { env: {} });
  expect(busy.code).toBe(2);
  expect(busy.stderr).toContain(`another local-deploy (pid ${process.ppid}) is using ${state()}`);
});
