/**
 * The runner's and the emulator's files hold what a deploy knows about an account (and the emulator's tokens): they
 * are their owner's alone whatever the umask, and replaced through temporary files nobody can predict or pre-place.
 */
import { existsSync, lstatSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startEmulator } from '../../src/emulator';
import { appendPrivateFile, writePrivateFile } from '../../src/local/private-files';

const modeOf = (f: string): number => statSync(f).mode % 0o1000;
let dir: string;
let umask: number;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'dpi-private-'));
  umask = process.umask(0o022); // the usual default: new files 0644 unless the writer says otherwise
});
afterEach(() => {
  process.umask(umask);
  rmSync(dir, { recursive: true, force: true });
});

test('written and appended files are 0600 in a 0700 directory, whatever the umask; no temporary file is left', () => {
  const file = join(dir, 'state', 'local-state.json');
  writePrivateFile(file, '{"a":1}\n');
  writePrivateFile(file, '{"a":2}\n');
  expect(readFileSync(file, 'utf8')).toBe('{"a":2}\n');
  expect(modeOf(file)).toBe(0o600);
  expect(modeOf(join(dir, 'state'))).toBe(0o700);
  appendPrivateFile(join(dir, 'state', 'handler.log'), 'line\n');
  expect(modeOf(join(dir, 'state', 'handler.log'))).toBe(0o600);
  expect(readdirSync(join(dir, 'state')).sort()).toEqual(['handler.log', 'local-state.json']);
});

test('a link placed where the file goes is replaced, not followed: its target is untouched', () => {
  const victim = join(dir, 'victim.txt');
  writeFileSync(victim, 'keep me');
  const file = join(dir, 'journal.json');
  symlinkSync(victim, file);
  writePrivateFile(file, 'journal');
  expect(readFileSync(victim, 'utf8')).toBe('keep me');
  expect(lstatSync(file).isSymbolicLink()).toBe(false);
  expect(modeOf(file)).toBe(0o600);
});

test('the emulator\'s state file (its accounts and tokens) is 0600', async () => {
  const stateFile = join(dir, 'emulator-state.json');
  const emu = await startEmulator({ port: 0, stateFile });
  await emu.stop();
  expect(existsSync(stateFile)).toBe(true);
  expect(modeOf(stateFile)).toBe(0o600);
  expect(readdirSync(dir)).toEqual(['emulator-state.json']);
});
