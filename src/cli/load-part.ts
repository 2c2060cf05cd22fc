import { existsSync } from 'node:fs';
import { basename, join } from 'node:path';

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
