/**
 * `dpi local-deploy --fixtures FILE` and the emulator URL rule shared by the command line and `runLocalDeploy`.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { synthTinyApp } from './apps';
import { requireSecureTransport } from '../../src/cli/connection';
import { insecureTransportReason } from '../../src/local/transport';

/** The bundled `dpi` (the command writes its progress to the process's stderr and sets the exit code). */
const DPI = join(__dirname, '..', '..', 'assets', 'cli', 'dpi', 'index.js');
if (!existsSync(DPI)) throw new Error(`${DPI} is missing: run 'npx projen bundle' first`);
function dpi(args: string[]): { code: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [DPI, ...args], { encoding: 'utf8', timeout: 60_000, env: { ...process.env, DPI_REFRESH_TOKEN: '' } });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'dpi-cli-fixtures-'));
  synthTinyApp(join(dir, 'cdk.out'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

test('help lists --fixtures', () => {
  const r = dpi(['local-deploy', '--help']);
  expect(r.stdout.replace(/\s+/g, ' ')).toContain('--fixtures <file> JSON file of fixtures seeding the embedded emulator');
});

test('an unreadable fixtures file stops the run before anything (exit 2), naming the file', () => {
  const file = join(dir, 'missing.json');
  const r = dpi(['local-deploy', '--app', join(dir, 'cdk.out'), '--state', join(dir, 'a', 'state.json'), '--fixtures', file]);
  expect(r.code).toBe(2);
  expect(r.stderr).toContain(`cannot read fixtures file ${file}`);
});

test('a fixtures file that is not a JSON object is refused (exit 2)', () => {
  const file = join(dir, 'list.json');
  writeFileSync(file, '[]');
  const r = dpi(['local-deploy', '--app', join(dir, 'cdk.out'), '--state', join(dir, 'b', 'state.json'), '--fixtures', file]);
  expect(r.code).toBe(2);
  expect(r.stderr).toContain(`fixtures file ${file} must contain a JSON object`);
});

test('--fixtures with --emulator is refused (exit 2): a running emulator gets its fixtures when it starts', () => {
  const file = join(dir, 'ok.json');
  writeFileSync(file, JSON.stringify({ remoteIdentities: [] }));
  const r = dpi(['local-deploy', '--app', join(dir, 'cdk.out'), '--state', join(dir, 'c', 'state.json'), '--fixtures', file, '--emulator', 'http://127.0.0.1:9']);
  expect(r.code).toBe(2);
  expect(r.stderr).toContain('fixtures seed the embedded emulator');
});

describe('the emulator URL rule is the command line\'s', () => {
  test.each(['http://127.0.0.1:4010', 'http://localhost:1', 'http://[::1]:2', 'https://emulator.example.com', 'http://2130706433:8080/'])('%s is accepted', (url) => {
    expect(insecureTransportReason('x', url)).toBeUndefined();
    expect(() => requireSecureTransport('x', url)).not.toThrow();
  });
  test.each(['http://emulator.internal:4010', 'http://10.0.0.5', 'ftp://127.0.0.1', 'not a url'])('%s is refused with the same message', (url) => {
    const reason = insecureTransportReason('x', url);
    expect(reason).toBeDefined();
    expect(() => requireSecureTransport('x', url)).toThrow(reason!);
  });
});
