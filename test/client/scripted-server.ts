import * as http from 'node:http';
import { AddressInfo } from 'node:net';

/** A request as the scripted server saw it. */
export interface SeenRequest {
  method: string;
  /** Path without query. */
  path: string;
  /** Raw request target (path and encoded query, exactly as sent). */
  rawUrl: string;
  query: URLSearchParams;
  headers: http.IncomingHttpHeaders;
  body: string;
  /** Time the request was complete, epoch ms. */
  at: number;
}

/** What the server answers. `destroy` closes the socket after reading the request (a lost response). */
export type Reply =
  | { status: number; headers?: Record<string, string>; body?: unknown; delayMs?: number }
  | { destroy: true; delayMs?: number };

/** A reply, or a function computing one from the request. */
export type Script = Reply | ((req: SeenRequest) => Reply | Promise<Reply>);

/** Builds an unsigned JWT (`header.payload.signature`, base64url) carrying `payload`. */
export function makeJwt(payload: Record<string, unknown>): string {
  const b64 = (o: unknown): string => Buffer.from(JSON.stringify(o)).toString('base64url');
  return `${b64({ alg: 'HS256', typ: 'JWT' })}.${b64(payload)}.c2lnbmF0dXJl`;
}

/**
 * A tiny HTTP server on 127.0.0.1 (port 0) that answers from per-route scripts and records every request.
 * Each route holds a queue of replies; the last one repeats. Unscripted routes answer 404.
 * `POST /auth/api/ref` answers by default with a fresh JWT (`exp` = now + `tokenTtlSeconds`), numbered.
 */
export class ScriptedServer {
  /** Starts a server. */
  public static async start(): Promise<ScriptedServer> {
    const s = new ScriptedServer();
    await new Promise<void>((resolve) => s.server.listen(0, '127.0.0.1', resolve));
    return s;
  }

  /** Every request received, in order. */
  public readonly requests: SeenRequest[] = [];
  /** Every token issued by the default auth route. */
  public readonly issuedTokens: string[] = [];
  /** Lifetime of JWTs issued by the default auth route (seconds; `exp` is rounded up). */
  public tokenTtlSeconds = 3600;
  /** Delay of the default auth route, ms. */
  public authDelayMs = 0;
  private readonly routes = new Map<string, Script[]>();
  private readonly server: http.Server;

  private constructor() {
    this.server = http.createServer((req, res) => { void this.handle(req, res); });
  }

  /** Base URL, e.g. `http://127.0.0.1:12345`. */
  public get url(): string {
    const a = this.server.address() as AddressInfo;
    return `http://127.0.0.1:${a.port}`;
  }

  /** Scripts a route (`METHOD /path`, without query); replies are used in order, the last repeats. */
  public on(method: string, path: string, ...scripts: Script[]): this {
    this.routes.set(`${method.toUpperCase()} ${path}`, scripts);
    return this;
  }

  /** Requests seen for a method and path (and not the auth exchange unless asked). */
  public seen(method: string, path: string): SeenRequest[] {
    return this.requests.filter((r) => r.method === method.toUpperCase() && r.path === path);
  }

  /** The token exchanges seen. */
  public get exchanges(): SeenRequest[] {
    return this.seen('POST', '/auth/api/ref');
  }

  /** Closes the server and every open connection. */
  public async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const u = new URL(req.url ?? '/', 'http://x');
    const seen: SeenRequest = {
      method: req.method ?? 'GET',
      path: u.pathname,
      rawUrl: req.url ?? '/',
      query: u.searchParams,
      headers: req.headers,
      body: Buffer.concat(chunks).toString('utf8'),
      at: Date.now(),
    };
    this.requests.push(seen);
    const key = `${seen.method} ${seen.path}`;
    const queue = this.routes.get(key);
    let script: Script | undefined;
    if (queue && queue.length > 0) script = queue.length > 1 ? queue.shift() : queue[0];
    else if (key === 'POST /auth/api/ref') script = () => this.defaultAuth();
    const reply: Reply = script === undefined
      ? { status: 404, body: { errors: [{ status: '404', title: 'Not Found', detail: key }] } }
      : typeof script === 'function' ? await script(seen) : script;
    if (reply.delayMs) await new Promise((r) => setTimeout(r, reply.delayMs).unref());
    if ('destroy' in reply) {
      req.socket.destroy();
      return;
    }
    const headers: Record<string, string> = { ...(reply.headers ?? {}) };
    let text = '';
    if (reply.body !== undefined) {
      text = typeof reply.body === 'string' ? reply.body : JSON.stringify(reply.body);
      headers['content-type'] ??= 'application/json';
    }
    if (!res.destroyed) {
      res.writeHead(reply.status, headers);
      res.end(text);
    }
  }

  private defaultAuth(): Reply {
    const token = makeJwt({ sub: 'acct', n: this.issuedTokens.length + 1, exp: Math.ceil(Date.now() / 1000) + this.tokenTtlSeconds });
    this.issuedTokens.push(token);
    return { status: 200, delayMs: this.authDelayMs, body: { data: { type: 'APIAuth', attributes: { token } } } };
  }
}
