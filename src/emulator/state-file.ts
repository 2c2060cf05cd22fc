import { randomBytes } from 'node:crypto';
import { renameSync, rmSync, writeFileSync } from 'node:fs';
import { rename, rm, writeFile } from 'node:fs/promises';
import type { EmulatorState } from './state';

/**
 * The emulator's state file holds its accounts and their tokens: it is written readable by its owner only (0600,
 * whatever the umask) and replaced atomically through a temporary file of an unpredictable name created exclusively
 * (`wx`: never through a file or link someone placed there first).
 */
const MODE = 0o600;
const tmpOf = (file: string): string => `${file}.${randomBytes(8).toString('hex')}.tmp`;

/** Replaces the state file (at stop and at start-up). */
export function writeStateFileSync(file: string, text: string): void {
  const tmp = tmpOf(file);
  try {
    writeFileSync(tmp, text, { mode: MODE, flag: 'wx' });
    renameSync(tmp, file);
  } catch (e) {
    rmSync(tmp, { force: true });
    throw e;
  }
}

/** Replaces the state file (after a change, before its answer). */
export async function writeStateFile(file: string, text: string): Promise<void> {
  const tmp = tmpOf(file);
  try {
    await writeFile(tmp, text, { mode: MODE, flag: 'wx' });
    await rename(tmp, file);
  } catch (e) {
    await rm(tmp, { force: true });
    throw e;
  }
}

/** What a state file holds. */
export interface SavedState {
  readonly state?: EmulatorState;
  readonly clockOffset?: number;
  readonly clockScale?: number;
  /** The address (origin) the emulator that saved it listened on. */
  readonly url?: unknown;
  /** The rate window's request times (emulator clock, seconds) per client address. */
  readonly rateHits?: unknown;
}

/**
 * The saved rate window's request times within `(from, to]` (the window as it is now), per client address, each
 * list in order; malformed entries are dropped.
 */
export function savedHits(saved: unknown, from: number, to: number): Map<string, number[]> {
  const out = new Map<string, number[]>();
  if (typeof saved !== 'object' || saved === null || Array.isArray(saved)) return out;
  for (const [ip, times] of Object.entries(saved)) {
    if (!Array.isArray(times)) continue;
    const kept = times.filter((t): t is number => typeof t === 'number' && Number.isFinite(t) && t > from && t <= to).sort((a, b) => a - b);
    if (kept.length > 0) out.set(ip, kept);
  }
  return out;
}

/**
 * The port to ask for first: the saved address's, when the caller asks for any free port (0) on the same host;
 * otherwise the caller's. A state file keeps its emulator's address as the service keeps its own.
 */
export function portToTry(port: number, host: string, savedUrl: unknown): number {
  if (port !== 0 || typeof savedUrl !== 'string') return port;
  let u: URL;
  try {
    u = new URL(savedUrl);
  } catch {
    return port;
  }
  const bare = (h: string): string => h.replace(/^\[|\]$/g, '');
  const p = Number(u.port);
  return bare(u.hostname) === bare(host) && Number.isSafeInteger(p) && p > 0 && p <= 65535 ? p : port;
}
