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
 * - harmed:         a bystander (a record the app did not make, see bystanders.ts) changed during the scenario
 * - inconsistent:   a successful phase left the service in another state than the clean run's
 * - stuck:          the retry of a failed phase failed too
 * - leaked:         after destroy, something remains that the clean run does not leave, or a secret was written
 *
 * Every scenario, the clean run too, runs with the bystanders present (made right after each reset); they are
 * excluded by ID from the comparison with the clean run and compared with their own state after every phase.
 *
 * Used by test/faults/faults.test.ts (a fixed sample in CI) and scripts/faults.ts (`npm run faults`: every point).
 */
import { spawn } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BystanderSet, DeclaredSubscription, declaredSubscriptions, harmedBystanders, makeBystanders, synthSecondJournalApp } from './bystanders';
import { serviceRemovesUnrecordedPipelines } from './operator';
import { RUNNER_FAULT_KINDS, RunnerFault, runnerOptions } from './runner-faults';
import { diff, liveSummary, secretsIn } from './summary';
import { buildExampleApp } from '../../examples/app';
import { runDpi } from '../../src/cli/program';
import { DEFAULT_REFRESH_TOKEN, RunningEmulator, startEmulator } from '../../src/emulator';
import { findPackageRoot, LocalDeployOptions, LocalDeployResult, runLocalDeploy } from '../../src/local';

export type Phase = 'create' | 'update' | 'destroy';
export const PHASES: readonly Phase[] = ['create', 'update', 'destroy'];

/** A fault kind: the body given to POST /_emulator/faults (without method, path and skip). */
export interface FaultKind {
  readonly name: string;
  readonly fault: Record<string, unknown>;
  /** The cloud's part of the fault (runner-faults.ts): how the runner runs the faulted phase. */
  readonly runner?: RunnerFault;
}

export const FAULT_KINDS: readonly FaultKind[] = [
  { name: '500', fault: { status: 500 } },
  { name: '503', fault: { status: 503 } },
  { name: '429', fault: { status: 429, retryAfter: 1 } },
  { name: 'drop', fault: { drop: true } },
  { name: 'dropResponse', fault: { dropResponse: true } },
  { name: 'delay3s', fault: { delayMs: 3000 } },
  ...RUNNER_FAULT_KINDS,
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

export type Outcome = 'survived' | 'failed clearly' | 'residual' | 'harmed' | 'inconsistent' | 'stuck' | 'leaked';
export const OUTCOMES: readonly Outcome[] = ['survived', 'failed clearly', 'residual', 'harmed', 'inconsistent', 'stuck', 'leaked'];

/** Outcomes that keep the promise: no bystander harmed, nothing leaked, nothing inconsistent, nothing stuck. */
export const ACCEPTED: ReadonlySet<Outcome> = new Set<Outcome>(['survived', 'failed clearly', 'residual']);

export interface ScenarioResult {
  readonly point: CallPoint;
  readonly kind: string;
  readonly outcome: Outcome;
  /** Why the scenario is not `survived` / `failed clearly`, or the first failure's message. */
  readonly detail?: string;
}

interface LogEntry { method: string; path: string; status: number }

export { liveSummary } from './summary';
export type { Excluded } from './summary';

/**
 * DPI_FAULTS_HANDLER=<bundle> runs the in-process phases against another handler bundle (e.g. an earlier commit's);
 * the kill test always runs the bundled `dpi` with assets/handler.
 */
const HANDLER = process.env.DPI_FAULTS_HANDLER || undefined;

/** The emulator's secrets (the refresh token), which must appear in no output, log or state file. */
const SECRETS = [DEFAULT_REFRESH_TOKEN];

/** The contexts of the example app's versions: v1 is created, v2 is the update. */
export const APP_VERSIONS = {
  v1: {} as Record<string, string>,
  v2: { sellerTypes: 'ORDER_CHANGE,REPORT_PROCESSING_FINISHED', orderCount: '300', historyEnd: '2026-11-18' } as Record<string, string>,
};

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
      other: join(work, 'cdk.out.other-journal'),
    };
    buildExampleApp({ outdir: apps.v1, context: APP_VERSIONS.v1 }).synth();
    buildExampleApp({ outdir: apps.v2, context: APP_VERSIONS.v2 }).synth();
    synthSecondJournalApp(apps.other);
    const emulator = await startEmulator({ port: 0 });
    const lab = new FaultLab(work, apps, declaredSubscriptions(apps.v1), emulator);
    await lab.cleanRun();
    return lab;
  }

  /** Call points of the clean run, per phase: every request of the phase, each with the `skip` that reaches it. */
  readonly points: CallPoint[] = [];
  /** Milliseconds each reset spent making the bystanders (`ui`: the UI's records; `secondJournal`: the second app). */
  readonly setupMs: Array<{ ui: number; secondJournal: number }> = [];
  /** The clean run's live summary after each phase. */
  private readonly expected = new Map<Phase, string[]>();
  private fixtureSubs = new Set<number>();
  private current?: BystanderSet;
  private scenario = 0;

  private constructor(readonly work: string, readonly apps: { v1: string; v2: string; other: string },
    private readonly declared: readonly DeclaredSubscription[], readonly emulator: RunningEmulator) {}

  async stop(): Promise<void> {
    await this.emulator.stop();
    // DPI_FAULTS_KEEP=1 keeps every scenario's state, journal and handler log for a look.
    if (process.env.DPI_FAULTS_KEEP === '1') process.stdout.write(`(kept ${this.work})\n`);
    else rmSync(this.work, { recursive: true, force: true });
  }

  private get url(): string {
    return this.emulator.url;
  }

  /** The bystanders of the current scenario (made by its reset). */
  get bystanders(): BystanderSet {
    if (!this.current) throw new Error('no scenario has started');
    return this.current;
  }

  /** Resets the emulator and makes the bystanders; returns the scenario's directory. */
  private async reset(): Promise<string> {
    await admin(this.url, 'POST', '/_emulator/reset');
    this.fixtureSubs = new Set(this.emulator.state().subscriptions.map((s) => s.id));
    const dir = join(this.work, `s${++this.scenario}`);
    mkdirSync(dir, { recursive: true });
    this.current = await makeBystanders(this.url, () => this.emulator.state(), this.declared,
      { app: this.apps.other, stateFile: join(dir, 'other-journal', 'local-state.json'), handlerPath: HANDLER });
    this.setupMs.push(this.current.ms);
    return dir;
  }

  /** Runs one phase in-process (as `dpi local-deploy` would, against the lab's emulator). */
  async phase(dir: string, p: Phase, extra: Partial<LocalDeployOptions> = {}): Promise<LocalDeployResult> {
    return runLocalDeploy({
      app: p === 'create' ? this.apps.v1 : p === 'update' ? this.apps.v2 : undefined,
      destroy: p === 'destroy',
      emulatorUrl: this.url,
      stateFile: join(dir, 'local-state.json'),
      refreshToken: DEFAULT_REFRESH_TOKEN,
      handlerPath: HANDLER,
      pollIntervalMs: 20,
      // The fault points are counted in call order: one resource at a time keeps that order deterministic.
      concurrency: 1,
      progress: () => undefined,
      output: () => undefined,
      ...extra,
    });
  }

  live(): string[] {
    return liveSummary(this.emulator.state(), this.fixtureSubs, this.current);
  }

  /** What changed in the bystanders since the reset made them (empty: nothing). */
  harmed(): string[] {
    return harmedBystanders(this.emulator.state(), this.bystanders);
  }

  /** Follows the bystanders through a scenario: `check` after every step keeps the first change seen. */
  private watch(): { check: (after: string) => void; first: () => string | undefined } {
    let first: string | undefined;
    return {
      check: (after) => {
        if (first !== undefined) return;
        const h = this.harmed();
        if (h.length > 0) first = `after ${after}: ${h.join('; ')}`;
      },
      first: () => first,
    };
  }

  private async cleanRun(): Promise<void> {
    const dir = await this.reset();
    for (const p of PHASES) {
      await admin(this.url, 'DELETE', '/_emulator/requests');
      const r = await this.phase(dir, p);
      if (!r.success) throw new Error(`the clean run's ${p} failed: ${r.error ?? failures(r).join('; ')}`);
      const harmed = this.harmed();
      if (harmed.length > 0) throw new Error(`the clean run's ${p} changed a bystander: ${harmed.join('; ')}`);
      const log = await admin<LogEntry[]>(this.url, 'GET', '/_emulator/requests');
      const seen: Array<{ method: string; path: string }> = [];
      // Every occurrence of a call is a point of its own: `skip` counts the earlier requests of the phase that the
      // emulator's fault (method, path prefix) would match first.
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

  /** The human step of an abandoned clean-up Delete: `dpi orphans --local --fix --yes`. */
  private async fixOrphans(dir: string): Promise<number> {
    return runDpi(['orphans', '--local', '--fix', '--yes', '--state', join(dir, 'local-state.json')], {
      env: { DPI_BASE_URL: this.url, DPI_REFRESH_TOKEN: DEFAULT_REFRESH_TOKEN },
      stdout: { write: () => undefined },
      stderr: { write: () => undefined },
      isTTY: false,
    });
  }

  /** Runs one scenario: clean phases up to `point.phase`, the fault, one retry, the rest, destroy. */
  async run(point: CallPoint, kind: FaultKind): Promise<ScenarioResult> {
    const dir = await this.reset();
    const results: LocalDeployResult[] = [];
    const watch = this.watch();
    let destroyed = false;
    const step = async (p: Phase, what: string, extra: Partial<LocalDeployOptions> = {}): Promise<LocalDeployResult> => {
      const r = await this.phase(dir, p, extra);
      results.push(r);
      watch.check(what);
      destroyed = p === 'destroy' && r.success;
      return r;
    };
    const result = async (outcome: Outcome, detail?: string): Promise<ScenarioResult> => {
      // A scenario that stopped early still ends with a destroy: what it does to the bystanders counts too.
      if (!destroyed) await step('destroy', 'the closing destroy');
      // handler.log keeps what the handler wrote and the runner names every leak it saw (secretLeaks): both are checked.
      const leaked = [...secretsIn(dir, results, SECRETS), ...results.flatMap((r) => r.secretLeaks ?? [])];
      const secret = leaked.length > 0 ? `the refresh token appears in ${leaked.join(', ')}` : undefined;
      const harm = watch.first();
      if (harm) {
        return { point, kind: kind.name, outcome: 'harmed', detail: `${harm} (then: ${outcome}${detail ? `: ${detail}` : ''}${secret ? `; ${secret}` : ''})` };
      }
      if (secret) return { point, kind: kind.name, outcome: 'leaked', detail: secret };
      return { point, kind: kind.name, outcome, detail };
    };
    const at = PHASES.indexOf(point.phase);
    for (const p of PHASES.slice(0, at)) {
      const r = await step(p, p);
      if (!r.success) return result('stuck', `the clean ${p} before the fault failed: ${firstFailure(r)}`);
    }
    await admin(this.url, 'POST', '/_emulator/faults', { ...kind.fault, method: point.method, pathPrefix: point.path, skip: point.skip, count: 1 });
    const taken = async (): Promise<boolean> => (await admin<{ faults: unknown[] }>(this.url, 'GET', '/_emulator/faults')).faults.length === 0;
    const runner = runnerOptions(kind.runner, taken);
    const first = await step(point.phase, `${point.phase} with the fault`, runner.options).finally(runner.stop);
    const fired = await taken();
    await admin(this.url, 'DELETE', '/_emulator/faults');
    let outcome: Outcome = 'survived';
    let detail: string | undefined;
    if (!first.success) {
      outcome = 'failed clearly';
      detail = firstFailure(first);
      if (!detail) return result('stuck', 'the phase failed without any message');
      let retry = await step(point.phase, `the retry of ${point.phase}`);
      const key = RESIDUAL.exec(detail)?.[1];
      if (key) {
        outcome = 'residual';
        if (retry.success || !firstFailure(retry).includes(key)) {
          return result('inconsistent', `a retry of the residual case did not refuse the same way: ${retry.success ? 'it succeeded' : firstFailure(retry)}`);
        }
        const code = await this.resolveResidual(dir, key);
        watch.check(`dpi journal resolve ${key}`);
        if (code !== 0) return result('stuck', `dpi journal resolve ${key} exited ${code}`);
        retry = await step(point.phase, `the retry of ${point.phase} after the resolve`);
      }
      if (!retry.success) return result('stuck', `retry failed: ${firstFailure(retry)} (first failure: ${detail})`);
    }
    // A clean-up Delete that failed is abandoned, as CloudFormation abandons it (never retried): its human step is
    // `dpi orphans --local --fix`, which finds it through the journal.
    const abandoned = results.flatMap((r) => r.abandoned ?? []);
    if (abandoned.length > 0) {
      outcome = 'residual';
      detail = `abandoned clean-up Delete of ${abandoned.map((a) => `${a.logicalId} ${a.physicalId}`).join(', ')}, ended by dpi orphans --local --fix`
        + `${detail ? ` (first failure: ${detail})` : ''}`;
      const code = await this.fixOrphans(dir);
      watch.check('dpi orphans --local --fix');
      if (code !== 0) return result('stuck', `dpi orphans --local --fix exited ${code}`);
    }
    const d = diff(this.expected.get(point.phase)!, this.live());
    if (d) return result('inconsistent', `after ${point.phase}: ${d}${detail ? ` (first failure: ${detail})` : ''}`);
    for (const p of PHASES.slice(at + 1)) {
      const r = await step(p, p);
      if (!r.success) return result('stuck', `the clean ${p} after the fault failed: ${firstFailure(r)}`);
    }
    const left = diff(this.expected.get('destroy')!, this.live());
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
    const watch = this.watch();
    let destroyed = false;
    const result = async (outcome: Outcome, detail?: string): Promise<ScenarioResult> => {
      if (!destroyed) await step('destroy', 'the closing destroy');
      const harm = watch.first();
      if (harm) return { point, kind, outcome: 'harmed', detail: `${harm} (then: ${outcome}${detail ? `: ${detail}` : ''})` };
      return { point, kind, outcome, detail };
    };
    const step = async (p: Phase, what: string): Promise<LocalDeployResult> => {
      const r = await this.phase(dir, p);
      watch.check(what);
      destroyed = p === 'destroy' && r.success;
      return r;
    };
    const at = PHASES.indexOf(point.phase);
    for (const p of PHASES.slice(0, at)) {
      const r = await step(p, p);
      if (!r.success) return result('stuck', `the clean ${p} before the kill failed: ${firstFailure(r)}`);
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
    if (!held) return result('stuck', 'the runner never reached the call');
    if (process.env.DPI_FAULTS_KEEP === '1') cpSync(dir, `${dir}-killed`, { recursive: true });
    await new Promise((r) => setTimeout(r, holdMs + 300));
    watch.check(`the killed ${point.phase}`);
    let retry = await step(point.phase, `the ${point.phase} after the kill`);
    let outcome: Outcome = 'survived';
    const key = retry.success ? undefined : RESIDUAL.exec(firstFailure(retry))?.[1];
    if (key) {
      outcome = 'residual';
      const code = await this.resolveResidual(dir, key);
      watch.check(`dpi journal resolve ${key}`);
      if (code !== 0) return result('stuck', `dpi journal resolve ${key} exited ${code}`);
      retry = await step(point.phase, `the ${point.phase} after the resolve`);
    }
    if (!retry.success) return result('stuck', `the run after the kill failed: ${firstFailure(retry)}`);
    const d = diff(this.expected.get(point.phase)!, this.live());
    if (d) return result('inconsistent', `after ${point.phase}: ${d}`);
    for (const p of PHASES.slice(at + 1)) {
      const r = await step(p, p);
      if (!r.success) return result('stuck', `the clean ${p} after the kill failed: ${firstFailure(r)}`);
    }
    const left = diff(this.expected.get('destroy')!, this.live());
    if (left) return result('leaked', `after destroy: ${left}`);
    return result(outcome);
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
  const outcomes = OUTCOMES;
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
