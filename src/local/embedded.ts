/**
 * The embedded emulator of `dpi local-deploy` (started for the run when no `--emulator URL` is given): its state lives
 * beside the state file (`emulator-state.json`), and `--fixtures FILE` seeds it.
 *
 * The fixtures rule: fixtures seed a NEW emulator state. When `emulator-state.json` does not exist yet, the emulator
 * starts with the fixtures merged over its defaults, and their digest is recorded in `emulator-fixtures.json`; a later
 * run with the same fixtures (same content) starts from the saved state as usual. A run with other fixtures (or with
 * fixtures when the state was made without them) is refused before anything changes: the state is the emulated
 * service's database, and records the app made there would not match a different seed. Destroy with the old
 * fixtures and delete `emulator-state.json` (or the whole state directory) to seed again. A run without fixtures
 * always starts from the saved state.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import type { EmulatorFixtures, ReadMode, RunningEmulator } from '../emulator';
import { startEmulator } from './emulator-part';
import { JOURNAL_STATE_FILE_NAME } from './journal-server';
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
}

/**
 * Applies the fixtures rule (module comment) without starting anything: loads the fixtures (a bad file is an error
 * naming it) and refuses fixtures other than the ones the existing emulator state was seeded with. The runner calls it
 * before any change, also when the run turns out to need no emulator.
 */
export function planFixtures(stateDir: string, source: FixturesSource): FixturesPlan {
  const stateFile = join(stateDir, EMULATOR_STATE_FILE_NAME);
  const { fixtures, name } = loadFixtures(source);
  const digest = fixturesDigest(fixtures);
  if (!existsSync(stateFile)) return { fixtures, digest, name, seed: true };
  const record = readRecord(join(stateDir, EMULATOR_FIXTURES_RECORD_NAME));
  if (record?.sha256 === digest) return { fixtures, digest, name, seed: false };
  throw new Error(`the embedded emulator's state ${stateFile} exists and was seeded ${record ? `with other fixtures (${record.source})` : 'without these fixtures'}; `
    + `fixtures seed a new emulator state only: destroy the app with the fixtures it was deployed with, delete ${stateFile}, `
    + `and the lifecycle journal ${join(stateDir, JOURNAL_STATE_FILE_NAME)} with it (its records name the subscription IDs of the old state, `
    + 'which a new state hands out again), then deploy again with the new fixtures (or run a long-lived `dpi emulator --fixtures FILE '
    + '--state-file FILE` and pass --emulator URL)');
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
  if (!plan || !plan.seed) return { emulator: await startEmulator({ port: 0, stateFile, reads: o.reads, ...limit }), stateFile };
  const emulator = await startEmulator({ port: 0, stateFile, reads: o.reads, fixtures: plan.fixtures, ...limit });
  const recordFile = join(o.stateDir, EMULATOR_FIXTURES_RECORD_NAME);
  mkdirSync(dirname(recordFile), { recursive: true });
  writeFileSync(recordFile, `${JSON.stringify({ sha256: plan.digest, source: plan.name } satisfies FixturesRecord, undefined, 2)}\n`);
  return { emulator, stateFile, seededWith: plan.name };
}
