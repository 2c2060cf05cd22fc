import { randomBytes } from 'node:crypto';
import { renameSync, rmSync, writeFileSync } from 'node:fs';
import { rename, rm, writeFile } from 'node:fs/promises';

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
