/**
 * The embedded emulator of `dpi local-deploy` (started for the run when no `--emulator URL` is given): its state lives
 * beside the state file (`emulator-state.json`), and `--fixtures FILE` seeds it.
 *
 * The fixtures rule: when `emulator-state.json` does not exist yet, the emulator starts with the fixtures merged over
 * its defaults (a new state). When it exists, the run starts from it, and fixtures other than the ones recorded in
 * `emulator-fixtures.json` are merged into it: the records the state lacks (e.g. the identities of sellers added to
 * the app) are added, the records it has are kept as saved (the app's records there may depend on them), the settings
 * are applied, and the run's progress says what was added and kept. The digest of the fixtures is recorded each time.
 * A run without fixtures always starts from the saved state.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import type { EmulatorFixtures, ReadMode, RunningEmulator } from '../emulator';
import { describeFixturesMerge, startEmulator } from './emulator-part';
import type { FixturesSource } from './options';
import { loadFixturesFile } from '../emulator/fixtures';

/** File name of the embedded emulator's state (beside the local-deploy state file). */
export const EMULATOR_STATE_FILE_NAME = 'emulator-state.json';
/** File name of the record of the fixtures the embedded emulator's state was seeded with. */
export const EMULATOR_FIXTURES_RECORD_NAME = 'emulator-fixtures.json';

export type { FixturesSource } from './options';

/** Options of the embedded emulator. */
export interface EmbeddedEmulatorOptions {
  /** Directory of the local-deploy state file. */
  readonly stateDir: string;
  readonly reads: ReadMode;
  readonly fixtures?: FixturesSource;
  /** The rate limit (default: the service's). */
  readonly rateLimit?: 'off' | { readonly requests: number; readonly seconds: number };
  /** Latency of each service request (service time). @default none */
  readonly latency?: { readonly ms: number; readonly jitterMs?: number };
  /** The emulator's clock passes this many times as fast as real time. @default 1 */
  readonly timeScale?: number;
}

/** The embedded emulator and what the run reports about it. */
export interface EmbeddedEmulator {
  readonly emulator: RunningEmulator;
  readonly stateFile: string;
  /** Where the fixtures came from, when this run seeded a new state with them. */
  readonly seededWith?: string;
  /** When this run merged other fixtures into the saved state: where they came from and what they added and kept. */
  readonly mergedWith?: { readonly name: string; readonly summary: string };
}

interface FixturesRecord {
  readonly sha256: string;
  readonly source: string;
}

function canonical(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(canonical);
  if (typeof v === 'object' && v !== null) {
    const o = v as Record<string, unknown>;
    return Object.fromEntries(Object.keys(o).sort().map((k) => [k, canonical(o[k])]));
  }
  return v;
}

/** The digest of fixtures (key order does not matter). */
export function fixturesDigest(fixtures: EmulatorFixtures): string {
  return createHash('sha256').update(JSON.stringify(canonical(fixtures))).digest('hex');
}

function readRecord(file: string): FixturesRecord | undefined {
  if (!existsSync(file)) return undefined;
  try {
    const r = JSON.parse(readFileSync(file, 'utf8')) as Partial<FixturesRecord>;
    return typeof r.sha256 === 'string' ? { sha256: r.sha256, source: String(r.source ?? 'fixtures') } : undefined;
  } catch {
    return undefined;
  }
}

/** Loads the fixtures of a source: the file's object, or the object given. */
export function loadFixtures(source: FixturesSource): { fixtures: EmulatorFixtures; name: string } {
  if (typeof source === 'string') return { fixtures: loadFixturesFile(source), name: resolve(source) };
  if (typeof source !== 'object' || source === null || Array.isArray(source)) throw new Error('fixtures must be a JSON object or the path of a JSON file');
  return { fixtures: source, name: 'fixtures given in code' };
}

/** What the fixtures rule decided for a run: seed a new emulator state with `fixtures`, or use the saved state. */
export interface FixturesPlan {
  readonly fixtures: EmulatorFixtures;
  readonly digest: string;
  readonly name: string;
  /** True when the emulator state does not exist yet (the fixtures seed it). */
  readonly seed: boolean;
  /** True when the emulator state exists and was seeded or merged with other fixtures (these are merged into it). */
  readonly merge: boolean;
}

/**
 * Applies the fixtures rule (module comment) without starting anything: loads the fixtures (a bad file is an error
 * naming it) and says whether they seed a new state, are merged into the saved one, or are the ones it already has.
 * The runner calls it before any change, also when the run turns out to need no emulator.
 */
export function planFixtures(stateDir: string, source: FixturesSource): FixturesPlan {
  const stateFile = join(stateDir, EMULATOR_STATE_FILE_NAME);
  const { fixtures, name } = loadFixtures(source);
  const digest = fixturesDigest(fixtures);
  if (!existsSync(stateFile)) return { fixtures, digest, name, seed: true, merge: false };
  const record = readRecord(join(stateDir, EMULATOR_FIXTURES_RECORD_NAME));
  return { fixtures, digest, name, seed: false, merge: record?.sha256 !== digest };
}

/** Starts the embedded emulator (see the module comment for the fixtures rule). */
export async function startEmbeddedEmulator(o: EmbeddedEmulatorOptions): Promise<EmbeddedEmulator> {
  const stateFile = join(o.stateDir, EMULATOR_STATE_FILE_NAME);
  const plan = o.fixtures === undefined ? undefined : planFixtures(o.stateDir, o.fixtures);
  const limit = {
    ...(o.rateLimit !== undefined ? { rateLimit: o.rateLimit } : {}),
    ...(o.latency !== undefined ? { latency: o.latency } : {}),
    ...(o.timeScale !== undefined ? { timeScale: o.timeScale } : {}),
  };
  if (!plan || (!plan.seed && !plan.merge)) return { emulator: await startEmulator({ port: 0, stateFile, reads: o.reads, ...limit }), stateFile };
  const emulator = await startEmulator({ port: 0, stateFile, reads: o.reads, fixtures: plan.fixtures, ...limit });
  const recordFile = join(o.stateDir, EMULATOR_FIXTURES_RECORD_NAME);
  mkdirSync(dirname(recordFile), { recursive: true });
  writeFileSync(recordFile, `${JSON.stringify({ sha256: plan.digest, source: plan.name } satisfies FixturesRecord, undefined, 2)}\n`);
  if (plan.seed || !emulator.fixturesMerge) return { emulator, stateFile, seededWith: plan.name };
  return { emulator, stateFile, mergedWith: { name: plan.name, summary: describeFixturesMerge(emulator.fixturesMerge) } };
}
