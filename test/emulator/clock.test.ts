/**
 * The emulator's time scale and latency: its clock, its rate window and `Retry-After`, and each request's latency all
 * run on one clock that passes `timeScale` times as fast as real time; a state file keeps where it stood.
 */
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { accessToken } from './helpers';
import { parseLatency, parseTimeScale, RunningEmulator, startEmulator } from '../../src/emulator';

const clockOf = async (emu: RunningEmulator): Promise<number> => ((await (await fetch(`${emu.url}/_emulator/clock`)).json()) as { now: number }).now;
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

const token = (emu: RunningEmulator): Promise<string> => accessToken(emu.url);

/** Real milliseconds one service request takes. */
async function timed(emu: RunningEmulator, t: string): Promise<{ ms: number; status: number }> {
  const started = performance.now();
  const r = await fetch(`${emu.url}/account`, { headers: { authorization: `Bearer ${t}` } });
  await r.arrayBuffer();
  return { ms: performance.now() - started, status: r.status };
}

let emu: RunningEmulator | undefined;
afterEach(async () => {
  await emu?.stop();
  emu = undefined;
});

test('at a time scale the clock passes that many times as fast, and the rate window rolls on it', async () => {
  emu = await startEmulator({ timeScale: 600, rateLimit: { requests: 2, seconds: 60 } });
  const t0 = await clockOf(emu);
  await sleep(200);
  // 0.2 s of real time is two minutes of the emulator's.
  expect(await clockOf(emu) - t0).toBeGreaterThanOrEqual(110);
  const t = await token(emu); // request 1
  expect((await timed(emu, t)).status).toBe(200);
  const limited = await fetch(`${emu.url}/account`, { headers: { authorization: `Bearer ${t}` } });
  expect(limited.status).toBe(429);
  // Retry-After is in the service's seconds; a client on the same clock waits it in 1/600 of the time.
  const retryAfter = Number(limited.headers.get('retry-after'));
  expect(retryAfter).toBeGreaterThanOrEqual(1);
  await sleep(((retryAfter + 1) * 1000) / 600 + 20);
  expect((await timed(emu, t)).status).toBe(200);
});

test('latency: every service request waits its service time (shrunk by the time scale); the admin API does not', async () => {
  emu = await startEmulator({ latency: { ms: 300 }, rateLimit: 'off' });
  const t = await token(emu);
  const slow = await timed(emu, t);
  expect(slow.ms).toBeGreaterThanOrEqual(290);
  const adminStarted = performance.now();
  await clockOf(emu);
  expect(performance.now() - adminStarted).toBeLessThan(250);
  await emu.stop();
  emu = await startEmulator({ latency: { ms: 3000, jitterMs: 1000 }, timeScale: 100, rateLimit: 'off' });
  const t2 = await token(emu);
  const scaled = [await timed(emu, t2), await timed(emu, t2), await timed(emu, t2)];
  // 2 to 4 s of service time at 100: 20 to 40 ms each (plus the request's own time).
  for (const s of scaled) {
    expect(s.status).toBe(200);
    expect(s.ms).toBeGreaterThanOrEqual(19);
    expect(s.ms).toBeLessThan(2000);
  }
});

test('a state file keeps where the scaled clock stood: the next emulator goes on from there', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'dpi-clock-'));
  try {
    const stateFile = join(dir, 'state.json');
    emu = await startEmulator({ timeScale: 3600, stateFile, rateLimit: 'off' });
    await sleep(100);
    const readAt = Date.now() / 1000;
    const ahead = await clockOf(emu);
    // 0.1 s at 3600 is six minutes.
    expect(ahead - Date.now() / 1000).toBeGreaterThan(300);
    await emu.stop();
    emu = await startEmulator({ stateFile, rateLimit: 'off' });
    const next = await clockOf(emu);
    expect(next).toBeGreaterThanOrEqual(ahead);
    // Saved as it stopped, so exact: not moved on by the two save intervals (two hours at 3600) a kill may lose.
    expect(next).toBeLessThan(ahead + (Date.now() / 1000 - readAt) * 3600 + 60);
  } finally {
    await emu?.stop();
    emu = undefined;
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a file an emulator left as it stopped no longer says so once the next one runs: killed at once, its clock does not go back', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'dpi-clock-'));
  try {
    const stateFile = join(dir, 'state.json');
    emu = await startEmulator({ timeScale: 3600, stateFile, rateLimit: 'off' });
    await emu.stop();
    emu = await startEmulator({ timeScale: 3600, stateFile, rateLimit: 'off' });
    // Killed before its first periodic save: what it left on disk is what the next one finds.
    copyFileSync(stateFile, join(dir, 'left.json'));
    const killedAt = await clockOf(emu);
    await emu.stop();
    emu = await startEmulator({ stateFile: join(dir, 'left.json'), rateLimit: 'off' });
    expect(await clockOf(emu)).toBeGreaterThanOrEqual(killedAt);
  } finally {
    await emu?.stop();
    emu = undefined;
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a killed emulator\'s scaled clock does not go back: it is saved every second, and the next one starts past any loss', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'dpi-clock-'));
  try {
    const stateFile = join(dir, 'state.json');
    emu = await startEmulator({ timeScale: 3600, stateFile, rateLimit: 'off' });
    // No change for 1.5 s (4.2 hours of its clock): only the periodic save keeps the clock.
    await sleep(1500);
    // Killed here: what it left on disk is what the next one finds.
    const killedAt = await clockOf(emu);
    copyFileSync(stateFile, join(dir, 'left.json'));
    await emu.stop();
    emu = await startEmulator({ stateFile: join(dir, 'left.json'), rateLimit: 'off' });
    expect(await clockOf(emu)).toBeGreaterThanOrEqual(killedAt);
  } finally {
    await emu?.stop();
    emu = undefined;
    rmSync(dir, { recursive: true, force: true });
  }
});

test('the options are checked, naming the value', async () => {
  await expect(startEmulator({ timeScale: 0 })).rejects.toThrow('timeScale must be a number from 1 to 3600 (got 0)');
  await expect(startEmulator({ latency: { ms: -1 } })).rejects.toThrow('latency must be { ms, jitterMs? }');
  expect(parseLatency('200~100')).toEqual({ ms: 200, jitterMs: 100 });
  expect(parseLatency('50')).toEqual({ ms: 50 });
  for (const bad of ['', '~5', '1~', 'x', '-5']) expect(() => parseLatency(bad)).toThrow('expected MS or MS~JITTER');
  expect(parseTimeScale('60')).toBe(60);
  for (const bad of ['0', '', 'x', '3601']) expect(() => parseTimeScale(bad)).toThrow('expected a number from 1 to 3600');
});

test('a request still waiting (a fault\'s delay, the latency) when the emulator is reset is dropped, not applied to the new state', async () => {
  emu = await startEmulator({ rateLimit: 'off' });
  const t = await token(emu);
  await fetch(`${emu.url}/_emulator/faults`, {
    method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ pathPrefix: '/account', delayMs: 400 }),
  });
  const late = fetch(`${emu.url}/account`, { headers: { authorization: `Bearer ${t}` } }).then((r) => r.status, () => 'network error');
  await sleep(100);
  await fetch(`${emu.url}/_emulator/reset`, { method: 'POST' });
  expect(await late).toBe('network error');
  await emu.stop();
  emu = await startEmulator({ rateLimit: 'off', latency: { ms: 400 } });
  const t2 = await token(emu);
  const slow = fetch(`${emu.url}/account`, { headers: { authorization: `Bearer ${t2}` } }).then((r) => r.status, () => 'network error');
  await sleep(100);
  await fetch(`${emu.url}/_emulator/reset`, { method: 'POST' });
  expect(await slow).toBe('network error');
  // Requests after the reset are served.
  expect((await timed(emu, await token(emu))).status).toBe(200);
});
