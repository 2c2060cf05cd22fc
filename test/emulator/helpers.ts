import { DEFAULT_REFRESH_TOKEN, OTHER_REFRESH_TOKEN, RunningEmulator, startEmulator, EmulatorOptions } from '../../src/emulator';

export interface Res<T = any> { status: number; body: T; headers: Headers }

/** A started emulator plus small fetch helpers bound to it. */
export class Harness {
  static async start(opts: EmulatorOptions = {}): Promise<Harness> {
    const emu = await startEmulator({ host: '127.0.0.1', port: 0, ...opts });
    const h = new Harness(emu);
    h.token = await h.exchange(DEFAULT_REFRESH_TOKEN);
    h.otherToken = await h.exchange(OTHER_REFRESH_TOKEN);
    return h;
  }

  token = '';
  otherToken = '';
  private constructor(public readonly emu: RunningEmulator) {}

  get url(): string {
    return this.emu.url;
  }

  async exchange(refreshToken: string): Promise<string> {
    const r = await this.raw('POST', '/auth/api/ref', { data: { type: 'APIAuth', attributes: { refresh_token: refreshToken } } });
    if (r.status !== 200) throw new Error(`token exchange failed: ${r.status}`);
    return r.body.data.attributes.token as string;
  }

  async raw(method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<Res> {
    const init: RequestInit = { method, headers: { ...headers } };
    if (body !== undefined) {
      init.body = typeof body === 'string' ? body : JSON.stringify(body);
      (init.headers as Record<string, string>)['content-type'] ??= 'application/json';
    }
    const res = await fetch(this.url + path, init);
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = text === '' ? undefined : JSON.parse(text);
    } catch {
      // keep the text
    }
    return { status: res.status, body: parsed, headers: res.headers };
  }

  /** Authenticated call (default account 1001). */
  api(method: string, path: string, body?: unknown, token = this.token): Promise<Res> {
    return this.raw(method, path, body, { authorization: `Bearer ${token}` });
  }

  /** Authenticated call as the other account (1002). */
  other(method: string, path: string, body?: unknown): Promise<Res> {
    return this.api(method, path, body, this.otherToken);
  }

  admin(method: string, path: string, body?: unknown): Promise<Res> {
    return this.raw(method, `/_emulator${path}`, body);
  }

  async state(): Promise<any> {
    return (await this.admin('GET', '/state')).body;
  }

  stop(): Promise<void> {
    return this.emu.stop();
  }
}

/** Creates a subscription through /v2/sub and returns its numeric ID. */
export async function createSub(h: Harness, attrs: Record<string, unknown>): Promise<number> {
  const r = await h.api('POST', '/v2/sub', {
    data: { type: 'Subscription', attributes: { account: 1001, user: 2001, status: 'active', date_start: '2026-01-01T00:00:00Z', ...attrs } },
  });
  if (r.status !== 201) throw new Error(`create subscription failed: ${r.status} ${JSON.stringify(r.body)}`);
  return Number(r.body.data.id);
}

export const ORDERS_SUB = { product: 3001, remote_identity: 362, storage_group: 501, product_parameters: { marketplace_id: 'ATVPDKIKX0DER' } };

/** What `useHarness` does before each test. */
export interface EachTest {
  /** Reset the emulator to its fixtures (POST /_emulator/reset). */
  reset?: boolean;
  /** Then set its clock to this time (epoch seconds). */
  now?: number;
}

/**
 * The per-file lifecycle of the emulator tests: starts a harness before all tests and hands it to `bind`, stops it
 * after all tests, and does `each` before each test (before any `beforeEach` the file registers afterwards).
 */
export function useHarness(bind: (h: Harness) => void, start: EmulatorOptions = {}, each: EachTest = {}): void {
  let h: Harness;
  beforeAll(async () => {
    h = await Harness.start(start);
    bind(h);
  });
  afterAll(() => h.stop());
  if (each.reset || each.now !== undefined) {
    beforeEach(async () => {
      if (each.reset) await h.admin('POST', '/reset');
      if (each.now !== undefined) await h.admin('POST', '/clock', { now: each.now });
    });
  }
}

/** An access token of the default account, from the emulator at `url` (one request, counted by its rate limit). */
export async function accessToken(url: string): Promise<string> {
  const r = await fetch(`${url}/auth/api/ref`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ data: { type: 'APIAuth', attributes: { refresh_token: DEFAULT_REFRESH_TOKEN } } }),
  });
  return ((await r.json()) as { data: { attributes: { token: string } } }).data.attributes.token;
}
