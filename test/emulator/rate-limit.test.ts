import { accessToken } from './helpers';
import { DEFAULT_RATE_LIMIT, parseRateLimit, RunningEmulator, startEmulator } from '../../src/emulator';
import { EMBEDDED_EMULATOR_RATE_LIMIT } from '../../src/local/runner-helpers';

const token = (emu: RunningEmulator): Promise<string> => accessToken(emu.url);

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
});
