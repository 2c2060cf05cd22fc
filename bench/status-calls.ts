/**
 * Service calls per run of `dpi status` (account-wide and per subscription) and of the subscription monitor, with and
 * without the healthchecks listing, counted from the emulator's request log (deterministic; no times).
 *
 *   npx ts-node --transpile-only bench/status-calls.ts        # N = 50 subscriptions (BENCH_SUBSCRIPTIONS=1..2000)
 *
 * Each subscription has two payloads (one record each, a tenth of them in ERROR). The token exchange is not counted
 * (one per process or warm container). Exits 1 when a count is not the expected one.
 */
import { runDpi } from '../src/cli/program';
import { BOUND_RUN_ENV } from '../src/contract';
import { DEFAULT_REFRESH_TOKEN, RunningEmulator, startEmulator } from '../src/emulator';
import { monitor, setMetricSink } from '../src/handler/monitor';
import { configureLocalRuntime } from '../src/handler/runtime';

const N = Math.max(1, Math.min(2000, Number(process.env.BENCH_SUBSCRIPTIONS ?? 50) || 50));
const FIRST = 9500;
const HC = '/service/healthchecks/';

interface Seen { method: string; path: string; status: number }

async function admin(emu: RunningEmulator, method: string, path: string, body?: unknown): Promise<unknown> {
  const res = await fetch(`${emu.url}/_emulator${path}`, {
    method, headers: body === undefined ? {} : { 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${text}`);
  return text === '' ? undefined : JSON.parse(text);
}

/** Calls since the last clear, by kind (without the token exchange). */
async function counted(emu: RunningEmulator): Promise<{ total: number; detail: string }> {
  const seen = (await admin(emu, 'GET', '/requests') as Seen[]).filter((r) => r.path !== '/auth/api/ref');
  const kinds = new Map<string, number>();
  for (const r of seen) {
    const k = r.path.startsWith(HC) ? `healthchecks ${r.status}` : r.path === '/service/transactions/tx' ? 'transaction pages' : r.path;
    kinds.set(k, (kinds.get(k) ?? 0) + 1);
  }
  return { total: seen.length, detail: [...kinds.entries()].map(([k, n]) => `${k} ${n}`).join(', ') || 'none' };
}

async function seeded(healthchecks: boolean): Promise<{ emu: RunningEmulator; ids: string[] }> {
  const emu = await startEmulator({ host: '127.0.0.1', port: 0, healthchecks, rateLimit: 'off' });
  const ids = Array.from({ length: N }, (_, i) => FIRST + i);
  await admin(emu, 'POST', '/fixtures', { subscriptions: ids.map((id) => ({ id, account: 1001, user: 2001, product: 3001, name: `s${id}` })) });
  const now = Math.floor(Date.now() / 1000);
  const reports = ids.flatMap((id, i) => ['orders', 'fees'].map((payload) => ({
    id: `t${id}-${payload}`,
    subscription_id: id,
    payload_name: payload,
    sender: 'zeroadmin',
    status: i % 10 === 0 && payload === 'fees' ? 'ERROR' : 'PROCESSED',
    timestamp: now - 600,
  })));
  for (let i = 0; i < reports.length; i += 500) await admin(emu, 'POST', '/tx', reports.slice(i, i + 500));
  return { emu, ids: ids.map(String) };
}

async function dpi(emu: RunningEmulator, args: string[]): Promise<number> {
  return runDpi(args, {
    env: { DPI_BASE_URL: emu.url, DPI_REFRESH_TOKEN: DEFAULT_REFRESH_TOKEN },
    stdout: { write: () => undefined },
    stderr: { write: () => undefined },
    isTTY: false,
  });
}

async function main(): Promise<void> {
  let failed = false;
  const row = (what: string, calls: { total: number; detail: string }, expected: number, note = ''): void => {
    const ok = calls.total === expected;
    if (!ok) failed = true;
    console.log(`  ${what.padEnd(58)} ${String(calls.total).padStart(5)}  (${calls.detail})${note}${ok ? '' : `  CHECK FAILED: expected ${expected}`}`);
  };
  const pages = Math.ceil((N * 2) / 100);
  console.log(`Service calls per run, ${N} subscriptions x 2 payloads of one account (token exchange not counted)`);
  setMetricSink(() => undefined);
  const realLog = console.log;
  for (const healthchecks of [true, false]) {
    const { emu, ids } = await seeded(healthchecks);
    try {
      console.log(healthchecks ? 'with the healthchecks listing' : 'without it (the route answers 404)');
      await admin(emu, 'DELETE', '/requests');
      const code = await dpi(emu, ['status']);
      row(`dpi status (whole account), exit ${code}`, await counted(emu), healthchecks ? pages : 1,
        healthchecks ? '' : ': names --subscription <id>');
      await admin(emu, 'DELETE', '/requests');
      for (const id of ids) await dpi(emu, ['status', '--subscription', id]);
      row('dpi status --subscription <id>, once per subscription', await counted(emu), N);

      configureLocalRuntime({ readSecret: async () => JSON.stringify({ refreshToken: DEFAULT_REFRESH_TOKEN }) });
      const u = emu.url;
      const Connection = {
        JournalTableName: 'unused',
        BaseUrl: u,
        SubscriptionsUrl: u,
        AccountUrl: u,
        UserUrl: u,
        RemoteIdentityUrl: u,
        AuthUrl: u,
        RefreshTokenSecretArn: 'arn:aws:secretsmanager:us-east-1:123456789012:secret:bench',
      };
      // The default source (transactions), then the opt-in listing (MonitorSource.HEALTHCHECKS: the event's Source).
      for (const Source of [undefined, 'HEALTHCHECKS']) {
        await admin(emu, 'DELETE', '/requests');
        console.log = () => undefined; // the handler's JSON log lines
        // The run the monitor's rule sends, bound in its function's environment as the construct binds it.
        const bound = { Connection, ...(Source ? { Source } : {}) };
        configureLocalRuntime({
          readSecret: async () => JSON.stringify({ refreshToken: DEFAULT_REFRESH_TOKEN }),
          environment: { [BOUND_RUN_ENV]: JSON.stringify(bound) },
        });
        let r;
        try {
          r = await monitor({ ...bound, Connection: Connection as never, Subscriptions: ids.map((id) => ({ id })) });
        } finally {
          console.log = realLog;
        }
        const expected = Source === undefined ? N : healthchecks ? pages : 1 + N;
        row(`SubscriptionMonitor, ${Source ?? 'TRANSACTIONS'} (${r.subscriptions} monitored, ${r.failed} failed)`, await counted(emu), expected);
      }
    } finally {
      await emu.stop();
    }
  }
  if (failed) process.exitCode = 1;
}

main().catch((e) => {
  console.error(e);
  process.exitCode = 1;
});
