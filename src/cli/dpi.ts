/** Entry point of the bundled `dpi` command line (assets/cli/dpi/index.js; the bundler adds the shebang). */
import { writeSync } from 'node:fs';
import { tellOldNodeFirst } from './node-version'; // first: replaces the AWS SDK's Node.js version warning before any client loads
import * as pkg from '../../package.json';

const argv = process.argv.slice(2);
if (argv.length === 1 && (argv[0] === '--version' || argv[0] === '-V')) {
  // What commander prints for the version option (program.ts), without loading commander and the commands: the
  // start-up of `dpi --version` is a bare Node.js start plus this file.
  // A synchronous write to the descriptor: process.stdout would load Node's stream modules for six bytes.
  const line = `${(pkg as { version?: string }).version ?? '0.0.0'}\n`;
  try {
    writeSync(1, line);
  } catch {
    process.stdout.write(line);
  }
} else {
  // A reader that closes the pipe early (`dpi --help | head -1`) has what it wanted: stop quietly, as Unix tools do,
  // instead of an unhandled `write EPIPE` and exit 1.
  const closedPipe = (e: NodeJS.ErrnoException): void => {
    if (e.code !== 'EPIPE') throw e;
    process.exit(Number(process.exitCode ?? 0));
  };
  process.stdout.on('error', closedPipe);
  // On a deprecated Node.js, its one line comes first, not between a command's progress lines.
  tellOldNodeFirst(argv.find((a) => !a.startsWith('-')));
  // Required here, not imported: the bundler then evaluates the program and its commands only on this path.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { runDpi } = require('./program') as typeof import('./program');
  runDpi(argv).then(
    (code) => {
      // Keep a code a command set itself (e.g. local-deploy) when it is higher.
      process.exitCode = Math.max(Number(process.exitCode ?? 0), code);
    },
    (e: unknown) => {
      process.stderr.write(`dpi: unexpected failure: ${(e as Error)?.message ?? String(e)}\n`);
      process.exitCode = 2;
    },
  );
}
