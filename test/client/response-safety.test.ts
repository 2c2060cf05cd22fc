/**
 * What the client does with an answer it should not trust: a redirect is never followed (the token exchange's POST
 * body carries the refresh token, every other call a bearer token), a body is read up to a limit, and the service's
 * text loses its control characters before it reaches an error (and so a terminal or a log).
 */
import * as http from 'node:http';
import { AddressInfo } from 'node:net';
import { ScriptedServer } from './scripted-server';
import { DpiClient, endpointsFromBase, ServiceError } from '../../src/client';
import { MAX_RESPONSE_BYTES, readLimited, redirectTarget } from '../../src/client/response';

const REFRESH = 'rt-redirect-secret-refresh-token';

/** A second server (127.0.0.1, port 0) that records every request it receives, whatever it is. */
class Recorder {
  public static async start(): Promise<Recorder> {
    const r = new Recorder();
    await new Promise<void>((resolve) => r.server.listen(0, '127.0.0.1', resolve));
    return r;
  }
  public readonly received: Array<{ method: string; url: string; headers: http.IncomingHttpHeaders; body: string }> = [];
  private readonly server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      this.received.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ data: { type: 'APIAuth', attributes: { token: 'stolen' } } }));
    });
  });
  public get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }
  public async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

let server: ScriptedServer;
let other: Recorder;
beforeEach(async () => {
  server = await ScriptedServer.start();
  other = await Recorder.start();
});
afterEach(async () => {
  await server.close();
  await other.close();
});

const client = (): DpiClient => new DpiClient({
  endpoints: endpointsFromBase(server.url), refreshToken: REFRESH, baseDelayMs: 1, sleep: async () => undefined,
});

async function caught(p: Promise<unknown>): Promise<ServiceError> {
  try {
    await p;
  } catch (e) {
    expect(e).toBeInstanceOf(ServiceError);
    return e as ServiceError;
  }
  throw new Error('expected a ServiceError');
}

describe('redirects are never followed', () => {
  test.each([307, 308])('a %i of the token exchange: the other address receives nothing; the error names the status and the address, not the token', async (status) => {
    server.on('POST', '/auth/api/ref', { status, headers: { location: `${other.url}/auth/api/ref?refresh_token=${REFRESH}#x` } });
    const err = await caught(client().account.get());
    expect(other.received).toEqual([]);
    expect(server.exchanges).toHaveLength(1);
    expect(err).toMatchObject({ status, retryable: false, ambiguous: false, method: 'POST', path: '/auth/api/ref' });
    expect(err.message).toContain(`POST /auth/api/ref was answered with a redirect (${status}) to ${other.url}/auth/api/ref: the client follows no redirect`);
    for (const text of [err.message, JSON.stringify(err), String(err.stack)]) {
      expect(text).not.toContain(REFRESH);
    }
  });

  test.each([301, 302, 303, 307, 308])('a %i of a call with a bearer token: nothing reaches the other address, the call is not sent again', async (status) => {
    server.on('GET', '/account', { status, headers: { location: `${other.url}/account` } });
    const err = await caught(client().account.get());
    expect(other.received).toEqual([]);
    expect(server.seen('GET', '/account')).toHaveLength(1);
    expect(err.status).toBe(status);
    expect(err.message).toContain(`to ${other.url}/account`);
  });

  test('a redirect of a creating POST: 307/308 were not processed; any other may follow one that was (ambiguous)', async () => {
    const attrs = { account: 1001, user: 2001, product: 3001, status: 'active' as const, date_start: '2026-01-01T00:00:00Z' };
    server.on('POST', '/v2/sub', { status: 307, headers: { location: `${other.url}/v2/sub` } }, { status: 303, headers: { location: '/v2/sub/9' } });
    expect(await caught(client().subscriptions.create(attrs))).toMatchObject({ status: 307, ambiguous: false });
    const err = await caught(client().subscriptions.create(attrs));
    expect(err).toMatchObject({ status: 303, ambiguous: true });
    expect(err.message).toContain(`to ${server.url}/v2/sub/9`);
    expect(other.received).toEqual([]);
  });

  test('redirectTarget shows scheme, host and path only', () => {
    expect(redirectTarget('https://u:p@evil.example:8443/a/b?refresh_token=x#f', 'https://api.example/auth')).toBe('https://evil.example:8443/a/b');
    expect(redirectTarget('/x?y=1', 'http://127.0.0.1:1/auth')).toBe('http://127.0.0.1:1/x');
    expect(redirectTarget(null, 'http://h/')).toBe('no Location given');
    expect(redirectTarget('http://[bad', 'http://h/')).toBe('an address that is not a URL');
  });
});

describe('response bodies are read up to a limit', () => {
  test('a body over the limit (declared or streamed) is not read: the call fails naming the limit', async () => {
    const big = 'x'.repeat(MAX_RESPONSE_BYTES + 1);
    server.on('GET', '/account', { status: 200, body: big });
    const err = await caught(client().account.get());
    expect(err.message).toBe(`GET /account answered 200 with a body larger than ${MAX_RESPONSE_BYTES} bytes (the client's limit); it was not read`);
    expect(err.retryable).toBe(false);
    // Streamed without a length: cut at the limit.
    const chunks = (n: number): ReadableStream<Uint8Array> => new ReadableStream({
      start(c) {
        for (let i = 0; i < n; i++) c.enqueue(new Uint8Array(1024));
        c.close();
      },
    });
    expect(await readLimited(new Response(chunks(5)), 4096)).toBeUndefined();
    expect(await readLimited(new Response(chunks(4)), 4096)).toHaveLength(4096);
    expect(await readLimited(new Response('\ufeff{"a":1}'), 100)).toBe('{"a":1}');
    expect(MAX_RESPONSE_BYTES).toBe(16 * 1024 * 1024);
  });
});

describe('the service\'s text loses its control characters', () => {
  test('an error message with ESC sequences, C1 controls and line breaks reaches the error as plain text', async () => {
    server.on('GET', '/account', { status: 404, body: { errors: [{ detail: 'gone\u001b[2J\u001b]0;owned\u0007\r\nfake: line\u009b31m' }] } });
    const err = await caught(client().account.get());
    expect(err.serviceMessage).toBe('gone [2J ]0;owned   fake: line 31m');
    expect(err.message).not.toMatch(/[\u0000-\u001f\u007f-\u009f]/);
    server.on('GET', '/account', { status: 400, headers: { 'content-type': 'text/plain' }, body: 'plain\u001b[31mred' });
    expect((await caught(client().account.get())).serviceMessage).toBe('plain [31mred');
  });
});
