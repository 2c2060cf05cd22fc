/**
 * The apps whose templates each release keeps (CONTRIBUTING.md, "Releasing"; test/upgrade/upgrade.test.ts): the example
 * app (examples/app.ts) and a fleet app of 20 identities in 3 nested stacks (test/local/fleet-app.ts), synthesized
 * in-process with the current sources and written as a small cloud assembly: `manifest.json` and the stacks' and
 * nested stacks' templates, nothing else (no asset manifests, code bundles or tree.json).
 *
 * Normalized so that what changes with every build of the library, without touching a live record, makes no noise:
 * every content hash (64 hex digits: the provider function's code bundle `<hash>.zip`, a nested template's
 * `<hash>.json` object key, `asset.<hash>` folders) becomes `<asset-hash>`. A new handler bundle updates the
 * provider's Lambda function, never a service record. Nothing else is rewritten: the `Custom::Dpi*` resources'
 * properties (what the handler compares) stay exactly as synthesized.
 */
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildExampleApp } from '../../examples/app';
import { synthFleetApp } from '../local/fleet-app';

/** The kept apps, by folder name under a release's folder. */
export const KEPT_APPS = ['example', 'fleet'] as const;
export type KeptApp = typeof KEPT_APPS[number];

/** Where the releases' templates are kept: `test/upgrade/releases/<version>/<app>/`. */
export const RELEASES_DIR = join(__dirname, 'releases');

/** The fleet app's identities (20: the kept files stay small; 3 nested stacks as the fleet's default). */
export const FLEET_IDENTITIES = Array.from({ length: 20 }, (_, i) => 7001 + i);

/**
 * Nested stack templates are found by the `aws:asset:path` metadata (the cdk CLI sets this context too), not by
 * the hashed object key of the asset manifest, which is not kept.
 */
const ASSET_METADATA = { 'aws:cdk:enable-asset-metadata': 'true' };

const HASH = /\b[0-9a-f]{64}\b/g;

/** `value` with every content hash in its strings (keys too) replaced by `<asset-hash>`. */
export function normalizeHashes(value: unknown): unknown {
  if (typeof value === 'string') return value.replace(HASH, '<asset-hash>');
  if (Array.isArray(value)) return value.map(normalizeHashes);
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k.replace(HASH, '<asset-hash>'), normalizeHashes(v)]));
  }
  return value;
}

type MetadataEntry = { type?: string; data?: unknown };
interface Artifact {
  type?: string;
  properties?: Record<string, unknown>;
  dependencies?: string[];
  additionalMetadataFile?: string;
  metadata?: Record<string, MetadataEntry[]>;
}

/**
 * Construct metadata reduced to the logical IDs (what `dpi plan` reads for construct paths): warnings, asset entries
 * and creation stacks (file paths of the machine that synthesized) are not kept.
 */
function logicalIdsOnly(metadata: Record<string, MetadataEntry[]> | undefined): Record<string, MetadataEntry[]> {
  const out: Record<string, MetadataEntry[]> = {};
  for (const [path, entries] of Object.entries(metadata ?? {})) {
    const kept = (Array.isArray(entries) ? entries : []).filter((e) => e.type === 'aws:cdk:logicalId').map((e) => ({ type: e.type, data: e.data }));
    if (kept.length > 0) out[path] = kept;
  }
  return out;
}

/**
 * Copies the kept part of the cloud assembly `from` to `to` (emptied first), normalized: the manifest without its
 * asset-manifest and tree artifacts, the stacks' templates, the nested templates and any additional metadata files
 * (construct metadata: the logical IDs only).
 */
export function keepAssembly(from: string, to: string): string[] {
  rmSync(to, { recursive: true, force: true });
  mkdirSync(to, { recursive: true });
  const manifest = JSON.parse(readFileSync(join(from, 'manifest.json'), 'utf8')) as { artifacts?: Record<string, Artifact> };
  const artifacts: Record<string, Artifact> = {};
  const keep = new Set<string>(readdirSync(from).filter((f) => f.endsWith('.template.json')));
  const metadataFiles = new Set<string>();
  for (const [id, a] of Object.entries(manifest.artifacts ?? {})) {
    if (a.type === 'cdk:asset-manifest' || a.type === 'cdk:tree') continue;
    if (a.type === 'cdk:cloud-assembly') throw new Error(`${from}: nested cloud assembly ${id} (a stage) is not kept; keep apps without stages`);
    artifacts[id] = a.metadata ? { ...a, metadata: logicalIdsOnly(a.metadata) } : a;
    if (a.additionalMetadataFile) metadataFiles.add(a.additionalMetadataFile);
  }
  const files = ['manifest.json', ...[...keep, ...metadataFiles].sort()];
  writeJson(join(to, 'manifest.json'), normalizeHashes({ ...manifest, artifacts }));
  for (const f of files.slice(1)) {
    if (!existsSync(join(from, f))) throw new Error(`${from}: ${f} is named by the manifest but missing`);
    const content = JSON.parse(readFileSync(join(from, f), 'utf8')) as Record<string, MetadataEntry[]>;
    writeJson(join(to, f), normalizeHashes(metadataFiles.has(f) ? logicalIdsOnly(content) : content));
  }
  return files;
}

function writeJson(file: string, value: unknown): void {
  writeFileSync(file, `${JSON.stringify(value, undefined, 1)}\n`);
}

/** Synthesizes one kept app into `outdir` (a raw cloud assembly). */
export function synthKeptApp(app: KeptApp, outdir: string): void {
  if (app === 'example') {
    buildExampleApp({ outdir, context: ASSET_METADATA }).synth();
  } else {
    synthFleetApp(outdir, { identities: FLEET_IDENTITIES, context: ASSET_METADATA });
  }
}

/** Synthesizes every kept app with the current sources and writes the kept form under `dir/<app>/` (via `work/`). */
export function writeKeptApps(dir: string, work: string): Record<KeptApp, string[]> {
  const out = {} as Record<KeptApp, string[]>;
  for (const app of KEPT_APPS) {
    const raw = join(work, `${app}.out`);
    rmSync(raw, { recursive: true, force: true });
    synthKeptApp(app, raw);
    out[app] = keepAssembly(raw, join(dir, app));
    rmSync(raw, { recursive: true, force: true });
  }
  return out;
}

/** The kept releases (folder names under `releases/`), oldest first. */
export function keptReleases(root: string = RELEASES_DIR): string[] {
  if (!existsSync(root)) return [];
  return readdirSync(root, { withFileTypes: true }).filter((d) => d.isDirectory()).map((d) => d.name).sort(compareVersions);
}

/** Compares two `x.y.z` versions (a `v` prefix and a pre-release suffix ignored beyond the numbers). */
export function compareVersions(a: string, b: string): number {
  const nums = (v: string): number[] => v.replace(/^v/, '').split(/[.-]/).slice(0, 3).map((n) => Number.parseInt(n, 10) || 0);
  const [x, y] = [nums(a), nums(b)];
  for (let i = 0; i < 3; i++) if (x[i] !== y[i]) return x[i] - y[i];
  return 0;
}

/** Copies a kept app's folder (e.g. to doctor it in a test). */
export function copyKept(from: string, to: string): void {
  cpSync(from, to, { recursive: true });
}
