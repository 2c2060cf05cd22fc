/**
 * One emulator per state file. Each emulator saves its whole state to the file on every change and on stop, so two on
 * one file (a long-running `dpi emulator --state-file F` and `dpi local-deploy`'s embedded emulator on the same F)
 * would each overwrite what the other answered. A lock file beside it (`F.lock`, holding the owner's process ID) is
 * created exclusively when an emulator starts and removed when it stops; a lock whose process is gone is taken over.
 */
import { closeSync, mkdirSync, openSync, readFileSync, unlinkSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';

/** The state files this process's emulators hold (a second emulator of the same process is refused too). */
const HELD = new Set<string>();

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function create(lock: string): boolean {
  try {
    const fd = openSync(lock, 'wx', 0o600);
    try {
      writeSync(fd, `${process.pid}\n`);
    } finally {
      closeSync(fd);
    }
    return true;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw e;
  }
}

/** Takes the state file's lock or throws naming the emulator that holds it; returns the release. */
export function lockStateFile(file: string): () => void {
  const lock = `${file}.lock`;
  // The state file's folder may not exist yet (the first save makes it): the lock is taken before that.
  mkdirSync(dirname(lock), { recursive: true });
  for (let attempt = 0; attempt < 3; attempt++) {
    if (!HELD.has(file) && create(lock)) {
      HELD.add(file);
      let released = false;
      return () => {
        if (released) return;
        released = true;
        HELD.delete(file);
        try {
          if (readFileSync(lock, 'utf8').trim() === String(process.pid)) unlinkSync(lock);
        } catch {
          // Already gone: nothing to release.
        }
      };
    }
    let holder = NaN;
    try {
      holder = Number(readFileSync(lock, 'utf8').trim());
    } catch {
      continue; // released between the two steps: try again
    }
    const mine = holder === process.pid && HELD.has(file);
    if (mine || (Number.isSafeInteger(holder) && holder > 0 && holder !== process.pid && alive(holder))) {
      throw new Error(`emulator state file ${file} is in use by another emulator (pid ${holder}): two emulators on one state `
        + 'file overwrite each other\'s changes; stop it first, or send the run to it (dpi local-deploy --emulator <its URL>)');
    }
    // Its process is gone (or the lock is unreadable): take it over.
    try {
      unlinkSync(lock);
    } catch {
      // Another starter removed it first.
    }
  }
  throw new Error(`emulator state file ${file}: could not take its lock ${lock}`);
}
