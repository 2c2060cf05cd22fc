/**
 * `dpi import` adoption of an existing fleet at the service's limit: N unified notification pipelines made through the
 * service's endpoints as its web UI makes them (no app, no journal), `dpi import --pipeline-roles` writing the stack
 * that adopts them (one `NotificationPipelineFleet`), that file synthesized, then deployed and destroyed by
 * `dpi local-deploy` in the runner that behaves like the cloud (bench/lib/cloud-limit.ts): the deploy adopts every
 * pipeline with its reads and no changing call, the destroy releases them (the imported file retains every record).
 *
 * The import itself runs in this process against the same emulator with no rate limit and no latency: its requests
 * are counted and its rate floor computed, not its time (the command line's waits run on the wall clock, which the
 * runner's time scale does not move).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { CloudLimitOptions, CloudLimitPhase, CloudLimitResult, measurePhase, SERVICE_LIMIT } from './cloud-limit';
import { identityFixtures } from './pipelines';
import { PLATFORM_FIRST_IDENTITY } from './platform-app';
import { runDpi } from '../../src/cli/program';
import { DEFAULT_CLOUD_ACCOUNT, DEFAULT_REFRESH_TOKEN } from '../../src/emulator';
import { stopWarmContainers } from '../../src/local/containers';
import { startEmbeddedEmulator } from '../../src/local/embedded';
import { pipelineSubscriptionBody, synthImportedStack, unifiedPipelineBody } from '../../test/local/hand-made';

const REPO = join(__dirname, '..', '..');
const ROLE = `arn:aws:iam::${DEFAULT_CLOUD_ACCOUNT}:role/dpi-management`;
const EB_ROLE = `arn:aws:iam::${DEFAULT_CLOUD_ACCOUNT}:role/service-spapi-firehose-role`;
const TYPES = ['ORDER_CHANGE', 'REPORT_PROCESSING_FINISHED'];

/** What `dpi import` did for the fleet. */
export interface ImportCount {
  /** Service requests of `dpi import --pipeline-roles` (token exchange included). */
  readonly requests: number;
  /** Their rate floor in seconds at the service's limit. */
  readonly floorSeconds: number;
  /** The command's summary line. */
  readonly summary: string;
}

/** The adoption's result: the import's count and the deploy and destroy phases at the limit. */
export interface AdoptionResult extends CloudLimitResult {
  readonly imported: ImportCount;
  /** Pipelines or product-107 subscriptions whose stored record the deploy or destroy changed (must be 0). */
  readonly changed: number;
}

type Json = Record<string, any>;

/** Makes `n` unified pipelines through the service's endpoints (rate limit off), `concurrency` at a time. */
async function seedPipelines(url: string, n: number, concurrency = 16): Promise<void> {
  const call = async (method: string, path: string, body: unknown, auth?: string): Promise<Json> => {
    const res = await fetch(`${url}${path}`, {
      method,
      headers: { 'content-type': 'application/json', ...(auth ? { authorization: `Bearer ${auth}` } : {}) },
      body: JSON.stringify(body),
    });
    const text = await res.text();
    if (res.status >= 300) throw new Error(`seeding: ${method} ${path}: ${res.status} ${text.slice(0, 300)}`);
    return JSON.parse(text) as Json;
  };
  const token = String((await call('POST', '/auth/api/ref', { data: { type: 'APIAuth', attributes: { refresh_token: DEFAULT_REFRESH_TOKEN } } })).data.attributes.token);
  let next = 0;
  const worker = async (): Promise<void> => {
    for (let i = next++; i < n; i = next++) {
      const identity = PLATFORM_FIRST_IDENTITY + i;
      const r = await call('POST', `/service/sp/notifications-unified/${identity}`, unifiedPipelineBody({ types: TYPES, role: ROLE, ebRole: EB_ROLE }), token);
      await call('POST', '/v2/sub', pipelineSubscriptionBody(identity, r, `notifications ${identity}`), token);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
}

/** The stored pipelines and product-107 subscriptions, as the emulator's admin interface shows them. */
async function storedFleet(url: string): Promise<Map<string, string>> {
  const state = await (await fetch(`${url}/_emulator/state`)).json() as { pipelines?: Json[]; subscriptions?: Json[] };
  const out = new Map<string, string>();
  for (const p of state.pipelines ?? []) out.set(`pipeline ${String(p.id)}`, JSON.stringify(p));
  for (const s of state.subscriptions ?? []) if (s.product === 107) out.set(`subscription ${String(s.id)}`, JSON.stringify(s));
  return out;
}

/** Runs `dpi import --pipeline-roles` against `url` into `file`; its request count and summary. */
async function importFleet(url: string, file: string): Promise<ImportCount> {
  await fetch(`${url}/_emulator/requests`, { method: 'DELETE' });
  let stdout = '';
  let stderr = '';
  const code = await runDpi(['import', '--out', file, '--pipeline-roles', `${ROLE},${EB_ROLE}`, '--class-name', 'AccountStack', '--module', join(REPO, 'src')], {
    isTTY: false,
    env: { DPI_BASE_URL: url, DPI_REFRESH_TOKEN: DEFAULT_REFRESH_TOKEN },
    stdout: { write: (s: string) => { stdout += s; } },
    stderr: { write: (s: string) => { stderr += s; } },
  });
  if (code !== 0) throw new Error(`dpi import exited ${code}: ${stderr.slice(0, 500)}`);
  const requests = ((await (await fetch(`${url}/_emulator/requests`)).json()) as unknown[]).length;
  return { requests, floorSeconds: (requests * SERVICE_LIMIT.seconds) / SERVICE_LIMIT.requests, summary: stdout.trim().replace(file, 'account-stack.ts') };
}

/** Synthesizes the imported stack (`AccountStack` of `file`) into `outdir`, in a Node process of its own. */
function synthImported(file: string, outdir: string): void {
  synthImportedStack({ src: join(REPO, 'src'), file, outdir, driver: join(outdir, '..', 'synth.js'), cwd: REPO });
}

/** Seeds `o.fleet` pipelines, imports them, then deploys (adopts) and destroys (releases) the imported stack at the limit. */
export async function measureAdoption(o: CloudLimitOptions): Promise<AdoptionResult> {
  // Inside the worktree, so that the generated file resolves aws-cdk-lib.
  const dir = mkdtempSync(join(REPO, '.bench-adoption-'));
  const log = o.log ?? (() => undefined);
  try {
    const stateDir = join(dir, 'state');
    const file = join(dir, 'account-stack.ts');
    const seeded = await startEmbeddedEmulator({ stateDir, reads: 'vendor', fixtures: identityFixtures(o.fleet, PLATFORM_FIRST_IDENTITY), rateLimit: 'off' });
    let imported: ImportCount;
    let before: Map<string, string>;
    try {
      log(`  seeding ${o.fleet} pipelines made through the service ...`);
      await seedPipelines(seeded.emulator.url, o.fleet);
      before = await storedFleet(seeded.emulator.url);
      const made = [...before.keys()].filter((k) => k.startsWith('subscription ')).length;
      if (made !== o.fleet) throw new Error(`seeding made ${made} product-107 subscriptions, not ${o.fleet}`);
      log(`  dpi import of ${o.fleet} pipelines ...`);
      imported = await importFleet(seeded.emulator.url, file);
      log(`  ${imported.summary} (${imported.requests} requests)`);
    } finally {
      await seeded.emulator.stop();
    }
    const cdkOut = join(dir, 'cdk.out');
    synthImported(file, cdkOut);
    const stateFile = join(stateDir, 'local-state.json');
    const phases: CloudLimitPhase[] = [];
    const adopt = await measurePhase(o, 'adopt (deploy after dpi import)', { app: cdkOut, stateFile, reads: 'vendor' });
    phases.push(adopt.phase);
    phases.push((await measurePhase(o, 'destroy (release)', { app: cdkOut, stateFile, reads: 'vendor', destroy: true })).phase);
    // What the deploy and the destroy left: every record as it was made (a released record is the account's again).
    const after = await startEmbeddedEmulator({ stateDir, reads: 'vendor', rateLimit: 'off' });
    let changed = 0;
    try {
      const now = await storedFleet(after.emulator.url);
      for (const [k, v] of before) if (now.get(k) !== v) changed++;
      changed += [...now.keys()].filter((k) => !before.has(k)).length;
    } finally {
      await after.emulator.stop();
    }
    return { fleet: o.fleet, resources: adopt.result.resources.length, timeScale: o.timeScale, phases, left: 0, imported, changed };
  } finally {
    stopWarmContainers();
    if (o.keep === true) log(`  kept ${dir}`);
    else rmSync(dir, { recursive: true, force: true });
  }
}
