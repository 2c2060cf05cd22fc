/** The benchmark cases. Each compares two variants side by side against one running emulator. */
import { spawn, spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { DpiClient, DpiClientOptions, endpointsFromBase } from '../src/client';
import { DEFAULT_REFRESH_TOKEN } from '../src/emulator';
import { AbResult, runAb, VariantRun } from './lib/ab';
import { countRequests, EmulatorAdmin, LoggedRequest, TxReport } from './lib/admin';
import { formatMs, formatRatio, median, seededRandom } from './lib/stats';
import { findPackageRoot } from '../src/local/handler';

/** What every case gets. */
export interface CaseContext {
  url: string;
  admin: EmulatorAdmin;
  rounds: number;
  /** Epoch ms after which no new round starts. */
  deadline: number;
}

const AUTH_PATH = '/auth/api/ref';
const ACCOUNT_PATH = '/account';
const TX_PATH = '/service/transactions/tx';
/** Subscription 8601 of the default fixtures belongs to account 1001 (the default refresh token's). */
const TX_SUBSCRIPTION = 8601;
/** The service's page size of a transaction listing without `limit` (what `dpi tx` and the fetch loop get). */
const TX_DEFAULT_LIMIT = 50;

function client(ctx: CaseContext, extra: Partial<DpiClientOptions> = {}): DpiClient {
  return new DpiClient({ endpoints: endpointsFromBase(ctx.url), refreshToken: DEFAULT_REFRESH_TOKEN, ...extra });
}

/** Clears the request log, runs `work` (timed), reads the log and derives the counts. */
async function measured(ctx: CaseContext, ops: number, work: () => Promise<void>,
  counts: (log: LoggedRequest[]) => Record<string, number>): Promise<VariantRun> {
  await ctx.admin.clearLog();
  const t0 = performance.now();
  await work();
  const elapsed = performance.now() - t0;
  return { perOpMs: elapsed / ops, counts: counts(await ctx.admin.log()) };
}

function expectAccount(id: string): void {
  if (id !== '1001') throw new Error(`GET /account returned account ${id}, expected 1001`);
}

const authAndAccount = (log: LoggedRequest[]): Record<string, number> => ({
  'auth exchanges': countRequests(log, 'POST', AUTH_PATH),
  'GET /account': countRequests(log, 'GET', ACCOUNT_PATH),
});

/** 1. N sequential lookups: one shared client (JWT cached) vs a fresh client per call. */
export async function jwtCaching(ctx: CaseContext, n = 200): Promise<AbResult> {
  return runAb({
    title: `1. JWT caching: ${n} sequential client.account.get()`,
    op: 'one lookup',
    rounds: ctx.rounds,
    deadline: ctx.deadline,
    a: {
      label: 'A one shared client',
      run: () => measured(ctx, n, async () => {
        const c = client(ctx);
        for (let i = 0; i < n; i++) expectAccount((await c.account.get()).id);
      }, authAndAccount),
    },
    b: {
      label: 'B fresh client per call',
      run: () => measured(ctx, n, async () => {
        for (let i = 0; i < n; i++) expectAccount((await client(ctx).account.get()).id);
      }, authAndAccount),
    },
    expect: {
      a: { 'auth exchanges': 1, 'GET /account': n },
      b: { 'auth exchanges': n, 'GET /account': n },
    },
  });
}

/** 2. C concurrent lookups: on one fresh client (one shared exchange) vs on C fresh clients. */
export async function concurrentTokenSharing(ctx: CaseContext, c = 50): Promise<AbResult> {
  return runAb({
    title: `2. Concurrent token sharing: ${c} concurrent client.account.get()`,
    op: 'one lookup (batch time / 50)',
    rounds: ctx.rounds,
    deadline: ctx.deadline,
    a: {
      label: 'A one fresh client',
      run: () => measured(ctx, c, async () => {
        const shared = client(ctx);
        const got = await Promise.all(Array.from({ length: c }, () => shared.account.get()));
        got.forEach((r) => expectAccount(r.id));
      }, authAndAccount),
    },
    b: {
      label: `B ${c} fresh clients`,
      run: () => measured(ctx, c, async () => {
        const got = await Promise.all(Array.from({ length: c }, () => client(ctx).account.get()));
        got.forEach((r) => expectAccount(r.id));
      }, authAndAccount),
    },
    expect: {
      a: { 'auth exchanges': 1, 'GET /account': c },
      b: { 'auth exchanges': c, 'GET /account': c },
    },
  });
}

/** Ingests `count` TX reports for one subscription through the admin API (batches of 500 reports per request). */
async function ingest(ctx: CaseContext, count: number): Promise<number> {
  const t0 = performance.now();
  const base = Math.floor(Date.now() / 1000) - 2 * 86_400;
  const statuses = ['SUCCESS', 'PROCESSED', 'NO_DATA', 'ERROR'];
  for (let from = 0; from < count; from += 500) {
    const batch: TxReport[] = [];
    for (let i = from; i < Math.min(count, from + 500); i++) {
      batch.push({
        id: `bench-tx-${String(i).padStart(6, '0')}`,
        sender: 'scheduler',
        status: statuses[i % statuses.length],
        timestamp: base + i * 7,
        subscription_id: TX_SUBSCRIPTION,
        payload_name: 'orders',
        job_id: `j-bench-${i % 10}`,
      });
    }
    await ctx.admin.ingestTx(batch);
  }
  return performance.now() - t0;
}

/** 3. List every TX record of a subscription with `tx.iterate` at limit 200 vs limit 50. */
export async function txListing(ctx: CaseContext, records = 2000): Promise<AbResult> {
  const ingestMs = await ingest(ctx, records);
  const c = client(ctx);
  await c.account.get(); // exchange once, outside the measurement
  const listAll = (limit: number) => () => measured(ctx, 1, async () => {
    let n = 0;
    for await (const tx of c.tx.iterate({ subscription_id: TX_SUBSCRIPTION, limit })) {
      if (tx.subscription_id !== TX_SUBSCRIPTION) throw new Error(`TX ${tx.id} of subscription ${tx.subscription_id}`);
      n++;
    }
    if (n !== records) throw new Error(`listed ${n} TX records at limit ${limit}, expected ${records}`);
  }, (log) => ({
    'page requests': countRequests(log, 'GET', TX_PATH),
    'auth exchanges': countRequests(log, 'POST', AUTH_PATH),
  }));
  const result = await runAb({
    title: `3. Transaction listing: tx.iterate over ${records} records`,
    op: `one full listing (${records} records)`,
    rounds: ctx.rounds,
    deadline: ctx.deadline,
    a: { label: 'A limit 200', run: listAll(200) },
    b: { label: 'B limit 50', run: listAll(50) },
    expect: {
      a: { 'page requests': Math.max(1, Math.ceil(records / 200)), 'auth exchanges': 0 },
      b: { 'page requests': Math.max(1, Math.ceil(records / 50)), 'auth exchanges': 0 },
    },
  });
  result.notes.push(`setup: ingested ${records} TX reports via POST /_emulator/tx in ${formatMs(ingestMs)} (not measured)`);
  return result;
}

/** 4. N lookups with a 503 injected before every k-th call (retried after a small backoff) vs no faults. */
export async function retryOverhead(ctx: CaseContext, n = 100, every = 5, baseDelayMs = 5): Promise<AbResult> {
  const variant = (faults: boolean) => async (): Promise<VariantRun> => {
    let sleptMs = 0;
    const c = client(ctx, {
      baseDelayMs,
      random: seededRandom(42),
      sleep: (ms) => {
        sleptMs += ms;
        return new Promise((resolve) => setTimeout(resolve, ms));
      },
    });
    await c.account.get(); // exchange outside the measurement
    await ctx.admin.clearLog();
    let elapsed = 0;
    for (let i = 1; i <= n; i++) {
      // The fault is registered between calls, outside the timed section.
      if (faults && i % every === 0) await ctx.admin.addFault({ method: 'GET', pathPrefix: ACCOUNT_PATH, status: 503, count: 1 });
      const t0 = performance.now();
      expectAccount((await c.account.get()).id);
      elapsed += performance.now() - t0;
    }
    const log = await ctx.admin.log();
    return {
      perOpMs: elapsed / n,
      counts: {
        'attempts (GET /account)': countRequests(log, 'GET', ACCOUNT_PATH),
        '503 answers': countRequests(log, 'GET', ACCOUNT_PATH, 503),
        'backoff slept (ms)': sleptMs,
      },
    };
  };
  const result = await runAb({
    title: `4. Retry overhead: ${n} client.account.get(), 503 on every ${every}th call (baseDelayMs ${baseDelayMs})`,
    op: 'one lookup',
    rounds: ctx.rounds,
    deadline: ctx.deadline,
    a: { label: 'A no faults', run: variant(false) },
    b: { label: `B 503 on every ${every}th call`, run: variant(true) },
    expect: {
      a: { 'attempts (GET /account)': n, '503 answers': 0 },
      b: { 'attempts (GET /account)': n + Math.floor(n / every), '503 answers': Math.floor(n / every) },
    },
  });
  await ctx.admin.clearFaults();
  return result;
}

/** 5. Start-up of the bundled `dpi` (`dpi --version`) vs a bare `node -e ''`, 10 process starts per round. */
export async function cliStartup(ctx: CaseContext, n = 10): Promise<AbResult> {
  const cli = join(findPackageRoot(), 'assets', 'cli', 'dpi', 'index.js');
  const start = (args: string[]): void => {
    const r = spawnSync(process.execPath, args, { encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`${args.join(' ')} exited ${r.status}: ${r.stderr}`);
  };
  const timed = async (args: string[]): Promise<VariantRun> => {
    const t0 = performance.now();
    for (let i = 0; i < n; i++) start(args);
    return { perOpMs: (performance.now() - t0) / n, counts: { starts: n } };
  };
  const result = await runAb({
    title: `5. Command-line start-up: ${n} process starts`,
    op: 'one start',
    rounds: ctx.rounds,
    deadline: ctx.deadline,
    a: { label: 'A dpi --version (bundled)', run: () => timed([cli, '--version']) },
    b: { label: 'B node -e \'\'', run: () => timed(['-e', '']) },
    expect: { a: { starts: n }, b: { starts: n } },
  });
  // The paired ratio the other way round: what dpi costs over a bare start (A/B of each round, median).
  result.notes.push(`dpi/node = A/B (median of rounds) ${formatRatio(median(result.ratios.map((r) => 1 / r)))}; target <= 1.20`);
  return result;
}

/**
 * The plain fetch loop of case 6: one token exchange, then every page of the subscription's transactions (the pages
 * `dpi tx` follows: no limit, `meta.next_cursor` until null), the records flattened and printed as one JSON array.
 */
const FETCH_LOOP = `
const base = process.env.DPI_BASE_URL;
(async () => {
  const auth = await (await fetch(base + '/auth/api/ref', { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json' },
    body: JSON.stringify({ data: { type: 'APIAuth', attributes: { refresh_token: process.env.DPI_REFRESH_TOKEN } } }) })).json();
  const headers = { authorization: 'Bearer ' + auth.data.attributes.token, accept: 'application/json' };
  const out = [];
  let cursor;
  do {
    const q = new URLSearchParams({ subscription_id: process.argv[1] });
    if (cursor) q.set('cursor', cursor);
    const page = await (await fetch(base + '/service/transactions/tx?' + q, { headers })).json();
    for (const r of page.data) out.push({ id: r.id, ...r.attributes });
    cursor = page.meta.next_cursor;
  } while (cursor);
  process.stdout.write(JSON.stringify(out, null, 2) + '\\n');
})().catch((e) => { console.error(e); process.exit(1); });
`;

/** 6. `dpi tx --json` over a subscription's records (the bundled CLI, a process) vs a plain fetch loop (a process) over the same pages. */
export async function txCli(ctx: CaseContext, records = 10_000): Promise<AbResult> {
  const ingestMs = await ingest(ctx, records);
  const cli = join(findPackageRoot(), 'assets', 'cli', 'dpi', 'index.js');
  const env = { ...process.env, DPI_BASE_URL: ctx.url, DPI_REFRESH_TOKEN: DEFAULT_REFRESH_TOKEN, NO_COLOR: '1' };
  const run = (args: string[]) => () => measured(ctx, 1, async () => {
    // Asynchronous spawn: the emulator answers from this process meanwhile.
    const out = await new Promise<string>((resolve, reject) => {
      const child = spawn(process.execPath, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
      const chunks: Buffer[] = [];
      let err = '';
      child.stdout.on('data', (c: Buffer) => chunks.push(c));
      child.stderr.on('data', (c: Buffer) => { err += String(c); });
      child.once('error', reject);
      child.once('close', (code) => (code === 0 ? resolve(Buffer.concat(chunks).toString('utf8')) : reject(new Error(`${args[0]} exited ${code}: ${err}`))));
    });
    const listed = JSON.parse(out) as Array<{ subscription_id?: number }>;
    if (listed.length !== records) throw new Error(`listed ${listed.length} TX records, expected ${records}`);
  }, (log) => ({
    'page requests': countRequests(log, 'GET', TX_PATH),
    'auth exchanges': countRequests(log, 'POST', AUTH_PATH),
  }));
  const pages = Math.ceil(records / TX_DEFAULT_LIMIT);
  const result = await runAb({
    title: `6. dpi tx --json over ${records} records vs a plain fetch loop over the same pages (both a process)`,
    op: `one full listing (${records} records, ${pages} pages)`,
    rounds: ctx.rounds,
    deadline: ctx.deadline,
    a: { label: 'A dpi tx --json', run: run([cli, 'tx', '--subscription', String(TX_SUBSCRIPTION), '--json']) },
    b: { label: 'B fetch loop', run: run(['-e', FETCH_LOOP, String(TX_SUBSCRIPTION)]) },
    expect: {
      a: { 'page requests': pages, 'auth exchanges': 1 },
      b: { 'page requests': pages, 'auth exchanges': 1 },
    },
  });
  result.notes.push(`setup: ingested ${records} TX reports via POST /_emulator/tx in ${formatMs(ingestMs)} (not measured); target: A/B <= 1.1`);
  return result;
}
