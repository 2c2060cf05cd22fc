/**
 * A web page in a browser is the one stranger that reaches the emulator's loopback port: DNS rebinding (a foreign
 * Host) and cross-site requests (an Origin of another site) are refused; clients that are not browsers are not.
 */
import { request } from 'node:http';
import { RunningEmulator, startEmulator } from '../../src/emulator';
import { browserRefusal, isLoopbackHost } from '../../src/emulator/browser-guard';

let emu: RunningEmulator;
beforeAll(async () => {
  emu = await startEmulator({ port: 0 });
});
afterAll(async () => {
  await emu.stop();
});

/** A raw request (node:http lets the test set Host, as a rebinding browser would send it). */
function send(method: string, path: string, headers: Record<string, string>, body?: string): Promise<{ status: number; text: string }> {
  const u = new URL(emu.url);
  return new Promise((resolve, reject) => {
    const req = request({ host: u.hostname, port: u.port, method, path, headers }, (res) => {
      let text = '';
      res.on('data', (c: Buffer) => { text += c.toString(); });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

describe('browserRefusal', () => {
  test('loopback names', () => {
    expect(['127.0.0.1', '127.8.9.10', 'localhost', 'LOCALHOST', '::1', '[::1]'].every(isLoopbackHost)).toBe(true);
    expect(['0.0.0.0', '10.0.0.1', 'evil.example', '127.0.0.1.evil.example', '::', ''].some(isLoopbackHost)).toBe(false);
  });

  test('Host must be a loopback name while the emulator listens on one; an Origin must be a loopback origin', () => {
    expect(browserRefusal({ host: '127.0.0.1:4000' }, true)).toBeUndefined();
    expect(browserRefusal({ host: 'localhost:4000', origin: 'http://localhost:3000' }, true)).toBeUndefined();
    expect(browserRefusal({ host: '[::1]:4000' }, true)).toBeUndefined();
    expect(browserRefusal({ host: 'evil.example:4000' }, true)).toMatch(/not a loopback address/);
    expect(browserRefusal({}, true)).toMatch(/not a loopback address/);
    expect(browserRefusal({ host: 'evil.example:4000' }, false)).toBeUndefined();
    expect(browserRefusal({ host: '127.0.0.1:4000', origin: 'https://evil.example' }, true)).toMatch(/cross-site/);
    expect(browserRefusal({ host: '127.0.0.1:4000', origin: 'null' }, true)).toMatch(/cross-site/);
    expect(browserRefusal({ 'host': '127.0.0.1:4000', 'sec-fetch-site': 'cross-site' }, true)).toMatch(/cross-site/);
    expect(browserRefusal({ host: 'x', origin: 'https://evil.example' }, false)).toMatch(/cross-site/);
  });
});

describe('the running emulator', () => {
  test('a rebinding page (foreign Host) cannot reset it or read its state; a cross-site text/plain POST cannot add faults', async () => {
    const rebound = await send('POST', '/_emulator/reset', { host: `evil.example:${new URL(emu.url).port}` });
    expect(rebound.status).toBe(403);
    expect((await send('GET', '/_emulator/state', { host: 'evil.example' })).status).toBe(403);
    const csrf = await send('POST', '/_emulator/faults', { 'host': new URL(emu.url).host, 'origin': 'https://evil.example', 'content-type': 'text/plain' },
      JSON.stringify({ pathPrefix: '/v2/sub', status: 500, count: 1000 }));
    expect(csrf.status).toBe(403);
    expect(JSON.parse(csrf.text).errors[0].detail).toMatch(/cross-site request refused/);
    // Nothing was added; clients that are not browsers are served.
    const faults = await send('GET', '/_emulator/faults', { host: new URL(emu.url).host });
    expect(faults.status).toBe(200);
    expect(JSON.parse(faults.text)).toEqual({ faults: [] });
    expect((await fetch(`${emu.url}/_emulator/clock`)).status).toBe(200);
    expect((await send('GET', '/_emulator/clock', { host: `localhost:${new URL(emu.url).port}` })).status).toBe(200);
  });

  test('the service routes are guarded too (a page cannot use the default token through the browser)', async () => {
    const r = await send('POST', '/auth/api/ref', { 'host': new URL(emu.url).host, 'origin': 'https://evil.example', 'content-type': 'text/plain' },
      JSON.stringify({ data: { type: 'APIAuth', attributes: { refresh_token: 'x' } } }));
    expect(r.status).toBe(403);
  });
});
