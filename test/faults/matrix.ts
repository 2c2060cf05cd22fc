/**
 * The fault matrix: the example app's create, update and destroy against the emulator, with one fault injected at
 * one service call of one phase, then a retry of that phase, the rest of the lifecycle and a destroy. Each scenario
 * is judged against a clean run of the same lifecycle:
 *
 * - survived:       the phase succeeded despite the fault, and the service state equals the clean run's
 * - failed clearly: the phase failed with a message (no secret in it), and one retry converged
 * - residual:       the phase failed with the residual-case message (what remains is only findable by the service):
 *                   the retry refuses the same way, and after the service removed what was made (simulated here with
 *                   the pipeline's identifiers, which only the emulator's admin view shows) and
 *                   `dpi journal resolve <key> --local`, the retry converged
 * - inconsistent:   a successful phase left the service in another state than the clean run's
 * - stuck:          the retry of a failed phase failed too
 * - leaked:         after destroy, something remains that the clean run does not leave, or a secret was written
 *
 * Used by test/faults/faults.test.ts (a fixed sample in CI) and scripts/faults.ts (`npm run faults`: every point).
 */
import { spawn } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { serviceRemovesUnrecordedPipelines } from './operator';
import { buildExampleApp } from '../../examples/app';
import { runDpi } from '../../src/cli/program';
import { DEFAULT_REFRESH_TOKEN, EmulatorStateSnapshot, RunningEmulator, startEmulator } from '../../src/emulator';
import { findPackageRoot, LocalDeployResult, runLocalDeploy } from '../../src/local';

export type Phase = 'create' | 'update' | 'destroy';
export const PHASES: readonly Phase[] = ['create', 'update', 'destroy'];

/** A fault kind: the body given to POST /_emulator/faults (without method, path and skip). */
export interface FaultKind {
  readonly name: string;
  readonly fault: Record<string, unknown>;
}

export const FAULT_KINDS: readonly FaultKind[] = [
  { name: '500', fault: { status: 500 } },
  { name: '503', fault: { status: 503 } },
  { name: '429', fault: { status: 429, retryAfter: 1 } },
  { name: 'drop', fault: { drop: true } },
  { name: 'dropResponse', fault: { dropResponse: true } },
  { name: 'delay3s', fault: { delayMs: 3000 } },
];

/** One service call of a phase of the clean run: the `skip`-th later request matching method and path prefix. */
export interface CallPoint {
  readonly phase: Phase;
  readonly index: number;
  readonly method: string;
  readonly path: string;
  /** Earlier requests of the phase with the same method whose path starts with `path`. */
  readonly skip: number;
}

export type Outcome = 'survived' | 'failed clearly' | 'residual' | 'inconsistent' | 'stuck' | 'leaked';

/** Outcomes that keep the promise: nothing leaked, nothing inconsistent, nothing stuck. */
export const ACCEPTED: ReadonlySet<Outcome> = new Set<Outcome>(['survived', 'failed clearly', 'residual']);

export interface ScenarioResult {
  readonly point: CallPoint;
  readonly kind: string;
  readonly outcome: Outcome;
  /** Why the scenario is not `survived` / `failed clearly`, or the first failure's message. */
  readonly detail?: string;
}

interface LogEntry { method: string; path: string; status: number }

/** The emulator's secrets (the refresh token), which must appear in no output, log or state file. */
const SECRETS = [DEFAULT_REFRESH_TOKEN];

/** The contexts of the example app's versions: v1 is created, v2 is the update. */
export const APP_VERSIONS = {
  v1: {} as Record<string, string>,
  v2: { sellerTypes: 'ORDER_CHANGE,REPORT_PROCESSING_FINISHED', orderCount: '300', historyEnd: '2026-11-18' } as Record<string, string>,
};

/** Everything that is live in the service, without generated IDs (what a deploy or destroy must converge to). */
export function liveSummary(s: EmulatorStateSnapshot, fixtureSubscriptions: ReadonlySet<number>): string[] {
  const out: string[] = [];
  for (const x of s.subscriptions) {
    if (x.status === 'invalid' || fixtureSubscriptions.has(x.id)) continue;
    const params = x.product === 107
      ? Object.keys(x.product_parameters).sort().join('+')
      : Object.entries(x.product_parameters).sort(([a], [b]) => a.localeCompare(b)).map(([k, v]) => `${k}=${v}`).join('&');
    out.push(`subscription product=${x.product} name=${x.name} status=${x.status} identity=${x.remote_identity} storage=${x.storage_group} ${params}`);
  }
  for (const p of s.pipelines) out.push(`pipeline identity=${p.remoteIdentityId} region=${p.region} types=${[...p.notificationTypes].sort().join(',')}`);
  for (const l of s.legacyPipelines) out.push(`legacy-pipeline identity=${l.remoteIdentityId} queue=${l.queueArn}`);
  for (const u of s.upstreamSubscriptions) {
    if (u.enabled) out.push(`upstream identity=${u.remoteIdentityId} type=${u.notificationType} ${u.pipelineId ? 'unified' : `legacy=${u.legacySubscriptionId ?? '-'}`}`);
  }
  for (const d of s.destinations) if (!d.shared) out.push(`destination ${d.kind} ${d.pipelineId ? 'pipeline' : `legacy=${d.legacySubscriptionId ?? '-'}`}`);
  for (const c of s.cloud) if (!c.shared) out.push(`cloud ${c.kind} ${c.region}`);
  const subName = (id: number): string => s.subscriptions.find((x) => x.id === id)?.name ?? String(id);
  for (const h of s.history) {
    if (h.status === 'cancelled' || h.status === 'canceled') continue;
    out.push(`history ${subName(h.subscription_id)} ${h.start_date}..${h.end_date} stage=${h.stage_id} ${h.status === 'error' ? 'error' : 'live'}`);
  }
  // Order-level jobs cannot be removed: what matters is that every order ID went out exactly once under each live
  // subscription (the jobs of a subscription that a rollback ended are moot).
  const orderIds = new Map<string, number>();
  const live = new Set(s.subscriptions.filter((x) => x.status !== 'invalid').map((x) => x.id));
  for (const j of s.jobs) {
    if (j.is_primary || !j.extra_context || !live.has(j.subscription_id)) continue;
    const ids = (JSON.parse(j.extra_context) as { order_ids?: string[] }).order_ids ?? [];
    for (const id of ids) orderIds.set(`${subName(j.subscription_id)}/${id}`, (orderIds.get(`${subName(j.subscription_id)}/${id}`) ?? 0) + 1);
  }
  const counts = [...orderIds.values()];
  out.push(`order-ids distinct=${orderIds.size} submitted=${counts.reduce((a, b) => a + b, 0)}`);
  return out.sort();
}

function diff(expected: string[], actual: string[]): string {
  const missing = expected.filter((x) => !actual.includes(x));
  const extra = actual.filter((x) => !expected.includes(x));
  return [...missing.map((m) => `missing: ${m}`), ...extra.map((e) => `extra: ${e}`)].join('; ');
}

async function admin<T>(url: string, method: string, path: string, body?: unknown): Promise<T> {
  const res = await fetch(`${url}${path}`, {
    method,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (!res.ok) throw new Error(`${method} ${path}: HTTP ${res.status} ${await res.text()}`);
  return (res.status === 204 ? undefined : await res.json()) as T;
}

/** A lab: the emulator, the synthesized app versions and the clean run's call points and states. */
export class FaultLab {
  static async start(): Promise<FaultLab> {
    const work = mkdtempSync(join(tmpdir(), 'dpi-faults-'));
    const apps = {
      v1: join(work, 'cdk.out.v1'),
      v2: join(work, 'cdk.out.v2'),
    };
    buildExampleApp({ outdir: apps.v1, context: APP_VERSIONS.v1 }).synth();
    buildExampleApp({ outdir: apps.v2, context: APP_VERSIONS.v2 }).synth();
    const emulator = await startEmulator({ port: 0 });
    const lab = new FaultLab(work, apps, emulator);
    await lab.cleanRun();
    return lab;
  }

  /** Call points of the clean run, per phase. */
  readonly points: CallPoint[] = [];
  /** The clean run's live summary after each phase. */
  private readonly expected = new Map<Phase, string[]>();
  private fixtureSubs = new Set<number>();
  private scenario = 0;

  private constructor(readonly work: string, readonly apps: { v1: string; v2: string }, readonly emulator: RunningEmulator) {}

  async stop(): Promise<void> {
    await this.emulator.stop();
    // DPI_FAULTS_KEEP=1 keeps every scenario's state, journal and handler log for a look.
    if (process.env.DPI_FAULTS_KEEP === '1') process.stdout.write(`(kept ${this.work})\n`);
    else rmSync(this.work, { recursive: true, force: true });
  }

  private get url(): string {
    return this.emulator.url;
  }

  private async reset(): Promise<string> {
    await admin(this.url, 'POST', '/_emulator/reset');
    this.fixtureSubs = new Set(this.emulator.state().subscriptions.map((s) => s.id));
    const dir = join(this.work, `s${++this.scenario}`);
    mkdirSync(dir, { recursive: true });
    return dir;
  }

  /** Runs one phase in-process (as `dpi local-deploy` would, against the lab's emulator). */
  async phase(dir: string, p: Phase): Promise<LocalDeployResult> {
    return runLocalDeploy({
      app: p === 'create' ? this.apps.v1 : p === 'update' ? this.apps.v2 : undefined,
      destroy: p === 'destroy',
      emulatorUrl: this.url,
      stateFile: join(dir, 'local-state.json'),
      refreshToken: DEFAULT_REFRESH_TOKEN,
      pollIntervalMs: 20,
      // The fault points are counted in call order: one resource at a time keeps that order deterministic.
      concurrency: 1,
      progress: () => undefined,
      output: () => undefined,
    });
  }

  live(): string[] {
    return liveSummary(this.emulator.state(), this.fixtureSubs);
  }

  private async cleanRun(): Promise<void> {
    const dir = await this.reset();
    for (const p of PHASES) {
      await admin(this.url, 'DELETE', '/_emulator/requests');
      const r = await this.phase(dir, p);
      if (!r.success) throw new Error(`the clean run's ${p} failed: ${r.error ?? failures(r).join('; ')}`);
      const log = await admin<LogEntry[]>(this.url, 'GET', '/_emulator/requests');
      const seen: Array<{ method: string; path: string }> = [];
      log.forEach((e, index) => {
        const skip = seen.filter((x) => x.method === e.method && x.path.startsWith(e.path)).length;
        seen.push({ method: e.method, path: e.path });
        this.points.push({ phase: p, index, method: e.method, path: e.path, skip });
      });
      this.expected.set(p, this.live());
    }
  }

  /** The step a residual case names: the service removes what was made, then `dpi journal resolve <key> --local`. */
  private async resolveResidual(dir: string, key: string): Promise<number> {
    await serviceRemovesUnrecordedPipelines(this.url, this.emulator.state());
    return runDpi(['journal', 'resolve', key, '--local', '--state', join(dir, 'local-state.json')], {
      env: {}, stdout: { write: () => undefined }, stderr: { write: () => undefined }, isTTY: false,
    });
  }

  /** Secrets found in the scenario's files (state, journal, handler log) or in the runs' messages. */
  private secretsIn(dir: string, results: LocalDeployResult[]): string[] {
    const found: string[] = [];
    const texts: Array<[string, string]> = results.map((r, i) => [`run ${i + 1} output`, JSON.stringify(r)]);
    for (const f of existsSync(dir) ? readdirSync(dir) : []) texts.push([f, readFileSync(join(dir, f), 'utf8')]);
    for (const [where, text] of texts) if (SECRETS.some((s) => text.includes(s))) found.push(where);
    return found;
  }

  /** Runs one scenario: clean phases up to `point.phase`, the fault, one retry, the rest, destroy. */
  async run(point: CallPoint, kind: FaultKind): Promise<ScenarioResult> {
    const dir = await this.reset();
    const results: LocalDeployResult[] = [];
    const result = (outcome: Outcome, detail?: string): ScenarioResult => {
      const leaked = this.secretsIn(dir, results);
      if (leaked.length > 0) return { point, kind: kind.name, outcome: 'leaked', detail: `the refresh token appears in ${leaked.join(', ')}` };
      return { point, kind: kind.name, outcome, detail };
    };
    const at = PHASES.indexOf(point.phase);
    for (const p of PHASES.slice(0, at)) {
      const r = await this.phase(dir, p);
      results.push(r);
      if (!r.success) return result('stuck', `the clean ${p} before the fault failed: ${firstFailure(r)}`);
    }
    await admin(this.url, 'POST', '/_emulator/faults', { ...kind.fault, method: point.method, pathPrefix: point.path, skip: point.skip, count: 1 });
    const first = await this.phase(dir, point.phase);
    results.push(first);
    const fired = (await admin<{ faults: unknown[] }>(this.url, 'GET', '/_emulator/faults')).faults.length === 0;
    await admin(this.url, 'DELETE', '/_emulator/faults');
    let outcome: Outcome = 'survived';
    let detail: string | undefined;
    if (!first.success) {
      outcome = 'failed clearly';
      detail = firstFailure(first);
      if (!detail) return result('stuck', 'the phase failed without any message');
      let retry = await this.phase(dir, point.phase);
      results.push(retry);
      const key = RESIDUAL.exec(detail)?.[1];
      if (key) {
        outcome = 'residual';
        if (retry.success || !firstFailure(retry).includes(key)) {
          return result('inconsistent', `a retry of the residual case did not refuse the same way: ${retry.success ? 'it succeeded' : firstFailure(retry)}`);
        }
        const code = await this.resolveResidual(dir, key);
        if (code !== 0) return result('stuck', `dpi journal resolve ${key} exited ${code}`);
        retry = await this.phase(dir, point.phase);
        results.push(retry);
      }
      if (!retry.success) return result('stuck', `retry failed: ${firstFailure(retry)} (first failure: ${detail})`);
    }
    const after = this.live();
    const want = this.expected.get(point.phase)!;
    const d = diff(want, after);
    if (d) return result('inconsistent', `after ${point.phase}: ${d}${detail ? ` (first failure: ${detail})` : ''}`);
    for (const p of PHASES.slice(at + 1)) {
      const r = await this.phase(dir, p);
      results.push(r);
      if (!r.success) return result('stuck', `the clean ${p} after the fault failed: ${firstFailure(r)}`);
    }
    const end = this.live();
    const left = diff(this.expected.get('destroy')!, end);
    if (left) return result('leaked', `after destroy: ${left}`);
    if (!fired) detail = `${detail ? `${detail}; ` : ''}(the fault did not fire)`;
    return result(outcome, detail);
  }

  /**
   * The kill test at one create call: the runner (the bundled `dpi local-deploy`, a child process) is killed with
   * SIGKILL while the call is held by the emulator (`applied`: the emulator then handles it; otherwise it drops it),
   * then create runs again, then destroy; the service must end as the clean run ends.
   */
  async kill(point: CallPoint, applied: boolean): Promise<ScenarioResult> {
    const kind = applied ? 'kill (call applied)' : 'kill (call not applied)';
    const dir = await this.reset();
    const at = PHASES.indexOf(point.phase);
    for (const p of PHASES.slice(0, at)) {
      const r = await this.phase(dir, p);
      if (!r.success) return { point, kind, outcome: 'stuck', detail: `the clean ${p} before the kill failed: ${firstFailure(r)}` };
    }
    const holdMs = 1500;
    await admin(this.url, 'POST', '/_emulator/faults', {
      method: point.method, pathPrefix: point.path, skip: point.skip, count: 1, delayMs: holdMs, ...(applied ? {} : { drop: true }),
    });
    const cli = join(findPackageRoot(), 'assets', 'cli', 'dpi', 'index.js');
    const args = [cli, 'local-deploy', '--emulator', this.url, '--state', join(dir, 'local-state.json'), '--concurrency', '1'];
    if (point.phase === 'destroy') args.push('--destroy');
    else args.push('--app', point.phase === 'create' ? this.apps.v1 : this.apps.v2);
    const child = spawn(process.execPath, args, { stdio: 'ignore', env: { ...process.env, DPI_REFRESH_TOKEN: DEFAULT_REFRESH_TOKEN, NO_COLOR: '1' } });
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    let held = false;
    for (let i = 0; i < 600 && !held; i++) {
      await new Promise((r) => setTimeout(r, 25));
      held = (await admin<{ faults: unknown[] }>(this.url, 'GET', '/_emulator/faults')).faults.length === 0;
      if (child.exitCode !== null) break;
    }
    child.kill('SIGKILL');
    await exited;
    await admin(this.url, 'DELETE', '/_emulator/faults');
    if (!held) return { point, kind, outcome: 'stuck', detail: 'the runner never reached the call' };
    if (process.env.DPI_FAULTS_KEEP === '1') cpSync(dir, `${dir}-killed`, { recursive: true });
    await new Promise((r) => setTimeout(r, holdMs + 300));
    let retry = await this.phase(dir, point.phase);
    let outcome: Outcome = 'survived';
    const key = retry.success ? undefined : RESIDUAL.exec(firstFailure(retry))?.[1];
    if (key) {
      outcome = 'residual';
      const code = await this.resolveResidual(dir, key);
      if (code !== 0) return { point, kind, outcome: 'stuck', detail: `dpi journal resolve ${key} exited ${code}` };
      retry = await this.phase(dir, point.phase);
    }
    if (!retry.success) return { point, kind, outcome: 'stuck', detail: `the run after the kill failed: ${firstFailure(retry)}` };
    const d = diff(this.expected.get(point.phase)!, this.live());
    if (d) return { point, kind, outcome: 'inconsistent', detail: `after ${point.phase}: ${d}` };
    for (const p of PHASES.slice(at + 1)) {
      const r = await this.phase(dir, p);
      if (!r.success) return { point, kind, outcome: 'stuck', detail: `the clean ${p} after the kill failed: ${firstFailure(r)}` };
    }
    const left = diff(this.expected.get('destroy')!, this.live());
    if (left) return { point, kind, outcome: 'leaked', detail: `after destroy: ${left}` };
    return { point, kind, outcome };
  }
}

/** The residual-case message names the resource key to resolve once the service removed what was made. */
const RESIDUAL = /only the service can remove it[^']*'dpi journal resolve ([^' ]+)'/;

function failures(r: LocalDeployResult): string[] {
  return r.events.filter((e) => e.status.endsWith('_FAILED') && e.reason).map((e) => `${e.logicalId}: ${e.reason}`);
}

function firstFailure(r: LocalDeployResult): string {
  return failures(r)[0] ?? r.error ?? '';
}

/** Label of a call point, e.g. `create #12 POST /v1/subscriptions`. */
export function label(p: CallPoint): string {
  return `${p.phase} #${p.index} ${p.method} ${p.path}`;
}

/** Table of outcomes per phase and fault kind (rows) with the totals. */
export function renderTable(results: readonly ScenarioResult[]): string[] {
  const outcomes: Outcome[] = ['survived', 'failed clearly', 'residual', 'inconsistent', 'stuck', 'leaked'];
  const rows = new Map<string, ScenarioResult[]>();
  for (const r of results) {
    const key = `${r.point.phase} / ${r.kind}`;
    rows.set(key, [...(rows.get(key) ?? []), r]);
  }
  const header = ['phase / fault', 'tried', ...outcomes];
  const body = [...rows.entries()].map(([k, rs]) => [k, String(rs.length), ...outcomes.map((o) => String(rs.filter((r) => r.outcome === o).length))]);
  body.push(['total', String(results.length), ...outcomes.map((o) => String(results.filter((r) => r.outcome === o).length))]);
  const widths = header.map((h, i) => Math.max(h.length, ...body.map((b) => b[i].length)));
  const fmt = (cells: string[]): string => `| ${cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join(' | ')} |`;
  return [fmt(header), `|${widths.map((w, i) => (i === 0 ? '-'.repeat(w + 2) : `${'-'.repeat(w + 1)}:`)).join('|')}|`, ...body.map(fmt)];
}
