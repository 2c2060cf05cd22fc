import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { accessToken } from './helpers';
import { DEFAULT_RATE_LIMIT, parseRateLimit, RunningEmulator, startEmulator } from '../../src/emulator';
import { EMBEDDED_EMULATOR_RATE_LIMIT } from '../../src/local/runner-helpers';

const token = (emu: RunningEmulator): Promise<string> => accessToken(emu.url);

/** A limit of 3 requests a minute, for the tests of the window kept with a state file. */
const limit = { requests: 3, seconds: 60 };

/** Exchanges the token and reads the account (2 requests); the read's status. */
async function tokenAndRead(e: RunningEmulator): Promise<number> {
  const t = await token(e);
  return (await fetch(`${e.url}/account`, { headers: { authorization: `Bearer ${t}` } })).status;
}

describe('rate limit', () => {
  let emu: RunningEmulator;
  afterEach(async () => {
    await emu?.stop();
  });

  test('over N requests in the window: 429 with Retry-After and the documented body; the window rolls on the emulator clock', async () => {
    emu = await startEmulator({ rateLimit: { requests: 5, seconds: 10 } });
    const t = await token(emu); // request 1
    const get = (): Promise<Response> => fetch(`${emu.url}/account`, { headers: { authorization: `Bearer ${t}` } });
    for (let i = 0; i < 4; i++) expect((await get()).status).toBe(200);
    const limited = await get();
    expect(limited.status).toBe(429);
    const retryAfter = Number(limited.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(10);
    expect(await limited.json()).toEqual({ errors: [expect.objectContaining({ status: '429', title: 'Too Many Requests' })] });
    // The admin API is never limited; moving the clock past the window frees it.
    const clock = await fetch(`${emu.url}/_emulator/clock`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ advance: 11 }) });
    expect(clock.status).toBe(200);
    expect((await get()).status).toBe(200);
  });

  test('reset clears the window; off disables the limit; the default is the service\'s 1,000 per 5 minutes', async () => {
    emu = await startEmulator({ rateLimit: { requests: 2, seconds: 300 } });
    const t = await token(emu);
    const get = (): Promise<Response> => fetch(`${emu.url}/account`, { headers: { authorization: `Bearer ${t}` } });
    expect((await get()).status).toBe(200);
    expect((await get()).status).toBe(429);
    await fetch(`${emu.url}/_emulator/reset`, { method: 'POST' });
    expect((await get()).status).toBe(200);
    await emu.stop();
    emu = await startEmulator({ rateLimit: 'off' });
    const t2 = await token(emu);
    for (let i = 0; i < 30; i++) expect((await fetch(`${emu.url}/account`, { headers: { authorization: `Bearer ${t2}` } })).status).toBe(200);
    expect(parseRateLimit('1000/300')).toEqual({ requests: 1000, seconds: 300 });
    expect(parseRateLimit('off')).toBe('off');
    for (const bad of ['0/10', '10', 'x/y', '5/0', '-1/5']) expect(() => parseRateLimit(bad)).toThrow('is not N/SECONDS');
    await expect(startEmulator({ rateLimit: { requests: 0, seconds: 5 } })).rejects.toThrow('rateLimit must be');
    // The runner's copy (its request budget for the embedded emulator) is the emulator's default.
    expect(EMBEDDED_EMULATOR_RATE_LIMIT).toEqual(DEFAULT_RATE_LIMIT);
  });

  test('with a state file the address and the window outlive a restart, as the service\'s do; a malformed saved window is ignored', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'dpi-emulator-window-'));
    const stateFile = join(dir, 'emulator-state.json');
    try {
      emu = await startEmulator({ rateLimit: limit, stateFile });
      const url = emu.url;
      expect(await tokenAndRead(emu)).toBe(200); // 2 requests: the token, the read
      await emu.stop();
      emu = await startEmulator({ rateLimit: limit, stateFile, port: 0 });
      // The same address (0 asks for any port: the saved one is free), and the third request (the new emulator's
      // token) fits; the read after it is over the window's 3.
      expect(emu.url).toBe(url);
      expect(emu.movedFrom).toBeUndefined();
      expect(await tokenAndRead(emu)).toBe(429);
      // Once the clock has passed the window (saved with it), the saved requests no longer count.
      await fetch(`${emu.url}/_emulator/clock`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ advance: 61 }) });
      await emu.stop();
      emu = await startEmulator({ rateLimit: limit, stateFile });
      expect(await tokenAndRead(emu)).toBe(200);
      await emu.stop();
      const saved = JSON.parse(readFileSync(stateFile, 'utf8')) as Record<string, unknown>;
      expect(saved.address).toEqual({ host: '127.0.0.1', port: Number(new URL(url).port) });
      expect(saved.stopped).toBe(true);
      expect(Object.values(saved.rateHits as Record<string, number[]>).flat()).toHaveLength(2);
      writeFileSync(stateFile, JSON.stringify({ ...saved, rateHits: { '127.0.0.1': ['x', null, 1e15], 'other': 'y' } }));
      emu = await startEmulator({ rateLimit: limit, stateFile });
      expect(await tokenAndRead(emu)).toBe(200);
      expect(await tokenAndRead(emu)).toBe(429);
    } finally {
      await emu.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('at another address (the saved port taken, or another asked for) the saved window is not kept, and the emulator says where it was', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'dpi-emulator-moved-'));
    const stateFile = join(dir, 'emulator-state.json');
    let squatter: Server | undefined;
    try {
      emu = await startEmulator({ rateLimit: limit, stateFile });
      const url = emu.url;
      expect(await tokenAndRead(emu)).toBe(200);
      await emu.stop();
      // Someone else listens on the saved port now.
      squatter = createServer();
      await new Promise<void>((resolve) => squatter!.listen(Number(new URL(url).port), '127.0.0.1', resolve));
      emu = await startEmulator({ rateLimit: limit, stateFile });
      expect(emu.url).not.toBe(url);
      expect(emu.movedFrom).toBe(url);
      expect(await tokenAndRead(emu)).toBe(200);
      expect(await tokenAndRead(emu)).toBe(429); // its own window: 4 requests
      const moved = emu.url;
      await emu.stop();
      // The new address is the one kept from here on (with its window: the first request is over it, before auth).
      emu = await startEmulator({ rateLimit: limit, stateFile });
      expect(emu.url).toBe(moved);
      expect(emu.movedFrom).toBeUndefined();
      expect((await fetch(`${emu.url}/account`)).status).toBe(429);
      await emu.stop();
      // A start with a given clock does not go on from the saved one: the saved window means nothing to it.
      emu = await startEmulator({ rateLimit: limit, stateFile, now: 2_000_000_000 });
      expect(emu.url).toBe(moved);
      expect(await tokenAndRead(emu)).toBe(200);
    } finally {
      await emu.stop();
      await new Promise((resolve) => squatter?.close(resolve));
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('a state file cannot make it take a privileged port or hold more than the window; an emulator of other clients leaves the saved window as it was', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'dpi-emulator-saved-'));
    const stateFile = join(dir, 'emulator-state.json');
    try {
      emu = await startEmulator({ rateLimit: limit, stateFile });
      await emu.stop();
      const saved = JSON.parse(readFileSync(stateFile, 'utf8')) as Record<string, unknown>;
      const t = Math.floor(Date.now() / 1000);
      // A privileged port is never asked for, whoever wrote the file.
      writeFileSync(stateFile, JSON.stringify({ ...saved, address: { host: '127.0.0.1', port: 80 } }));
      emu = await startEmulator({ rateLimit: limit, stateFile });
      expect(new URL(emu.url).port).not.toBe('80');
      expect(emu.movedFrom).toBeUndefined();
      await emu.stop();
      // 50 saved requests in the window: only the newest 3 (the limit) are kept, and saved again.
      const address = (JSON.parse(readFileSync(stateFile, 'utf8')) as { address: unknown }).address;
      writeFileSync(stateFile, JSON.stringify({ ...saved, address, rateHits: { '127.0.0.1': Array.from({ length: 50 }, (_, i) => t - 50 + i) } }));
      emu = await startEmulator({ rateLimit: limit, stateFile });
      expect((await fetch(`${emu.url}/account`)).status).toBe(429);
      await emu.stop();
      const kept = (JSON.parse(readFileSync(stateFile, 'utf8')) as { rateHits: Record<string, number[]> }).rateHits;
      expect(kept['127.0.0.1']).toEqual([t - 3, t - 2, t - 1]);
      // Other clients (a command line elsewhere): another address, an empty window, and the file's address and window
      // written back as they were.
      const before = JSON.parse(readFileSync(stateFile, 'utf8')) as Record<string, unknown>;
      emu = await startEmulator({ rateLimit: limit, stateFile, otherClients: true });
      expect(emu.url).not.toBe(`http://127.0.0.1:${(address as { port: number }).port}`);
      expect(emu.movedFrom).toBeUndefined();
      expect((await fetch(`${emu.url}/account`)).status).toBe(401);
      await emu.stop();
      const after = JSON.parse(readFileSync(stateFile, 'utf8')) as Record<string, unknown>;
      expect([after.address, after.rateHits]).toEqual([before.address, before.rateHits]);
    } finally {
      await emu.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('only the requests still in the window are saved', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'dpi-emulator-expiry-'));
    const stateFile = join(dir, 'emulator-state.json');
    try {
      emu = await startEmulator({ rateLimit: limit, stateFile });
      expect(await tokenAndRead(emu)).toBe(200);
      await fetch(`${emu.url}/_emulator/clock`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ advance: 61 }) });
      await emu.stop();
      expect((JSON.parse(readFileSync(stateFile, 'utf8')) as { rateHits?: unknown }).rateHits).toEqual({});
    } finally {
      await emu.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
