import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
// fastify is bundled into the dpi CLI by esbuild, so a devDependency is enough.
// eslint-disable-next-line import/no-extraneous-dependencies
import Fastify, { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { browserRefusal, isLoopbackHost } from './browser-guard';
import { checkedLatency, CLOCK_SAVE_MS, clockLostAtMost, EmulatorClock, latencyOf } from './clock';
import { ApiError, Ctx, DEFAULT_RATE_LIMIT, errorsBody, fail, isObj, RateLimit, READ_MODES, titleOf } from './core';
import { applyFixtures } from './domain';
import { releaseHeld, takeFault, waitAsFaultSays } from './faults';
import { FixturesMerge, mergeIntoSavedState } from './fixture-merge';
import { DEFAULT_FIXTURES } from './fixtures';
import { verifyJwt, signJwt } from './jwt';
import type { EmulatorOptions, RunningEmulator } from './options';
import { registerAdmin, snapshot } from './routes/admin';
import { registerCatalogRoutes } from './routes/catalog';
import { registerHealthcheckRoutes } from './routes/healthchecks';
import { registerHistoryRoutes, refreshHistory } from './routes/history';
import { registerJobRoutes } from './routes/jobs';
import { registerMarketplaceRoutes } from './routes/marketplace';
import { registerNotificationRoutes } from './routes/notifications';
import { registerSubscriptionRoutes } from './routes/subscriptions';
import { registerTxRoutes } from './routes/transactions';
import { serveV1Aliases } from './routes/v1-aliases';
import { emptyState } from './state';
import { SavedAddress, savedAddress, SavedState, savedHits, windowToSave, writeStateFile, writeStateFileSync } from './state-file';
import { lockStateFile } from './state-lock';

export type { EmulatorOptions, RunningEmulator } from './options';

export { describeFixturesMerge } from './fixture-merge';

/** The read modes `EmulatorOptions.reads` accepts. */
export { READ_MODES } from './core';

/** The request log keeps the latest entries only. */
export const MAX_LOG = 100_000;
const MUTATING = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/** Starts the emulator on real HTTP. */
export async function startEmulator(opts: EmulatorOptions = {}): Promise<RunningEmulator> {
  const reads = opts.reads ?? 'minimal';
  if (!READ_MODES.includes(reads)) throw new Error(`reads must be one of ${READ_MODES.join(', ')} (got ${String(opts.reads)})`);
  const latency = checkedLatency(opts.latency);
  let clock = new EmulatorClock(opts.timeScale, opts.now);
  const now = (): number => clock.now();
  const ctx: Ctx = {
    s: emptyState(),
    reads,
    now,
    sleep: (ms) => clock.sleep(ms),
    exactNow: () => clock.exact(),
    tokenTtlSeconds: opts.tokenTtlSeconds ?? 3600,
    secret: randomBytes(32),
    requests: [],
    faults: [],
    held: [],
    rateLimit: opts.rateLimit === 'off' ? undefined : checkedRateLimit(opts.rateLimit ?? DEFAULT_RATE_LIMIT),
    hits: new Map(),
    pagination: opts.pagination !== false,
  };
  const seed = (): void => {
    ctx.s = emptyState();
    applyFixtures(ctx, DEFAULT_FIXTURES);
    if (opts.fixtures) applyFixtures(ctx, opts.fixtures);
  };
  let fixturesMerge: FixturesMerge | undefined;
  let loaded: SavedState | undefined;
  // One emulator per state file (state-lock.ts); released on stop, or here when the start fails.
  const unlock = opts.stateFile ? lockStateFile(opts.stateFile) : undefined;
  try {
    if (opts.stateFile && existsSync(opts.stateFile)) {
      try {
        loaded = JSON.parse(readFileSync(opts.stateFile, 'utf8')) as SavedState;
      } catch (e) {
        throw new Error(`cannot load emulator state file ${opts.stateFile}: ${(e as Error).message}`);
      }
      if (!isObj(loaded) || !isObj(loaded.state)) throw new Error(`emulator state file ${opts.stateFile} has no state object`);
      ctx.s = { ...emptyState(), ...loaded.state };
      if (opts.now === undefined && typeof loaded.clockOffset === 'number') {
        // A clock saved as its emulator stopped is exact; one saved before a kill may be a save interval behind.
        const lost = loaded.stopped === true ? 0 : clockLostAtMost(loaded.clockScale);
        clock = new EmulatorClock(opts.timeScale, undefined, loaded.clockOffset + lost);
      }
      if (opts.fixtures) fixturesMerge = mergeIntoSavedState(ctx, opts.fixtures, opts.stateFile);
    } else {
      seed();
    }
  } catch (e) {
    unlock?.();
    throw e;
  }
  // State writes: every change is on disk before it is answered (a killed process loses nothing it answered), and
  // the writes are coalesced: changes answered while a write is in progress wait for the next one, which saves them
  // all at once. Each write replaces the file atomically (a temporary file, then a rename).
  let stateWrites = 0;
  // Where it listens (set once it does). Another client's emulator (`otherClients`) writes back what it found.
  let listening: SavedAddress | undefined;
  const windowText = (): Pick<SavedState, 'address' | 'rateHits'> => {
    if (opts.otherClients) return { address: loaded?.address, rateHits: loaded?.rateHits };
    // Without a rate limit it counts nothing: the saved window stays as it was for the next emulator that does.
    return { address: listening, rateHits: ctx.rateLimit ? windowToSave(ctx.hits, now() - ctx.rateLimit.seconds) : loaded?.rateHits };
  };
  const stateText = (stopping = false): string => JSON.stringify({
    state: ctx.s,
    clockOffset: clock.saved(),
    clockScale: clock.scale,
    ...(stopping ? { stopped: true } : {}),
    ...windowText(),
  } satisfies SavedState);
  const save = (stopping = false): void => {
    if (!opts.stateFile) return;
    writeStateFileSync(opts.stateFile, stateText(stopping));
    stateWrites++;
  };
  let writing: Promise<void> = Promise.resolve();
  let queued: Promise<void> | undefined;
  let lastWriteMs = 0;
  const persist = (): Promise<void> => {
    if (!opts.stateFile) return Promise.resolve();
    if (!queued) {
      const next = writing.then(async () => {
        // After a write, the next one waits as long as that one took (the changes answered meanwhile join it): writing
        // a large state never takes more than about half of the time, and a small state is written at once.
        if (lastWriteMs > 0) await new Promise((r) => setTimeout(r, lastWriteMs));
        // From here on, a change waits for the write after this one (this one may have serialized before it).
        queued = undefined;
        const started = Date.now();
        await writeStateFile(opts.stateFile!, stateText());
        stateWrites++;
        lastWriteMs = Math.min(1000, Date.now() - started);
      });
      writing = next.catch(() => undefined);
      queued = next;
    }
    return queued;
  };

  const app = Fastify({ logger: false, bodyLimit: 5 * 1024 * 1024, return503OnClosing: false });
  app.decorateRequest('principal', null);
  app.decorateRequest('logEntry', null);
  app.decorateRequest('dropResponse', false);

  // Every body is JSON (or empty); anything else is a 400.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'string' }, (_req, body, done) => {
    const text = String(body);
    if (text.trim() === '') return done(null, undefined);
    try {
      done(null, JSON.parse(text, (k, v: unknown) => (k === '__proto__' ? undefined : v)));
    } catch (e) {
      done(new ApiError(400, errorsBody(400, `malformed JSON body: ${(e as Error).message}`)), undefined);
    }
  });

  app.setErrorHandler((err: FastifyError | ApiError, _req, reply) => {
    if (err instanceof ApiError) return reply.status(err.status).send(err.body);
    const code = typeof err.statusCode === 'number' && err.statusCode >= 400 && err.statusCode < 500 ? err.statusCode : 500;
    const status = code === 415 ? 400 : code;
    const detail = status === 500 ? `internal error: ${err.message}` : err.message;
    return reply.status(status).send(errorsBody(status, detail));
  });
  app.setNotFoundHandler((req, reply) => {
    reply.status(404).send(errorsBody(404, `${req.method} ${req.url.split('?')[0]}`, 'Not Found'));
  });

  const loopbackOnly = isLoopbackHost(opts.host ?? '127.0.0.1');
  app.addHook('onRequest', async (req: FastifyRequest, reply: FastifyReply) => {
    // A web page in a browser on this machine is a stranger: no DNS rebinding, no cross-site requests (browser-guard.ts).
    const refused = browserRefusal(req.headers, loopbackOnly);
    if (refused) return reply.status(403).send(errorsBody(403, refused, 'Forbidden'));
    const path = req.url.split('?')[0];
    if (path.startsWith('/_emulator/') || path === '/_emulator') return;
    const entry = { method: req.method, path, query: (req.query ?? {}) as Record<string, string | string[]>, status: 0, time: now() };
    ctx.requests.push(entry);
    if (ctx.requests.length > MAX_LOG) ctx.requests.splice(0, ctx.requests.length - MAX_LOG);
    req.logEntry = entry;
    if (latency) {
      const generation = ctx.generation ?? 0;
      await clock.sleep(latencyOf(latency));
      if ((ctx.generation ?? 0) !== generation) return dropConnection(req, reply);
    }
    // Rate limit per client address (rolling window on the emulator clock).
    if (ctx.rateLimit) {
      const t = now();
      const hits = ctx.hits.get(req.ip) ?? [];
      while (hits.length > 0 && hits[0] <= t - ctx.rateLimit.seconds) hits.shift();
      if (hits.length >= ctx.rateLimit.requests) {
        const retryAfter = Math.max(1, Math.min(60, hits[0] + ctx.rateLimit.seconds - t));
        reply.header('Retry-After', String(retryAfter));
        return reply.status(429).send(errorsBody(429, `Rate limit exceeded. Retry after ${retryAfter} seconds.`, 'Too Many Requests'));
      }
      hits.push(t);
      ctx.hits.set(req.ip, hits);
    }
    // Fault injection.
    const f = takeFault(ctx, req.method, path);
    if (f) {
      const generation = ctx.generation ?? 0;
      await waitAsFaultSays(ctx, f);
      // A reset while it waited discarded the state it was sent to: it is dropped (a network error), not applied to
      // the new state.
      if ((ctx.generation ?? 0) !== generation) return dropConnection(req, reply);
      if (f.dropResponse) {
        req.dropResponse = true;
      } else if (f.drop || f.status === 0) {
        return dropConnection(req, reply);
      }
      if (f.status >= 100) {
        if (f.retryAfter !== undefined) reply.header('Retry-After', String(f.retryAfter));
        const body = f.body !== undefined ? f.body : errorsBody(f.status, `injected fault ${f.status}`, titleOf(f.status));
        return reply.status(f.status).send(body);
      }
    }
    if (path === '/auth/api/ref') return;
    const h = req.headers.authorization;
    const m = typeof h === 'string' ? /^Bearer ([^\s]+)$/.exec(h) : null;
    if (!m) return reply.status(401).send(errorsBody(401, 'missing or malformed Authorization: Bearer header'));
    const v = verifyJwt(m[1], ctx.secret, now());
    if (!v.ok) return reply.status(401).send(errorsBody(401, v.reason));
    req.principal = { account: v.claims.account, user: v.claims.user };
    return undefined;
  });
  // "Applied, response lost": the request was handled (state changed); log its real status, save, then destroy the
  // socket so the client sees a network error instead of the answer.
  // Every change is saved before its answer is sent (coalesced with the changes of concurrent requests); a request
  // refused before any route ran (rate limit, authentication) changed nothing.
  app.addHook('onSend', async (req, reply, payload) => {
    if (MUTATING.has(req.method) && opts.stateFile && reply.statusCode !== 429 && reply.statusCode !== 401) await persist();
    if (!req.dropResponse) return payload;
    if (req.logEntry) req.logEntry.status = reply.statusCode;
    req.raw.socket?.destroy();
    return payload;
  });
  app.addHook('onResponse', async (req, reply) => {
    if (req.logEntry) req.logEntry.status = reply.statusCode;
  });

  // Auth exchange.
  app.post('/auth/api/ref', async (req, reply) => {
    const b = req.body;
    let token: unknown;
    if (isObj(b)) token = isObj(b.data) && isObj(b.data.attributes) ? b.data.attributes.refresh_token : b.refresh_token;
    if (typeof token !== 'string' || token === '') fail(400, 'refresh_token is required (data.attributes.refresh_token)');
    const rt = ctx.s.refreshTokens.find((r) => r.token === token);
    if (!rt) fail(401, 'unknown refresh token');
    const iat = now();
    const exp = iat + ctx.tokenTtlSeconds;
    // The vendor's claims (its clients read account_id, user_id and expires_at) alongside the standard ones.
    const claims = { account: rt.accountId, user: rt.userId, iat, exp, account_id: rt.accountId, user_id: rt.userId, expires_at: exp };
    const jwt = signJwt(claims, ctx.secret);
    return reply.status(200).send({ data: { type: 'APIAuth', attributes: { token: jwt, expires_in: exp - iat } } });
  });

  registerAdmin(app, ctx, seed, { set: (n) => clock.set(n), advance: (by) => clock.advance(by) });
  serveV1Aliases(app);
  registerSubscriptionRoutes(app, ctx);
  registerTxRoutes(app, ctx);
  registerMarketplaceRoutes(app, ctx);
  registerNotificationRoutes(app, ctx);
  registerCatalogRoutes(app, ctx);
  registerHistoryRoutes(app, ctx);
  registerJobRoutes(app, ctx);
  if (opts.healthchecks !== false) registerHealthcheckRoutes(app, ctx);

  let address: string;
  const host = opts.host ?? '127.0.0.1';
  const port = opts.port ?? 0;
  // With a state file, the address its last emulator listened on when it is free (the service keeps its address).
  const last = opts.otherClients ? undefined : savedAddress(loaded?.address, host);
  try {
    const again = (e: NodeJS.ErrnoException): Promise<string> => {
      if (e.code !== 'EADDRINUSE' && e.code !== 'EACCES') throw e;
      return app.listen({ host, port });
    };
    address = port !== 0 || !last ? await app.listen({ host, port }) : await app.listen({ host, port: last.port }).catch(again);
  } catch (e) {
    unlock?.();
    throw e;
  }
  const u = new URL(address);
  if (u.hostname === '[::1]' || u.hostname === '::1') u.hostname = '[::1]';
  const url = u.origin;
  listening = { host, port: Number(u.port) };
  // The service's rate window outlives a restart: the requests of the last window still count, at the same address
  // only (clients that pace themselves keep their own count per address: at a new one they start afresh).
  const window = ctx.rateLimit;
  const same = last !== undefined && last.port === listening.port;
  if (window && same && opts.now === undefined && typeof loaded?.clockOffset === 'number') {
    ctx.hits = savedHits(loaded.rateHits, now() - window.seconds, now(), window.requests);
  }
  const movedFrom = last && !same ? Object.assign(new URL(url), { port: String(last.port) }).origin : undefined;
  let stopped = false;
  // Written at once: merged fixtures are on disk before anyone can read the state, and a file that says its emulator
  // stopped (its clock exact) no longer says so while this one runs.
  save();
  // A scaled clock runs on between changes: it is saved every CLOCK_SAVE_MS too, so a killed emulator loses little of it.
  const clockSaves = opts.stateFile && clock.scale > 1 ? setInterval(() => void persist().catch(() => undefined), CLOCK_SAVE_MS) : undefined;
  clockSaves?.unref();
  return {
    url,
    ...(fixturesMerge ? { fixturesMerge } : {}),
    ...(movedFrom ? { movedFrom } : {}),
    async stop() {
      if (stopped) return;
      stopped = true;
      if (clockSaves) clearInterval(clockSaves);
      releaseHeld(ctx);
      await app.close();
      await writing;
      save(true);
      unlock?.();
      // The connections it closed were closed from this end: a client of this process sees that when its event loop
      // next polls for I/O, which the second turn below comes after (the first runs in the turn that closed them).
      // Until then such a client could send a request on one of them, and meet the close, when an emulator started at
      // the same address (see `port`) is up. Clients with their own event loop (worker threads, other processes) see
      // it when they next poll, which an idle one does at once and a frozen Lambda container before its next event.
      for (let turn = 0; turn < 2; turn++) await new Promise((resolve) => setImmediate(resolve));
    },
    stateWrites() {
      return stateWrites;
    },
    state() {
      refreshHistory(ctx);
      return snapshot(ctx);
    },
  };
}

/** Ends a request with a network error: the socket is closed without an answer. */
function dropConnection(req: FastifyRequest, reply: FastifyReply): FastifyReply {
  reply.hijack();
  req.raw.socket.destroy();
  return reply;
}

function checkedRateLimit(r: RateLimit): RateLimit {
  if (!r || !Number.isSafeInteger(r.requests) || !Number.isSafeInteger(r.seconds) || r.requests < 1 || r.seconds < 1) {
    throw new Error(`rateLimit must be 'off' or { requests, seconds } with positive integers (got ${JSON.stringify(r)})`);
  }
  return { requests: r.requests, seconds: r.seconds };
}
