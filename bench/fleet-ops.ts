/**
 * The fleet operations scenario (`npm run bench:fleet-ops`): a platform team's app (bench/lib/platform-app.ts: 300
 * sellers in a fleet, 3 single pipelines, 20 subscriptions, a backfill, 250 order IDs, monitors) run through the
 * `dpi` command line as its docs say, against one long-running emulator seeded with the app's identities and keeping
 * the service's default rate limit (1,000 requests per 5 minutes): deploy, drift, drift, a subscription paused "in the
 * UI", drift (exit 1), drift --fix, drift (exit 0), destroy. Prints per step the exit code, the time, the service
 * requests and the rate-limit wait lines the command printed on stderr. Takes several minutes: the waits are real.
 *
 * Options (environment): FLEET (default 300), RATE_LIMIT (default the emulator's: 1000/300; e.g. 200/60 or off).
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PLATFORM_APP, platformFixtures, synthPlatformApp } from './lib/platform-app';
import { DEFAULT_REFRESH_TOKEN, parseRateLimit, startEmulator } from '../src/emulator';

const CLI = join(__dirname, '..', 'assets', 'cli', 'dpi', 'index.js');

interface StepResult {
  readonly step: string;
  readonly code: number;
  readonly seconds: number;
  readonly requests: number;
  readonly waits: string[];
  readonly stdout: string;
  readonly stderr: string;
}

function dpi(args: string[], env: Record<string, string>): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [CLI, ...args], { env: { ...process.env, ...env, CI: 'true' }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => { stdout += d.toString(); });
    child.stderr.on('data', (d: Buffer) => {
      stderr += d.toString();
      for (const line of d.toString().split('\n')) if (/rate limit/i.test(line)) process.stderr.write(`    | ${line}\n`);
    });
    child.on('close', (code) => resolve({ code: code ?? -1, stdout, stderr }));
  });
}

async function main(): Promise<void> {
  const shape = { ...PLATFORM_APP, fleet: Number(process.env.FLEET ?? PLATFORM_APP.fleet) };
  const dir = mkdtempSync(join(tmpdir(), 'dpi-fleet-ops-'));
  const t0 = Date.now();
  synthPlatformApp(join(dir, 'cdk.out'), shape);
  const synthSeconds = (Date.now() - t0) / 1000;
  const fixtures = join(dir, 'fixtures.json');
  writeFileSync(fixtures, JSON.stringify(platformFixtures(shape)));
  const rate = process.env.RATE_LIMIT ? parseRateLimit(process.env.RATE_LIMIT) : undefined;
  const emu = await startEmulator({ host: '127.0.0.1', port: 0, fixtures: platformFixtures(shape), reads: 'minimal', ...(rate ? { rateLimit: rate } : {}) });
  const env = { DPI_REFRESH_TOKEN: DEFAULT_REFRESH_TOKEN, DPI_BASE_URL: emu.url };
  const state = join(dir, '.dpi', 'state.json');
  const requests = async (): Promise<number> => ((await (await fetch(`${emu.url}/_emulator/requests`)).json()) as unknown[]).length;
  const results: StepResult[] = [];
  const step = async (name: string, args: string[]): Promise<StepResult> => {
    process.stderr.write(`${name}: dpi ${args.join(' ')}\n`);
    const before = await requests();
    const started = Date.now();
    const r = await dpi(args, env);
    const res: StepResult = {
      step: name,
      code: r.code,
      seconds: (Date.now() - started) / 1000,
      requests: (await requests()) - before,
      waits: r.stderr.split('\n').filter((l) => /rate limit/i.test(l)),
      stdout: r.stdout,
      stderr: r.stderr,
    };
    results.push(res);
    process.stderr.write(`  exit ${res.code} in ${res.seconds.toFixed(0)} s, ${res.requests} service requests, ${res.waits.length} wait line(s)\n`);
    return res;
  };
  try {
    const app = ['--app', join(dir, 'cdk.out'), '--state', state];
    await step('deploy', ['local-deploy', ...app, '--emulator', emu.url]);
    await step('drift 1', ['drift', '--local', ...app]);
    await step('drift 2', ['drift', '--local', ...app]);
    // A subscription paused in the UI.
    const snap = (await (await fetch(`${emu.url}/_emulator/state`)).json()) as { subscriptions?: Array<{ id: number; name: string; status: string }> };
    const paused = snap.subscriptions?.find((s) => s.name === 'orders-3' && s.status === 'active')?.id;
    if (paused) {
      const token = ((await (await fetch(`${emu.url}/auth/api/ref`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ data: { type: 'APIAuth', attributes: { refresh_token: DEFAULT_REFRESH_TOKEN } } }) })).json()) as { data: { attributes: { token: string } } }).data.attributes.token;
      const r = await fetch(`${emu.url}/v2/sub/${paused}`, { method: 'PATCH', headers: { 'Content-Type': 'application/json', 'Authorization': `Bearer ${token}` }, body: JSON.stringify({ data: { type: 'Subscription', id: paused, attributes: { status: 'paused' } } }) });
      process.stderr.write(`paused subscription ${paused} in the "UI": ${r.status}\n`);
    } else {
      process.stderr.write('could not find the subscription orders-3 in the emulator state\n');
    }
    await step('drift after pause', ['drift', '--local', ...app]);
    await step('drift --fix', ['drift', '--local', '--fix', '--yes', ...app]);
    await step('drift after fix', ['drift', '--local', ...app]);
    await step('destroy', ['local-deploy', ...app, '--emulator', emu.url, '--destroy']);
  } finally {
    await emu.stop();
  }
  const resources = shape.fleet + shape.singles + shape.subscriptions + 2;
  process.stdout.write(`\nFleet operations: ${shape.fleet} sellers, ${resources} Custom::Dpi* resources, synth ${synthSeconds.toFixed(1)} s, rate limit ${process.env.RATE_LIMIT ?? '1000/300 (default)'}\n\n`);
  process.stdout.write('| step | exit | time (s) | service requests | per resource | wait lines |\n|---|---|---|---|---|---|\n');
  for (const r of results) {
    process.stdout.write(`| ${r.step} | ${r.code} | ${r.seconds.toFixed(0)} | ${r.requests} | ${(r.requests / resources).toFixed(3)} | ${r.waits.length} |\n`);
  }
  for (const name of ['drift after pause', 'drift --fix']) {
    const r = results.find((x) => x.step === name);
    if (r) process.stdout.write(`\n\`dpi ${name.startsWith('drift --fix') ? 'drift --local --fix --yes' : 'drift --local'}\` (${name}):\n\n${r.stdout}`);
  }
  const bad = results.filter((r) => r.code !== (r.step === 'drift after pause' ? 1 : 0));
  for (const r of bad) process.stdout.write(`\n${r.step} exited ${r.code}:\n${r.stderr.slice(-3000)}\n${r.stdout.slice(-3000)}\n`);
  rmSync(dir, { recursive: true, force: true });
  if (bad.length > 0) process.exitCode = 1;
}

void main();
