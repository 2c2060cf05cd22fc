/**
 * `dpi local-deploy --time-scale N --latency MS~JITTER` with the bundled CLI and the real handler: the app deploys
 * and is destroyed with every clock scaled (the handler's AWS SDK and service client in containers whose `Date` runs
 * ahead), and bad values stop the run before anything (exit 2), naming the flag.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { synthTinyApp } from './apps';

const DPI = join(__dirname, '..', '..', 'assets', 'cli', 'dpi', 'index.js');
if (!existsSync(DPI)) throw new Error(`${DPI} is missing: run 'npx projen bundle' first`);
function dpi(args: string[]): { code: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [DPI, ...args], { encoding: 'utf8', timeout: 120_000, env: { ...process.env, DPI_REFRESH_TOKEN: '' } });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'dpi-cli-time-scale-'));
  synthTinyApp(join(dir, 'cdk.out'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

test('a deploy and a destroy at a time scale, with latency, against the embedded emulator', () => {
  const base = ['local-deploy', '--app', join(dir, 'cdk.out'), '--state', join(dir, 'ok', 'state.json'), '--time-scale', '60', '--latency', '200~100'];
  const up = dpi(base);
  expect(up.stderr).toContain('Time scale 60: every clock of the run passes 60 times as fast as the wall clock');
  expect(up.code).toBe(0);
  expect(up.stderr).toMatch(/CREATE_COMPLETE\s+\| Custom::DpiNotificationPipeline/);
  expect(up.stdout).toMatch(/Custom::DpiNotificationPipeline\s+\d+/);
  const down = dpi([...base, '--destroy']);
  expect(down.code).toBe(0);
  expect(down.stderr).toMatch(/DELETE_COMPLETE/);
});

test('bad values stop the run before anything (exit 2), naming the flag', () => {
  const base = ['local-deploy', '--app', join(dir, 'cdk.out'), '--state', join(dir, 'bad', 'state.json')];
  const scale = dpi([...base, '--time-scale', '0']);
  expect(scale.code).toBe(2);
  expect(scale.stderr).toContain('--time-scale: expected a number from 1 to 3600 (got "0")');
  const latency = dpi([...base, '--latency', 'fast']);
  expect(latency.code).toBe(2);
  expect(latency.stderr).toContain('--latency: expected MS or MS~JITTER');
  const shared = dpi([...base, '--time-scale', '60', '--containers', 'shared']);
  expect(shared.code).toBe(2);
  expect(shared.stderr).toContain('timeScale needs isolated containers');
  expect(existsSync(join(dir, 'bad', 'state.json'))).toBe(false);
});
