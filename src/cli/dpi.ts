/** Entry point of the bundled `dpi` command line (assets/cli/dpi/index.js; the bundler adds the shebang). */
import { runDpi } from './program';

runDpi(process.argv.slice(2)).then(
  (code) => {
    // Keep a code a command set itself (e.g. local-deploy) when it is higher.
    process.exitCode = Math.max(Number(process.exitCode ?? 0), code);
  },
  (e: unknown) => {
    process.stderr.write(`dpi: unexpected failure: ${(e as Error)?.message ?? String(e)}\n`);
    process.exitCode = 2;
  },
);
