/**
 * A fleet at the service's real rate limit, in the runner that behaves like the cloud: the platform app
 * (platform-app.ts: a `NotificationPipelineFleet` of N sellers with fleet alarms to a parent-stack topic, single
 * pipelines, subscriptions, a backfill, order jobs, monitors) deployed, updated for one identity and destroyed by
 * `dpi local-deploy` with its embedded emulator at 1,000 requests per 5 minutes, isolated Lambda containers (each its
 * own memory), nested stacks in parallel, service latency on and one time scale for every clock (the emulator's rate
 * window, Retry-After, the handler's clock and Lambda's timeout, the waiter's polls, CloudFormation's hour).
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { FIRST_IDENTITY, synthFleetApp } from './pipelines';
import { PLATFORM_APP, platformFixtures, synthPlatformApp } from './platform-app';
import { DEFAULT_REFRESH_TOKEN } from '../../src/emulator';
import { runLocalDeploy } from '../../src/local';
import { stopWarmContainers } from '../../src/local/containers';
import type { LocalDeployOptions, LocalDeployResult } from '../../src/local/options';
import type { ProgressEvent } from '../../src/local/output';
import { fleetBucketOf } from '../../src/notifications/fleet-hash';
import { CALLS_PER_PIPELINE, pipelinesPerWave, planWaves } from '../../src/notifications/fleet-waves';

/** The service's documented limit (vendor rate-limiting.md): requests per window. */
export const SERVICE_LIMIT = { requests: 1_000, seconds: 300 } as const;
/** CloudFormation's longest wait for one custom resource. */
export const CLOUDFORMATION_HOUR_MS = 3_600_000;

export interface CloudLimitOptions {
  /** Seller identities of the fleet. */
  readonly fleet: number;
  /** Every clock of the run passes this many times as fast as the wall clock. */
  readonly timeScale: number;
  /** The emulator's latency per request, in cloud ms (with jitter). */
  readonly latency: { readonly ms: number; readonly jitterMs: number };
  /** Resource operations in flight at once across the stacks of an operation. */
  readonly concurrency: number;
  /** Called with a line of progress (phase starts and ends). */
  readonly log?: (line: string) => void;
  /** Keep the run's directory (the local state, handler.log, the emulator's state) and print its path. */
  readonly keep?: boolean;
  /**
   * One-identity updates after the deploy, each a row: the first seller gains a notification type, loses it again,
   * gains it again and so on (the updates are 5 requests each, so one run shows their spread). @default 1
   */
  readonly updates?: number;
}

export interface CloudLimitPhase {
  readonly phase: 'deploy' | 'update one identity' | 'destroy' | 'adopt (deploy after dpi import)' | 'destroy (release)';
  readonly ok: boolean;
  /** Service requests received (token exchanges included). */
  readonly requests: number;
  /** Of those, answered 429. */
  readonly throttled: number;
  /** Requests the service served (not 429): the work the limit paces. */
  readonly served: number;
  /** Wall-clock seconds. */
  readonly wallSeconds: number;
  /** The same in cloud seconds (× the time scale). */
  readonly cloudSeconds: number;
  /**
   * The stack operation as CloudFormation times it, in cloud seconds: from its first event to its last. The rest of
   * `cloudSeconds` is the runner starting (reading the assembly, the embedded emulator, the journal server) and
   * stopping, which a deploy in the cloud does not have.
   */
  readonly operationSeconds: number;
  /** The rate floor in cloud seconds: served requests ÷ the limit. */
  readonly floorSeconds: number;
  /**
   * The window floor in cloud seconds: the least time the service's rolling window allows for the served requests,
   * given the requests it held when the phase started (the last phase's, kept in the emulator's state file), each
   * request sent the moment the window has room and answered at once. Under `floorSeconds` for a phase that meets
   * an empty window (its first 1,000 requests may go at once), over it for one that meets a window the last phase
   * filled in a burst.
   */
  readonly windowFloorSeconds: number;
  /** Resources that reached a `_FAILED` status. */
  readonly failed: number;
  /** The longest time one resource took (first `_IN_PROGRESS` to its end), in cloud minutes. */
  readonly longestResourceMinutes: number;
  /** Lambda containers that served the phase. */
  readonly containers: number;
  /** The distinct failure reasons (at most 5), with how many resources met each. */
  readonly failures: string[];
}

export interface CloudLimitResult {
  readonly fleet: number;
  readonly resources: number;
  readonly timeScale: number;
  readonly phases: CloudLimitPhase[];
  /** Pipelines and product-107 subscriptions still active after the destroy (must be 0). */
  readonly left: number;
}

/** The distinct reasons (numbers and IDs blanked), most frequent first, at most 5, each with its count. */
function distinctReasons(reasons: readonly string[]): string[] {
  const counts = new Map<string, number>();
  for (const r of reasons) {
    const k = r.replace(/\d+/g, 'N').slice(0, 300);
    counts.set(k, (counts.get(k) ?? 0) + 1);
  }
  return [...counts.entries()].sort((a, b) => b[1] - a[1]).slice(0, 5).map(([k, n]) => `${n} x ${k}`);
}

/** The longest span of one resource in the events, in wall ms. */
function longestSpanMs(events: readonly ProgressEvent[]): number {
  const start = new Map<string, number>();
  let longest = 0;
  for (const e of events) {
    if (e.type === 'AWS::CloudFormation::Stack') continue;
    const key = `${e.stack}/${e.logicalId}`;
    const t = Date.parse(e.time);
    if (e.status.endsWith('_IN_PROGRESS') && !start.has(key)) {start.set(key, t);} else if (/_(COMPLETE|FAILED|SKIPPED)$/.test(e.status) && start.has(key)) {
      longest = Math.max(longest, t - start.get(key)!);
      start.delete(key);
    }
  }
  return longest;
}

/** Milliseconds from the first event of an operation to its last (0 without events). */
function operationSpanMs(events: ReadonlyArray<{ time: string }>): number {
  let first = Infinity;
  let last = -Infinity;
  for (const e of events) {
    const t = Date.parse(e.time);
    if (!Number.isFinite(t)) continue;
    first = Math.min(first, t);
    last = Math.max(last, t);
  }
  return last > first ? last - first : 0;
}

/** The request times (emulator clock, seconds) its state file's rate window holds, and the emulator clock now. */
function savedWindow(stateFile: string): { hits: number[]; now: number } {
  const file = join(dirname(stateFile), 'emulator-state.json');
  const now = Date.now() / 1000;
  if (!existsSync(file)) return { hits: [], now };
  const saved = JSON.parse(readFileSync(file, 'utf8')) as { clockOffset?: number; rateHits?: Record<string, number[]> };
  return { hits: Object.values(saved.rateHits ?? {}).flat().sort((a, b) => a - b), now: now + (saved.clockOffset ?? 0) };
}

/** The least time (seconds) the limit's rolling window allows `n` requests from `start`, holding `hits` before them. */
export function windowFloor(hits: readonly number[], start: number, n: number, limit: { requests: number; seconds: number } = SERVICE_LIMIT): number {
  const sent = hits.filter((h) => h > start - limit.seconds);
  let first = 0;
  let t = start;
  for (let i = 0; i < n; i++) {
    while (first < sent.length && sent[first] <= t - limit.seconds) first++;
    // Full: the next request goes when the oldest of the window's `requests` most recent leaves it.
    if (sent.length - first >= limit.requests) t = sent[sent.length - limit.requests] + limit.seconds;
    sent.push(t);
  }
  return t - start;
}

/** What one phase runs: `runLocalDeploy`'s options other than the limit, the clocks and the output. */
export type PhaseRun = Pick<LocalDeployOptions, 'app' | 'destroy' | 'stateFile' | 'fixtures' | 'reads'>;

/** Runs one phase (a deploy or a destroy) at the service's limit with the run's clocks; its numbers. */
export async function measurePhase(o: CloudLimitOptions, phase: CloudLimitPhase['phase'], run: PhaseRun): Promise<{ result: LocalDeployResult; phase: CloudLimitPhase }> {
  const log = o.log ?? (() => undefined);
  log(`  ${phase} of ${o.fleet} identities ...`);
  const met = savedWindow(run.stateFile ?? 'local-state.json');
  const started = performance.now();
  const r = await runLocalDeploy({
    ...run,
    refreshToken: DEFAULT_REFRESH_TOKEN,
    rateLimit: SERVICE_LIMIT,
    timeScale: o.timeScale,
    latency: o.latency,
    concurrency: o.concurrency,
    progress: () => undefined,
    output: () => undefined,
  });
  const wall = performance.now() - started;
  const failures = r.events.filter((e) => e.status.endsWith('_FAILED'));
  const requests = r.serviceRequests?.total ?? 0;
  const throttled = r.serviceRequests?.throttled ?? 0;
  const served = requests - throttled;
  const p: CloudLimitPhase = {
    phase,
    ok: r.success,
    requests,
    throttled,
    served,
    wallSeconds: wall / 1000,
    cloudSeconds: (wall * o.timeScale) / 1000,
    operationSeconds: (operationSpanMs(r.events) * o.timeScale) / 1000,
    floorSeconds: (served * SERVICE_LIMIT.seconds) / SERVICE_LIMIT.requests,
    windowFloorSeconds: windowFloor(met.hits, met.now, served),
    failed: new Set(failures.map((e) => `${e.stack}/${e.logicalId}`)).size,
    longestResourceMinutes: (longestSpanMs(r.events) * o.timeScale) / 60_000,
    containers: r.containers?.used ?? 0,
    failures: distinctReasons([...failures.map((e) => e.reason ?? e.status), ...(r.error ? [r.error] : [])]),
  };
  log(`  ${phase}: ${p.ok ? 'ok' : 'FAILED'} in ${p.wallSeconds.toFixed(1)} s (cloud ${(p.cloudSeconds / 60).toFixed(1)} min), `
    + `${requests} requests, ${throttled} answered 429`);
  return { result: r, phase: p };
}

/** Deploys, updates one identity of and destroys the platform app of `o.fleet` sellers; the numbers of each phase. */
export async function measureAtLimit(o: CloudLimitOptions): Promise<CloudLimitResult> {
  const dir = mkdtempSync(join(tmpdir(), 'dpi-cloud-limit-'));
  const shape = { ...PLATFORM_APP, fleet: o.fleet };
  const log = o.log ?? (() => undefined);
  try {
    const v1 = join(dir, 'v1');
    const v2 = join(dir, 'v2');
    synthPlatformApp(v1, shape);
    synthPlatformApp(v2, { ...shape, changed: true });
    const stateFile = join(dir, 'state', 'local-state.json');
    const phases: CloudLimitPhase[] = [];
    let resources = 0;
    const run = async (phase: CloudLimitPhase['phase'], app: string, destroy: boolean): Promise<void> => {
      const { result, phase: p } = await measurePhase(o, phase, { app, destroy, stateFile, fixtures: platformFixtures(shape) });
      if (!destroy) resources = Math.max(resources, result.resources.length);
      phases.push(p);
    };
    await run('deploy', v1, false);
    const updates = o.updates ?? 1;
    for (let u = 0; u < updates; u++) await run('update one identity', u % 2 === 0 ? v2 : v1, false);
    await run('destroy', updates % 2 === 1 ? v2 : v1, true);
    // The embedded emulator's state is kept beside the local state: what is left after the destroy.
    const state = JSON.parse(readFileSync(join(dir, 'state', 'emulator-state.json'), 'utf8')) as {
      pipelines?: unknown[]; subscriptions?: Array<{ product?: number; status?: string }>;
    };
    const left = (state.pipelines ?? []).length + (state.subscriptions ?? []).filter((s) => s.product === 107 && s.status === 'active').length;
    return { fleet: o.fleet, resources, timeScale: o.timeScale, phases, left };
  } finally {
    stopWarmContainers();
    if (o.keep === true) log(`  kept ${dir}`);
    else rmSync(dir, { recursive: true, force: true });
  }
}

/** The table of results: one row per fleet size and phase. */
export function cloudLimitTable(results: readonly CloudLimitResult[]): string[] {
  const rows = ['| identities | phase | requests | 429s | 429 % | wall s | cloud min | floor min | cloud / floor | operation / floor '
    + '| window floor min | cloud / window floor | failed | longest resource (cloud min) | containers |', `|${'---|'.repeat(15)}`];
  for (const r of results) {
    for (const p of r.phases) {
      const ratio = p.floorSeconds > 0 ? (p.cloudSeconds / p.floorSeconds).toFixed(2) : '-';
      const operation = p.floorSeconds > 0 ? (p.operationSeconds / p.floorSeconds).toFixed(2) : '-';
      const pct = p.requests > 0 ? ((100 * p.throttled) / p.requests).toFixed(1) : '0.0';
      const windowRatio = p.windowFloorSeconds > 0 ? (p.cloudSeconds / p.windowFloorSeconds).toFixed(2) : '-';
      rows.push(`| ${r.fleet.toLocaleString('en-US')} | ${p.phase}${p.ok ? '' : ' (FAILED)'} | ${p.requests.toLocaleString('en-US')} | ${p.throttled} | ${pct} | `
        + `${p.wallSeconds.toFixed(1)} | ${(p.cloudSeconds / 60).toFixed(1)} | ${(p.floorSeconds / 60).toFixed(1)} | ${ratio} | ${operation} | `
        + `${(p.windowFloorSeconds / 60).toFixed(1)} | ${windowRatio} | ${p.failed} | `
        + `${p.longestResourceMinutes.toFixed(1)} | ${p.containers} |`);
    }
  }
  return rows;
}

/** A fleet's deploy waves as its synthesized templates chain them, checked against the library's wave plan. */
export interface WavePlanCheck {
  readonly identities: number;
  readonly nestedStacks: number;
  /** Pipelines per wave, in deploy order, read from the templates (nested stacks grouped by their `DependsOn` depth). */
  readonly waves: number[];
  /** Pipelines of the largest nested stack. */
  readonly largestStack: number;
  /** The first deploy's calls (4 per pipeline Create) and their rate floor, in minutes. */
  readonly calls: number;
  readonly floorMinutes: number;
  /** The longest wave's floor, in minutes: the longest any of its resources waits for its turns. */
  readonly longestWaveMinutes: number;
  /** Differences between the templates and `planWaves` (empty when they agree). */
  readonly mismatches: string[];
  readonly synthSeconds: number;
}

/** Synthesizes a fleet of `identities` sellers over `nestedStackCount` nested stacks and reads its waves from the templates. */
export function checkWavePlan(identities: number, nestedStackCount: number): WavePlanCheck {
  const dir = mkdtempSync(join(tmpdir(), 'dpi-wave-plan-'));
  try {
    const t0 = performance.now();
    synthFleetApp(dir, identities, undefined, nestedStackCount);
    const synthSeconds = (performance.now() - t0) / 1000;
    type Template = { Resources: Record<string, { Type: string; DependsOn?: string[]; Properties?: { TemplateURL?: unknown } }> };
    const parent = JSON.parse(readFileSync(join(dir, 'Partners.template.json'), 'utf8')) as Template;
    // A nested stack's template: the file asset whose hash its TemplateURL names.
    const assets = (JSON.parse(readFileSync(join(dir, 'Partners.assets.json'), 'utf8')) as { files: Record<string, { source: { path: string } }> }).files;
    const templateOf = (url: unknown): string => {
      const hash = /([0-9a-f]{64})\.json/.exec(JSON.stringify(url))?.[1];
      if (hash === undefined || assets[hash] === undefined) throw new Error(`no template asset for the nested stack URL ${JSON.stringify(url)}`);
      return join(dir, assets[hash].source.path);
    };
    const stacks = Object.entries(parent.Resources).filter(([, r]) => r.Type === 'AWS::CloudFormation::Stack');
    const names = new Set(stacks.map(([id]) => id));
    const pipelines = new Map<string, number>();
    for (const [id, r] of stacks) {
      const nested = JSON.parse(readFileSync(templateOf(r.Properties?.TemplateURL), 'utf8')) as Template;
      pipelines.set(id, Object.values(nested.Resources).filter((x) => x.Type === 'Custom::DpiNotificationPipeline').length);
    }
    const depth = new Map<string, number>();
    const depthOf = (id: string): number => {
      const known = depth.get(id);
      if (known !== undefined) return known;
      const deps = (parent.Resources[id].DependsOn ?? []).filter((d) => names.has(d));
      const d = deps.length === 0 ? 0 : 1 + Math.max(...deps.map(depthOf));
      depth.set(id, d);
      return d;
    };
    const waves: number[] = [];
    for (const [id] of stacks) {
      const d = depthOf(id);
      waves[d] = (waves[d] ?? 0) + pipelines.get(id)!;
    }
    const mismatches: string[] = [];
    const perWave = pipelinesPerWave(undefined)!;
    const counts = new Map<number, number>();
    for (let i = 0; i < identities; i++) {
      const b = fleetBucketOf(FIRST_IDENTITY + i, nestedStackCount);
      counts.set(b, (counts.get(b) ?? 0) + 1);
    }
    const plan = planWaves(counts, perWave);
    const planned = plan.waves.map((w) => w.reduce((sum, i) => sum + counts.get(i)!, 0));
    if (JSON.stringify(planned) !== JSON.stringify(waves)) mismatches.push(`templates chain waves of ${waves.join(', ')}; the plan says ${planned.join(', ')}`);
    if (waves.some((w) => w > perWave)) mismatches.push(`a wave holds more than ${perWave} pipelines`);
    const total = waves.reduce((a, b) => a + b, 0);
    if (total !== identities) mismatches.push(`the templates hold ${total} pipelines, not ${identities}`);
    const minutes = (calls: number): number => (calls / SERVICE_LIMIT.requests) * (SERVICE_LIMIT.seconds / 60);
    return {
      identities,
      nestedStacks: stacks.length,
      waves,
      largestStack: Math.max(...pipelines.values()),
      calls: CALLS_PER_PIPELINE * identities,
      floorMinutes: minutes(CALLS_PER_PIPELINE * identities),
      longestWaveMinutes: minutes(CALLS_PER_PIPELINE * Math.max(...waves)),
      mismatches,
      synthSeconds,
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
