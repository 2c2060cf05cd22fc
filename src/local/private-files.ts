import { randomBytes } from 'node:crypto';
import { appendFileSync, mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';

/**
 * The local runner's files (state, journal, its write-ahead log, the handler log) hold what a deploy knows about an
 * account: they are written readable by their owner only (0600, whatever the umask), in a directory made 0700, and
 * replaced atomically through a temporary file of an unpredictable name created exclusively (`wx`: never through a
 * file or link someone placed there first).
 */
export const PRIVATE_FILE_MODE = 0o600;
export const PRIVATE_DIR_MODE = 0o700;

/** Creates the file's directory (0700 for the directories it makes). */
export function privateDirFor(file: string): void {
  mkdirSync(dirname(file), { recursive: true, mode: PRIVATE_DIR_MODE });
}

/** Replaces `file` with `text` atomically, readable by its owner only. */
export function writePrivateFile(file: string, text: string | Uint8Array): void {
  privateDirFor(file);
  const tmp = `${file}.${randomBytes(8).toString('hex')}.tmp`;
  try {
    writeFileSync(tmp, text, { mode: PRIVATE_FILE_MODE, flag: 'wx' });
    renameSync(tmp, file);
  } catch (e) {
    rmSync(tmp, { force: true });
    throw e;
  }
}

/** Appends to `file`, creating it readable by its owner only. */
export function appendPrivateFile(file: string, text: string): void {
  appendFileSync(file, text, { mode: PRIVATE_FILE_MODE });
}
