/**
 * The `dpi` command line (commander). `dpi.ts` is the bundled entry point; tests build the program
 * here with their own IO and run commands in-process (`runDpi`).
 */
// commander is bundled into the dpi CLI by esbuild, so a devDependency is enough.
// eslint-disable-next-line import/no-extraneous-dependencies
import { Command, CommanderError } from 'commander';
import * as pkg from '../../package.json';
import { localDeployCommand } from './commands/local-deploy';
import { insecureTransportReason } from '../local/transport';
import { driftCommand } from './commands/drift-command';
import { emulatorCommand } from './commands/emulator';
import { importCommand } from './commands/import';
import { journalCommand } from './commands/journal';
import { identitiesCommand, productsCommand, stagesCommand, storagesCommand } from './commands/lookups';
import { orphansCommand } from './commands/orphans-command';
import { planCommand } from './commands/plan-command';
import { statusCommand } from './commands/status';
import { subscriptionsCommand } from './commands/subscriptions';
import { txCommand } from './commands/tx';
import { REFRESH_TOKEN_ENV } from './connection';
import { RunContext } from './context';
import { CliError, EXIT, printable, redact, toCliError } from './errors';
import { CliIo, CliIoInit, resolveIo } from './io';

/** Version of the package `dpi` belongs to. */
export const DPI_VERSION: string = (pkg as { version?: string }).version ?? '0.0.0';

const HELP_FOOTER = `
Connection (every service command): --base-url / DPI_BASE_URL is the default of every address;
--subscriptions-url, --account-url, --user-url, --remote-identity-url, --auth-url (or DPI_SUBSCRIPTIONS_URL, ...)
override it. The refresh token comes from ${REFRESH_TOKEN_ENV} or --refresh-token-file FILE, never from a flag value.

Exit codes: 0 success; 1 dpi status found a record in ERROR, dpi drift found drift, dpi orphans found orphans, or
dpi local-deploy: a resource failed; 2 usage, configuration, connection or service error (nothing was changed).

Try it locally:  dpi emulator   (prints the URL and token to export), then  dpi products
`;

/** Runs a secret-scrubbing writer over a sink. */
function scrubbing(sink: CliIo['stdout'], secrets: Set<string>): CliIo['stdout'] {
  return { write: (text: string) => sink.write(redact(text, secrets)) };
}

/** The run context (IO with scrubbing writers) of one run. */
function contextOf(init: CliIoInit | undefined): RunContext {
  const raw = resolveIo(init);
  const secrets = new Set<string>();
  const envToken = raw.env[REFRESH_TOKEN_ENV]?.trim();
  if (envToken) secrets.add(envToken);
  const io: CliIo = { ...raw, stdout: scrubbing(raw.stdout, secrets), stderr: scrubbing(raw.stderr, secrets) };
  return { io, secrets };
}

function build(ctx: RunContext): Command {
  const io = ctx.io;
  const program = new Command('dpi')
    .description('Data Pipeline Integration: run the emulator, deploy locally, watch data movement, look up IDs')
    .version(DPI_VERSION, '-V, --version', 'print the version')
    .helpOption('-h, --help', 'show help')
    .configureOutput({
      writeOut: (s) => io.stdout.write(s),
      writeErr: (s) => io.stderr.write(s),
    })
    .option('--color', 'colour the output even when it is not a terminal')
    .option('--no-color', 'no colours (also when NO_COLOR is set)')
    .hook('preAction', (cmd) => {
      const c = (cmd.opts() as { color?: boolean }).color;
      if (c !== undefined) ctx.colour = c;
    })
    .exitOverride()
    .showSuggestionAfterError(true)
    .addHelpText('after', HELP_FOOTER);
  const add = (cmd: Command): void => {
    cmd.copyInheritedSettings(program);
    program.addCommand(cmd);
  };
  add(emulatorCommand(ctx));
  add(withSecureEmulatorUrl(localDeployCommand()));
  add(journalCommand(ctx));
  add(orphansCommand(ctx));
  add(txCommand(ctx));
  add(statusCommand(ctx));
  add(driftCommand(ctx));
  add(planCommand(ctx));
  add(productsCommand(ctx));
  add(stagesCommand(ctx));
  add(identitiesCommand(ctx));
  add(subscriptionsCommand(ctx));
  add(storagesCommand(ctx));
  add(importCommand(ctx));
  plainDefaults(program);
  return program;
}

/**
 * `dpi local-deploy --emulator URL` hands the refresh token to the handler, which sends it to that URL: plain http
 * only to this machine (checked before the run starts; exit 2).
 */
function withSecureEmulatorUrl(cmd: Command): Command {
  return cmd.hook('preAction', (c) => {
    const url = (c.opts() as { emulator?: unknown }).emulator;
    // The rule runLocalDeploy({ emulatorUrl }) applies too (src/local/transport.ts).
    const reason = typeof url === 'string' ? insecureTransportReason('--emulator', url) : undefined;
    if (reason) throw new CliError(reason, EXIT.FAILURE);
  });
}

/** Help shows every default as the value itself (`(default: 0)`, `(default: ./cdk.out)`), not as a quoted string. */
function plainDefaults(cmd: Command): void {
  for (const o of cmd.options) {
    if (typeof o.defaultValue === 'string' && o.defaultValueDescription === undefined) o.defaultValueDescription = o.defaultValue;
  }
  cmd.commands.forEach(plainDefaults);
}

/** Builds the `dpi` program (commander) with the given IO (default: the process's). */
export function buildProgram(io?: CliIoInit): Command {
  return build(contextOf(io));
}

/**
 * Runs `dpi` with `argv` (the arguments after `dpi`) and returns the exit code; messages go to the
 * IO's stderr (secrets removed). Never calls process.exit.
 */
export async function runDpi(argv: string[], init?: CliIoInit): Promise<number> {
  const ctx = contextOf(init);
  const program = build(ctx);
  try {
    await program.parseAsync(argv, { from: 'user' });
    return EXIT.OK;
  } catch (e) {
    if (e instanceof CommanderError) {
      // Help and version exit 0; every parse error (already printed by commander) is a usage error.
      return e.exitCode === 0 ? EXIT.OK : EXIT.FAILURE;
    }
    const err = toCliError(e);
    if (err.message) ctx.io.stderr.write(`dpi: ${printable(redact(err.message, ctx.secrets))}\n`);
    return err.exitCode;
  }
}
