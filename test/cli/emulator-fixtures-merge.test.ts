/**
 * `dpi emulator --fixtures FILE --state-file FILE` with a saved state: the fixtures are merged into it, and the line
 * after `listening on` says what was added and kept (they were ignored without a word).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FakeSignals } from './helpers';
import { runDpi } from '../../src/cli/program';
import { RemoteIdentityFixture, startEmulator } from '../../src/emulator';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'dpi-emu-merge-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** Runs `dpi emulator` until its stdout has two lines, then stops it; returns stdout. */
async function firstLines(args: string[]): Promise<string> {
  return (await firstOutput(args)).out;
}

/** Runs `dpi emulator` until its stdout has two lines, then stops it; returns stdout and stderr. */
async function firstOutput(args: string[]): Promise<{ out: string; err: string }> {
  const signals = new FakeSignals();
  let out = '';
  let err = '';
  let ready: () => void = () => undefined;
  const twoLines = new Promise<void>((resolve) => {
    ready = resolve;
  });
  const run = runDpi(['emulator', '--port', '0', ...args], {
    env: {},
    stdout: { write: (s: string) => { out += s; if (out.split('\n').length > 2) ready(); } },
    stderr: { write: (t: string) => { err += t; } },
    onInterrupt: signals.onInterrupt,
  });
  await twoLines;
  signals.fire('SIGTERM');
  expect(await run).toBe(0);
  return { out, err };
}

test('fixtures with an existing --state-file: merged, and said on the line after listening on', async () => {
  const state = join(dir, 'state.json');
  const seller = (id: number): RemoteIdentityFixture => ({ id, account: 1001, remote_identity_type_id: 17 });
  await (await startEmulator({ stateFile: state, fixtures: { remoteIdentities: [seller(5001)] } })).stop();
  const fixtures = join(dir, 'fx.json');
  writeFileSync(fixtures, JSON.stringify({ remoteIdentities: [seller(5001), seller(5002)] }));
  const out = await firstLines(['--fixtures', fixtures, '--state-file', state]);
  expect(out.split('\n')[1]).toBe(`fixtures merged into the saved state of ${state}: added 1 remoteIdentities; `
    + 'kept 1 record the state already has, as the state has them (1 remoteIdentities)');
  // Without a saved state: no such line (the fixtures seed a new state).
  const fresh = await firstLines(['--fixtures', fixtures, '--state-file', join(dir, 'new.json')]);
  expect(fresh.split('\n')[1]).toMatch(/^default refresh token/);
});

test('--state-file: the next start listens where the last one did; when that port is taken, it says so on stderr', async () => {
  const state = join(dir, 'state.json');
  const at = (out: string): string => /^listening on (\S+)$/m.exec(out)![1];
  const first = await firstOutput(['--state-file', state]);
  const again = await firstOutput(['--state-file', state]);
  expect(at(again.out)).toBe(at(first.out));
  expect(again.err).not.toContain('is taken');
  const squatter = createServer();
  await new Promise<void>((resolve) => squatter.listen(Number(new URL(at(first.out)).port), '127.0.0.1', resolve));
  try {
    const moved = await firstOutput(['--state-file', state]);
    expect(at(moved.out)).not.toBe(at(first.out));
    expect(moved.err).toContain(`the address ${state} was last served at, ${at(first.out)}, is taken (or another port was asked for): `
      + 'its saved rate window starts empty here\n');
  } finally {
    await new Promise((resolve) => squatter.close(resolve));
  }
});
