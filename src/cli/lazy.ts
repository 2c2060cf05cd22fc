import { CliError } from './errors';
import { loadPart } from './load-part';

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
