/**
 * The service addresses of `dpi`: the refresh token (and the access tokens made from it) never goes to a plain
 * http:// address of another host.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { dpi, startCliEmulator } from './helpers';
import { requireSecureTransport, resolveEndpoints } from '../../src/cli/connection';
import { DEFAULT_REFRESH_TOKEN, RunningEmulator } from '../../src/emulator';
import { isLoopbackHost } from '../../src/local/transport';

const SECRET = 'rt-do-not-print-this-refresh-token';

describe('isLoopbackHost', () => {
  test.each(['127.0.0.1', '127.1.2.3', '127.255.255.254', 'localhost', 'LOCALHOST', 'localhost.', '[::1]'])('%s is this machine', (h) => {
    expect(isLoopbackHost(h)).toBe(true);
  });
  test.each(['128.0.0.1', '10.0.0.1', '0.0.0.0', '127.0.0.1.example.com', 'localhost.example.com', 'example.com', '[::ffff:7f00:1]', '[::2]', ''])(
    '%s is not', (h) => {
      expect(isLoopbackHost(h)).toBe(false);
    });
  test('URL normalisation: other spellings of a loopback address are recognised through URL.hostname', () => {
    for (const u of ['http://2130706433:8080/', 'http://[0:0:0:0:0:0:0:1]/', 'http://LocalHost:9/', 'http://127.1/']) {
      expect(() => requireSecureTransport('--base-url', u)).not.toThrow();
    }
  });
});

describe('resolveEndpoints', () => {
  test.each(['http://127.0.0.1:4010', 'http://localhost:4010/', 'http://[::1]:4010', 'http://127.8.9.10', 'https://api.example.com', 'https://10.0.0.5:8443'])(
    '%s is accepted', (url) => {
      expect(resolveEndpoints({ baseUrl: url }, {}).accountUrl).toBe(url.replace(/\/+$/, ''));
    });

  test.each([
    ['http://api.example.com', 'http://api.example.com'],
    ['http://10.0.0.5:4010/base/', 'http://10.0.0.5:4010/base/'],
    ['http://0.0.0.0:4010', 'http://0.0.0.0:4010'],
    ['http://localhost.example.com', 'http://localhost.example.com'],
  ])('plain http to %s is refused, naming the URL and https', (url, shown) => {
    expect(() => resolveEndpoints({ baseUrl: url }, {})).toThrow(`--base-url / DPI_BASE_URL: ${shown} is plain http to a host that is not this machine`);
    expect(() => resolveEndpoints({ baseUrl: url }, {})).toThrow(/use an https:\/\/ URL/);
  });

  test('the address that is refused is named by its own flag / variable', () => {
    expect(() => resolveEndpoints({ baseUrl: 'https://api.example.com' }, { DPI_AUTH_URL: 'http://auth.example.com' }))
      .toThrow('--auth-url / DPI_AUTH_URL: http://auth.example.com is plain http');
  });

  test('credentials, query and fragment of a refused URL are not repeated in the message', () => {
    let message = '';
    try {
      resolveEndpoints({ baseUrl: `http://user:${SECRET}@api.example.com:8080/x?token=${SECRET}#${SECRET}` }, {});
    } catch (e) {
      message = (e as Error).message;
    }
    expect(message).toContain('http://api.example.com:8080/x is plain http');
    expect(message).not.toContain(SECRET);
    expect(message).not.toContain('user');
  });
});

describe('dpi commands', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'dpi-connection-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  test('a service command refuses DPI_BASE_URL=http://<other host> before anything is sent (exit 2, no secret printed)', async () => {
    const r = await dpi(['products'], { env: { DPI_BASE_URL: 'http://api.example.com', DPI_REFRESH_TOKEN: SECRET } });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--base-url / DPI_BASE_URL: http://api.example.com is plain http');
    expect(r.stderr).toContain('https://');
    expect(r.stdout + r.stderr).not.toContain(SECRET);
  });

  test('a token from --refresh-token-file is not printed either', async () => {
    const file = join(dir, 'token');
    writeFileSync(file, SECRET, { mode: 0o600 });
    const r = await dpi(['storages', '--base-url', 'http://192.0.2.10:4010', '--refresh-token-file', file], { env: {} });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('http://192.0.2.10:4010 is plain http');
    expect(r.stdout + r.stderr).not.toContain(SECRET);
  });

  test('local-deploy --emulator http://<other host> is refused before the run starts (exit 2)', async () => {
    const r = await dpi(['local-deploy', '--emulator', 'http://emulator.internal:4010', '--app', join(dir, 'cdk.out'), '--state', join(dir, 'state.json')],
      { env: { DPI_REFRESH_TOKEN: SECRET } });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--emulator: http://emulator.internal:4010 is plain http to a host that is not this machine');
    expect(r.stdout + r.stderr).not.toContain(SECRET);
  });

  describe('against the emulator on a loopback address', () => {
    let emu: RunningEmulator;
    beforeAll(async () => {
      emu = await startCliEmulator();
    });
    afterAll(async () => {
      await emu.stop();
    });

    test('plain http is accepted', async () => {
      const r = await dpi(['products', '--json'], { env: { DPI_BASE_URL: emu.url, DPI_REFRESH_TOKEN: DEFAULT_REFRESH_TOKEN } });
      expect(r.stderr).toBe('');
      expect(r.code).toBe(0);
    });
  });
});
