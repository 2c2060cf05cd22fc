import { randomBytes } from 'node:crypto';
import { renameSync, rmSync, writeFileSync } from 'node:fs';
import { rename, rm, writeFile } from 'node:fs/promises';
import { isObj } from './core';
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
  /** True when the emulator that wrote it stopped: its clock was saved as it stopped, not up to a save interval before. */
  readonly stopped?: unknown;
  /** Where the emulator that saved it listened (`SavedAddress`). */
  readonly address?: unknown;
  /** The rate window's request times (emulator clock, seconds) per client address. */
  readonly rateHits?: unknown;
}

/** Where an emulator listened: the host it was given and the port it had. */
export interface SavedAddress {
  readonly host: string;
  readonly port: number;
}

/** A saved window keeps at most this many client addresses (a loopback emulator has one or two). */
export const MAX_SAVED_CLIENTS = 100;

/**
 * The saved address, when a start on `host` may ask for it again: the same host, and a port from 1024 (a state file
 * never makes the emulator take a privileged port).
 */
export function savedAddress(saved: unknown, host: string): SavedAddress | undefined {
  if (!isObj(saved)) return undefined;
  const { host: h, port: p } = saved;
  return h === host && typeof p === 'number' && Number.isSafeInteger(p) && p >= 1024 && p <= 65535 ? { host, port: p } : undefined;
}

/**
 * The saved rate window as it is now: per client address, the request times within `(from, to]`, in order, the newest
 * `max` of them (the window never holds more); at most MAX_SAVED_CLIENTS addresses. Malformed entries are dropped.
 */
export function savedHits(saved: unknown, from: number, to: number, max: number): Map<string, number[]> {
  const out = new Map<string, number[]>();
  if (!isObj(saved)) return out;
  for (const [ip, times] of Object.entries(saved)) {
    if (out.size >= MAX_SAVED_CLIENTS) break;
    if (!Array.isArray(times)) continue;
    const kept = times.filter((t): t is number => typeof t === 'number' && Number.isFinite(t) && t > from && t <= to).sort((a, b) => a - b);
    if (kept.length > 0) out.set(ip, kept.slice(-max));
  }
  return out;
}

/** The window to save: each address's request times after `from` (the live lists are trimmed only when it sends). */
export function windowToSave(hits: ReadonlyMap<string, readonly number[]>, from: number): Record<string, number[]> {
  // fromEntries defines own properties: a key such as `__proto__` is saved as one, never as the prototype.
  return Object.fromEntries([...hits].map(([ip, times]) => [ip, times.filter((t) => t > from)]).filter(([, live]) => live.length > 0));
}
