import { CLI_FIXTURES, dpi } from './helpers';
import { connect } from '../../src/cli/connection';
import { processIo } from '../../src/cli/io';
import { formatWait, waitLine } from '../../src/cli/waits';
import { DEFAULT_REFRESH_TOKEN, RunningEmulator, startEmulator } from '../../src/emulator';

/**
 * A command against a service whose rate limit is reached waits it out (no fixed attempt count), exits 0 and says on
 * stderr what it waits for; stdout holds only the result. The emulator's limit is scaled down to 5 requests per 2 s,
 * and the window is used up before the command runs, so its first request is refused (real time: about 2 s).
 */
let emu: RunningEmulator;
afterEach(async () => {
  await emu?.stop();
});

/** Uses up the rate-limit window of 127.0.0.1 (every request counts, whatever its answer). */
async function exhaust(): Promise<void> {
  for (let i = 0; i < 5; i++) await (await fetch(`${emu.url}/account`)).text();
  expect((await fetch(`${emu.url}/account`)).status).toBe(429);
}

const WAIT_LINE = /^dpi: the service's rate limit was reached; waiting \d+(\.\d)? s before (POST \/auth\/api\/ref|GET \/v2\/product) again/;

describe('rate-limit waits of dpi commands', () => {
  test('dpi products waits out the 429s, exits 0 and prints one wait line per wait on stderr', async () => {
    emu = await startEmulator({ host: '127.0.0.1', port: 0, fixtures: CLI_FIXTURES, rateLimit: { requests: 5, seconds: 2 } });
    await exhaust();
    const r = await dpi(['products', '--json'], { emu });
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout).map((p: { id: string }) => p.id)).toContain('3001');
    const lines = r.stderr.split('\n').filter((l) => l !== '');
    expect(lines.length).toBeGreaterThanOrEqual(1);
    for (const l of lines) expect(l).toMatch(WAIT_LINE);
    expect(r.stdout).not.toContain('rate limit');
    expect(r.stderr).not.toContain(DEFAULT_REFRESH_TOKEN);
  });

  test('connect(): the progress a command sets is read at each wait and printed with it', async () => {
    emu = await startEmulator({ host: '127.0.0.1', port: 0, fixtures: CLI_FIXTURES, rateLimit: { requests: 5, seconds: 2 } });
    let stderr = '';
    const env = { DPI_BASE_URL: emu.url, DPI_REFRESH_TOKEN: DEFAULT_REFRESH_TOKEN };
    const io = { ...processIo(), env, stderr: { write: (s: string) => { stderr += s; } } };
    let done = 0;
    const c = connect({}, io, { progress: () => 'not yet' });
    c.setProgress(() => `${done} of 3 products read`);
    await c.client.account.get();
    done = 1;
    await exhaust();
    await c.client.products.get(3001);
    expect(stderr).toMatch(/^dpi: the service's rate limit was reached; waiting \d+(\.\d)? s before GET \/v2\/product\/3001 again \(1 of 3 products read\)\n/);
  });

  test('the wait line: duration for people, refusals and progress', () => {
    expect(formatWait(60_000)).toBe('60 s');
    expect(formatWait(1_500)).toBe('1.5 s');
    expect(formatWait(270_000)).toBe('4 min 30 s');
    expect(formatWait(300_000)).toBe('5 min');
    expect(waitLine({ method: 'GET', path: '/v2/sub/9001', waitMs: 120_000, refusals: 2 }, '120 of 325 resources read'))
      .toBe('dpi: the service\'s rate limit was reached; waiting 2 min before GET /v2/sub/9001 again (refused 2 times so far; '
        + '120 of 325 resources read)');
    expect(waitLine({ method: 'POST', path: '/v2/sub', waitMs: 61_234, refusals: 1 }))
      .toBe('dpi: the service\'s rate limit was reached; waiting 61 s before POST /v2/sub again');
  });
});
