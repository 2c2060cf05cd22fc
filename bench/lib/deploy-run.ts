/**
 * One measured deploy and destroy of an app of N notification pipelines with `dpi local-deploy` (in process) against
 * an emulator whose rate limit is enforced: the service calls of each phase from the emulator's request log, the
 * 429s, the wall time and the rate-limit floor (calls / allowed rate).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { Duration } from 'aws-cdk-lib';
import { identityFixtures, synthFleetApp, synthPipelineApp } from './pipelines';
import { DEFAULT_REFRESH_TOKEN, RateLimit, startEmulator } from '../../src/emulator';
import { runLocalDeploy } from '../../src/local';

/** One entry of the emulator's request log. */
interface Logged { method: string; path: string; status: number }

/** The measured numbers of one phase (deploy or destroy). */
export interface PhaseNumbers {
  readonly ok: boolean;
  /** Service requests answered (not 429), token exchanges excluded. */
  readonly calls: number;
  /** Token exchanges (`POST /auth/api/ref`). */
  readonly exchanges: number;
  /** Requests answered 429. */
  readonly refused: number;
  /** calls / pipelines. */
  readonly perPipeline: number;
  /** Service calls by method and path (IDs replaced by {id}). */
  readonly byCall: Record<string, number>;
  readonly wallSeconds: number;
  /** (calls + exchanges) / allowed rate, in seconds. */
  readonly floorSeconds: number;
  /** Failed resource events. */
  readonly failures: string[];
  /** Lambda containers that served the phase (each exchanges the token and reads the account and products once). */
  readonly containers: number;
}

/** What `measureDeploy` returns. */
export interface DeployNumbers {
  readonly pipelines: number;
  readonly stacks: number;
  readonly synthSeconds: number;
  readonly deploy: PhaseNumbers;
  readonly destroy: PhaseNumbers;
  /** Pipelines and active product-107 subscriptions left in the emulator after the destroy. */
  readonly left: number;
  /** Writes of the emulator's state file over both phases. */
  readonly stateWrites: number;
}

/** Options of `measureDeploy`. */
export interface MeasureOptions {
  readonly pipelines: number;
  readonly rateLimit: RateLimit;
  /** `dpi local-deploy --concurrency`. @default the runner's default */
  readonly concurrency?: number;
  /** How the handler's waits for the rate limit pass (`LocalDeployOptions.waits`). @default 'real' (a benchmark measures them) */
  readonly waits?: 'real' | 'emulator-clock';
  /** Deploy the app once and destroy it before the measured cycle (an account with history). @default false */
  readonly warmHistory?: boolean;
  readonly pipelinesPerStack?: number;
  /** Declare the pipelines with one `NotificationPipelineFleet` (nested stacks) instead of plain stacks. @default false */
  readonly fleet?: boolean;
  /**
   * The provider's shared request budget (`ProviderOptions.rateLimitRequests`): the emulator's limit, or none (`0`).
   * @default false (the template's default, the service's documented 1,000 per 5 minutes)
   */
  readonly budget?: boolean;
}

const templated = (p: string): string => p.replace(/\/\d+(?=\/|$)/g, '/{id}');

function phaseNumbers(
  log: Logged[], pipelines: number, wallMs: number, rate: RateLimit, ok: boolean, failures: string[], containers: number,
): PhaseNumbers {
  const answered = log.filter((r) => r.status !== 429);
  const exchanges = answered.filter((r) => r.path === '/auth/api/ref').length;
  const service = answered.filter((r) => r.path !== '/auth/api/ref');
  const byCall: Record<string, number> = {};
  for (const r of service) {
    const k = `${r.method} ${templated(r.path)}`;
    byCall[k] = (byCall[k] ?? 0) + 1;
  }
  const perSecond = rate.requests / rate.seconds;
  return {
    ok,
    calls: service.length,
    exchanges,
    refused: log.length - answered.length,
    perPipeline: service.length / pipelines,
    byCall,
    wallSeconds: wallMs / 1000,
    floorSeconds: (service.length + exchanges) / perSecond,
    failures,
    containers,
  };
}

/** Synthesizes, deploys and destroys an app of `pipelines` pipelines against a fresh rate-limited emulator. */
export async function measureDeploy(o: MeasureOptions): Promise<DeployNumbers> {
  const dir = mkdtempSync(join(tmpdir(), 'dpi-deploy-growth-'));
  const emu = await startEmulator({
    host: '127.0.0.1', port: 0, rateLimit: o.rateLimit, fixtures: identityFixtures(o.pipelines), stateFile: join(dir, 'emulator-state.json'),
  });
  const admin = async <T>(method: string, path: string): Promise<T> => {
    const res = await fetch(`${emu.url}/_emulator${path}`, { method });
    return (res.status === 204 ? undefined : await res.json()) as T;
  };
  try {
    const t0 = performance.now();
    const outdir = join(dir, 'cdk.out');
    const provider = o.budget === undefined ? undefined
      : o.budget ? { rateLimitRequests: o.rateLimit.requests, rateLimitWindow: Duration.seconds(o.rateLimit.seconds) } : { rateLimitRequests: 0 };
    const stacks = o.fleet ? synthFleetApp(outdir, o.pipelines, provider) : synthPipelineApp(outdir, o.pipelines, o.pipelinesPerStack, provider);
    const synthSeconds = (performance.now() - t0) / 1000;
    const run = async (destroy: boolean, stateFile: string): Promise<PhaseNumbers> => {
      await admin('DELETE', '/requests');
      const started = performance.now();
      const r = await runLocalDeploy({
        app: outdir,
        destroy,
        emulatorUrl: emu.url,
        stateFile,
        refreshToken: DEFAULT_REFRESH_TOKEN,
        concurrency: o.concurrency,
        waits: o.waits,
        progress: () => undefined,
        output: () => undefined,
      });
      const wall = performance.now() - started;
      const failures = r.events.filter((e) => e.status.endsWith('_FAILED')).map((e) => `${e.logicalId}: ${e.reason ?? e.status}`);
      if (r.error) failures.push(r.error);
      return phaseNumbers(await admin<Logged[]>('GET', '/requests'), o.pipelines, wall, o.rateLimit, r.success, failures, r.containers?.used ?? 1);
    };
    if (o.warmHistory) {
      await run(false, join(dir, 'warm', 'local-state.json'));
      await run(true, join(dir, 'warm', 'local-state.json'));
    }
    const writesBefore = emu.stateWrites();
    const deploy = await run(false, join(dir, 'state', 'local-state.json'));
    const destroy = await run(true, join(dir, 'state', 'local-state.json'));
    const state = emu.state();
    const left = state.pipelines.length + state.subscriptions.filter((s) => s.product === 107 && s.status === 'active').length;
    return { pipelines: o.pipelines, stacks, synthSeconds, deploy, destroy, left, stateWrites: emu.stateWrites() - writesBefore };
  } finally {
    await emu.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}
