// commander is bundled into the dpi CLI by esbuild, so a devDependency is enough.
// eslint-disable-next-line import/no-extraneous-dependencies
import { Command } from 'commander';
import { Connection, ConnectionFlags, ConnectOptions, connect } from './connection';
import { CliIo } from './io';

/** State shared by the commands of one `dpi` run. */
export interface RunContext {
  readonly io: CliIo;
  /** Secrets to remove from anything printed (the refresh token once known). */
  readonly secrets: Set<string>;
  /** `--color` (true) or `--no-color` (false); undefined: colours on a terminal unless NO_COLOR is set. */
  colour?: boolean;
}

/** Whether output to stdout is coloured: `--color` / `--no-color`, else a terminal without NO_COLOR. */
export function useColour(ctx: RunContext): boolean {
  return ctx.colour ?? (ctx.io.isTTY.stdout && !ctx.io.env.NO_COLOR);
}

/**
 * Connects with a command's flags and remembers the secret for redaction. Rate-limit waits are printed on stderr;
 * pass `{ progress }` (or call `setProgress` on the result) to add how far the command has got (see `connect`).
 */
export function connectFor(ctx: RunContext, flags: ConnectionFlags, opts: ConnectOptions = {}): Connection {
  const c = connect(flags, ctx.io, opts);
  for (const s of c.secrets) ctx.secrets.add(s);
  return c;
}

/** Writes a value as pretty JSON. */
export function printJson(ctx: RunContext, value: unknown): void {
  ctx.io.stdout.write(JSON.stringify(value, null, 2) + '\n');
}

/** Adds `--json`. */
export function addJsonOption(cmd: Command): Command {
  return cmd.option('--json', 'print JSON for scripts instead of a table');
}
