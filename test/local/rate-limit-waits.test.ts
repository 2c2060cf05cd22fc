/**
 * Wait lines: while the handler (run in-process by the runner) waits for the service's rate limit, the runner prints
 * one line per wait with the progress lines (stderr by default), also without --handler-logs. The REAL bundled handler
 * against an emulator with a small rate limit; its waits move the emulator's clock (`waits: 'emulator-clock'`).
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { synthTinyApp } from './apps';
import { tempDir } from './helpers';
import { DEFAULT_REFRESH_TOKEN, RunningEmulator, startEmulator } from '../../src/emulator';
import { defaultHandlerPath, runLocalDeploy } from '../../src/local';
import { formatWait, rateLimitedEntry, WaitReporter, waitLine } from '../../src/local/waits';

const BUNDLE = defaultHandlerPath();
if (!existsSync(BUNDLE)) throw new Error(`${BUNDLE} is missing: run 'npx projen bundle' before the local-deploy tests`);

const PACED_LINE = /^local-deploy: requests are paced to the service's rate limit; waiting \d+(\.\d)? s before (GET|POST|PUT|PATCH|DELETE) \/\S* \((\d+) of (\d+) resources done\)$/;
const WAIT_LINE = /^local-deploy: the service's rate limit was reached; waiting \d+(\.\d)? s before (GET|POST|PUT|PATCH|DELETE) \/\S* again \((\d+) of (\d+) resources done(, refused \d+ times so far)?\)$/;

describe('the wait line of a handler log entry', () => {
  test('a rate-limited entry is recognised; other lines are not', () => {
    const line = JSON.stringify({ time: 't', msg: 'rate limited', method: 'GET', path: '/v2/sub', waitMs: 60000, refusals: 1 });
    expect(rateLimitedEntry(line)).toEqual({ msg: 'rate limited', method: 'GET', path: '/v2/sub', waitMs: 60000, refusals: 1 });
    expect(rateLimitedEntry(JSON.stringify({ msg: 'retry', detail: 'rate limited' }))).toBeUndefined();
    expect(rateLimitedEntry('rate limited, not JSON')).toBeUndefined();
    expect(rateLimitedEntry(JSON.stringify({ msg: 'rate limited', method: 'GET', path: '/x', waitMs: 'soon' }))).toBeUndefined();
  });

  test('a wait for a turn of the request budget (no refusal) says it is paced, not refused', () => {
    expect(waitLine({ msg: 'rate limited', method: 'POST', path: '/v2/sub', waitMs: 3000, refusals: 0 }, 1, 2))
      .toBe('local-deploy: requests are paced to the service\'s rate limit; waiting 3 s before POST /v2/sub (1 of 2 resources done)');
  });

  test('the line says what it waits for, how long and how much is done', () => {
    expect(waitLine({ msg: 'rate limited', method: 'GET', path: '/v2/sub', waitMs: 60000, refusals: 1 }, 120, 325))
      .toBe('local-deploy: the service\'s rate limit was reached; waiting 60 s before GET /v2/sub again (120 of 325 resources done)');
    expect(waitLine({ msg: 'rate limited', method: 'POST', path: '/v2/sub', waitMs: 1500, refusals: 3 }, 0, 1))
      .toBe('local-deploy: the service\'s rate limit was reached; waiting 1.5 s before POST /v2/sub again (0 of 1 resources done, refused 3 times so far)');
    expect(formatWait(12_345)).toBe('12 s');
  });

  test('the reporter prints one line per entry, with its counts', () => {
    const printed: string[] = [];
    const w = new WaitReporter((l) => printed.push(l));
    w.total = 10;
    w.done = 4;
    w.observe('{"msg":"event"}');
    w.observe(JSON.stringify({ msg: 'rate limited', method: 'GET', path: '/a', waitMs: 2000, refusals: 1 }));
    expect(printed).toEqual(['local-deploy: the service\'s rate limit was reached; waiting 2 s before GET /a again (4 of 10 resources done)']);
    expect(w.waits).toBe(1);
  });
});

let emulator: RunningEmulator;
let tmp: { dir: string; cleanup: () => void };
beforeAll(async () => {
  // A small limit: a deploy of one pipeline meets it several times (each wait is the emulator's Retry-After, 1 s).
  emulator = await startEmulator({ port: 0, rateLimit: { requests: 5, seconds: 1 } });
});
afterAll(async () => {
  await emulator.stop();
});
beforeEach(() => {
  tmp = tempDir();
});
afterEach(() => tmp.cleanup());

async function emulatorClock(): Promise<number> {
  return ((await (await fetch(`${emulator.url}/_emulator/clock`)).json()) as { now: number }).now;
}

test('waits must be \'real\' or \'emulator-clock\'', async () => {
  const app = synthTinyApp(join(tmp.dir, 'cdk.out'));
  const run = await runLocalDeploy({ app, stateFile: join(tmp.dir, 's.json'), progress: () => undefined, output: () => undefined, waits: 'fast' as 'real' });
  expect(run.success).toBe(false);
  expect(run.error).toContain('waits must be \'real\' or \'emulator-clock\' (got "fast")');
});

test('a deploy and a destroy that meet the rate limit print one wait line per handler wait, without --handler-logs', async () => {
  const app = synthTinyApp(join(tmp.dir, 'cdk.out'), { subscriptionName: 'orders' });
  const stateFile = join(tmp.dir, 'state', 'local-state.json');
  const lines: string[] = [];
  const opts = {
    app,
    emulatorUrl: emulator.url,
    stateFile,
    refreshToken: DEFAULT_REFRESH_TOKEN,
    concurrency: 1,
    progress: (l: string) => lines.push(l),
    output: () => undefined,
    // The waits move the emulator's clock (the rate limit's) instead of passing: no wall time.
    waits: 'emulator-clock' as const,
  };
  const clockBefore = await emulatorClock();
  const deployed = await runLocalDeploy(opts);
  expect(deployed.error).toBeUndefined();
  expect(deployed.success).toBe(true);
  const logged = (): number => readFileSync(join(tmp.dir, 'state', 'handler.log'), 'utf8').split('\n').filter((l) => l.includes('"msg":"rate limited"')).length;
  const waits = (): RegExpMatchArray[] => lines.map((l) => WAIT_LINE.exec(l)).filter((m): m is RegExpExecArray => m !== null);
  const deployWaits = waits();
  expect(deployWaits.length).toBeGreaterThan(0);
  // One line per handler log entry of a wait.
  expect(deployWaits).toHaveLength(logged());
  // The emulator's clock moved on by at least every wait the service asked for (each a whole Retry-After second).
  expect(await emulatorClock() - clockBefore).toBeGreaterThanOrEqual(deployWaits.length);
  // The counts: two resources in the app, in one stack, one at a time.
  for (const m of deployWaits) {
    expect(m[4]).toBe('2');
    expect(Number(m[3])).toBeLessThanOrEqual(1);
  }
  // The emulator did refuse requests.
  const res = await fetch(`${emulator.url}/_emulator/requests`);
  const requests = (await res.json()) as Array<{ status?: number }>;
  expect(requests.some((q) => q.status === 429)).toBe(true);

  const destroyed = await runLocalDeploy({ ...opts, destroy: true });
  expect(destroyed.success).toBe(true);
  expect(waits().length).toBeGreaterThanOrEqual(deployWaits.length);
}, 120_000);

test('the embedded emulator takes the run\'s rate limit (dpi local-deploy --rate-limit); a running emulator\'s own is not overridden', async () => {
  const app = synthTinyApp(join(tmp.dir, 'cdk.out'));
  const stateFile = join(tmp.dir, 'state', 'local-state.json');
  const lines: string[] = [];
  const opts = { app, stateFile, concurrency: 1, progress: (l: string) => lines.push(l), output: () => undefined, waits: 'emulator-clock' as const };
  // One request per 2 s: the provider's request budget runs at the embedded emulator's limit, so the run waits for its
  // turns (one line each) and meets no 429.
  const limited = await runLocalDeploy({ ...opts, rateLimit: { requests: 1, seconds: 2 } });
  expect(limited.success).toBe(true);
  expect(lines.some((l) => PACED_LINE.test(l))).toBe(true);
  expect(lines.filter((l) => WAIT_LINE.test(l))).toEqual([]);
  lines.length = 0;
  const destroyed = await runLocalDeploy({ ...opts, destroy: true, rateLimit: 'off' });
  expect(destroyed.success).toBe(true);
  expect(lines.filter((l) => WAIT_LINE.test(l))).toEqual([]);
  const refused = await runLocalDeploy({ ...opts, emulatorUrl: emulator.url, refreshToken: DEFAULT_REFRESH_TOKEN, rateLimit: 'off' });
  expect(refused.success).toBe(false);
  expect(refused.events).toEqual([]);
  expect(refused.error).toContain('the rate limit is the embedded emulator\'s');
}, 120_000);
