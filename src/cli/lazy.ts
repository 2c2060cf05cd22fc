import { existsSync } from 'node:fs';
import { basename, join } from 'node:path';
import { CliError } from './errors';

/**
 * Loads a heavy part of the command line (the local runner, the emulator's server) only when a command runs it.
 * In the bundled `dpi` (assets/cli/dpi/index.js) each part is its own bundle, `assets/<part>/index.js`, so `dpi tx`,
 * `dpi status` and the lookups never parse them (a part may load another part the same way); from the sources
 * (tests, ts-node) the module is required directly.
 *
 * @param part the bundle of the part under assets/, e.g. `local/runner`
 * @param source the module from src/cli, e.g. `../local/runner`
 */
export function loadPart<T>(part: string, source: string): T {
  // A require with a computed argument: esbuild leaves it to run time instead of bundling the part into dpi.
  const load = require;
  // A bundle lives in assets/<a>/<b>/index.js: assets is two folders up.
  const assets = join(__dirname, '..', '..');
  const bundled = join(assets, ...part.split('/'), 'index.js');
  if (basename(assets) === 'assets' && existsSync(bundled)) return load(bundled) as T;
  return load(join(__dirname, ...source.split('/'))) as T;
}

/**
 * Runs a command implemented in the `cli/ops` part. The part is its own bundle with its own copy of the error
 * classes, so what it throws is turned into a `CliError` of this bundle (message and exit code kept).
 */
export async function runOp(run: (ops: typeof import('./ops')) => Promise<void>): Promise<void> {
  const ops = loadPart<typeof import('./ops')>('cli/ops', './ops');
  try {
    await run(ops);
  } catch (e) {
    if (e instanceof CliError) throw e;
    const err = ops.toCliError(e);
    throw new CliError(err.message, err.exitCode);
  }
}
