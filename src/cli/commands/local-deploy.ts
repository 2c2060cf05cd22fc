/**
 * The `dpi local-deploy` command (its definition loads nothing heavy: the runner is imported when it runs).
 */
// commander is bundled into the dpi CLI by esbuild, so a devDependency is enough.
// eslint-disable-next-line import/no-extraneous-dependencies
import { Command, Option } from 'commander';
import { Latency, parseLatency, parseTimeScale } from '../../emulator/clock';
import { parseRateLimit, READ_MODES, ReadMode } from '../../emulator/core';
import { DEFAULT_REFRESH_TOKEN_ENV, DEFAULT_STATE_FILE } from '../../local/defaults';
import { DEFAULT_CONCURRENCY, parseConcurrency } from '../../local/scheduler';
import { CliError } from '../errors';
import { loadPart } from '../load-part';

interface LocalDeployFlags {
  app: string;
  emulator?: string;
  state: string;
  destroy?: boolean;
  refreshTokenEnv: string;
  handlerLogs?: boolean;
  json?: boolean;
  reads?: string;
  concurrency?: string;
  fixtures?: string;
  rateLimit?: string;
  containers?: 'isolated' | 'shared';
  redeliver?: 'never' | 'at-once' | 'after-answer';
  timeScale?: string;
  latency?: string;
}

/**
 * The `local-deploy` command for the `dpi` program. Sets `process.exitCode` to 2 when the run could not start (bad input,
 * unreadable files, unreachable emulator) and to 1 when a resource, rollback or clean-up failed.
 */
export function localDeployCommand(): Command {
  return new Command('local-deploy')
    .description('Deploy (or destroy) the Custom::Dpi* resources of a synthesized CDK app through the real handler against the emulator, like CloudFormation would')
    .option('--app <dir>', 'cloud assembly directory (cdk synth output)', './cdk.out')
    .option('--emulator <url>', 'URL of a running emulator (default: start an embedded emulator whose state lives beside the state file)')
    .option('--state <file>', 'state file (logical ID -> physical ID, properties, attributes; never secrets)', DEFAULT_STATE_FILE)
    .option('--destroy', 'delete every resource in the state in reverse dependency order and clear the state')
    .option('--refresh-token-env <name>', 'environment variable holding the refresh token (default token of the embedded emulator otherwise)', DEFAULT_REFRESH_TOKEN_ENV)
    .option('--handler-logs', 'also print the handler\'s log lines on stderr (always written to handler.log beside the state file)')
    .option('--concurrency <n>', 'resource operations of a stack in flight at once (independent resources concurrently, dependencies '
      + 'first, like CloudFormation); 1 runs one resource at a time', String(DEFAULT_CONCURRENCY))
    .option('--fixtures <file>', 'JSON file of fixtures seeding the embedded emulator, as for dpi emulator --fixtures (e.g. the app\'s '
      + 'identities); seed a new embedded emulator state; into a saved one, the records it lacks are added (e.g. new sellers), the others '
      + 'kept; refused with --emulator')
    .option('--json', 'print the result as JSON on stdout instead of the summary table')
    .addOption(new Option('--reads <mode>', 'how the embedded emulator answers reads: minimal (only what the spec shows) or vendor '
      + '(the vendor\'s documented shapes); default DPI_EMULATOR_READS or minimal').choices(READ_MODES))
    .option('--rate-limit <N/SECONDS|off>', 'the embedded emulator\'s rate limit per client address in a rolling window (default the '
      + 'service\'s 1000/300), or off to try a large app without waiting; refused with --emulator')
    .addOption(new Option('--containers <mode>', 'where the handler runs: isolated (as Lambda: a container per concurrent invocation, '
      + 'warm reuse, the function\'s timeout stops it) or shared (one in-process module, kinder than the cloud; for a debugger)')
      .choices(['isolated', 'shared']).default('isolated'))
    .addOption(new Option('--redeliver <mode>', 'deliver every event twice, as Lambda may (at least once): at-once (two containers at the '
      + 'same time) or after-answer (again after a lost answer); a fault to try the handler against').choices(['never', 'at-once', 'after-answer']).default('never'))
    .option('--time-scale <n>', 'every clock of the run (the embedded emulator\'s, the handler\'s, Lambda\'s timeouts, the waiter\'s polling, '
      + 'CloudFormation\'s service timeout) passes N times as fast as the wall clock, 1 to 3600 (60: an hour in a minute); refused with --emulator')
    .option('--latency <MS[~JITTER]>', 'the embedded emulator\'s latency per service request in milliseconds of service time, plus or minus up '
      + 'to JITTER at random; refused with --emulator')
    .action(async (flags: LocalDeployFlags) => {
      let rateLimit: ReturnType<typeof parseRateLimit> | undefined;
      let timeScale: number | undefined;
      let latency: Latency | undefined;
      for (const [flag, parse] of [
        ['--rate-limit', () => { rateLimit = flags.rateLimit === undefined ? undefined : parseRateLimit(flags.rateLimit); }],
        ['--time-scale', () => { timeScale = flags.timeScale === undefined ? undefined : parseTimeScale(flags.timeScale); }],
        ['--latency', () => { latency = flags.latency === undefined ? undefined : parseLatency(flags.latency); }],
      ] as const) {
        try {
          parse();
        } catch (e) {
          throw new CliError(`${flag}: ${(e as Error).message}`);
        }
      }
      // The runner (and the emulator it may embed) is loaded only when the command runs.
      const { runLocalDeploy } = loadPart<typeof import('../../local/runner')>('local/runner', '../local/runner');
      const result = await runLocalDeploy({
        app: flags.app,
        emulatorUrl: flags.emulator,
        stateFile: flags.state,
        destroy: flags.destroy,
        refreshTokenEnv: flags.refreshTokenEnv,
        showHandlerLogs: flags.handlerLogs,
        reads: flags.reads as ReadMode | undefined,
        concurrency: parseConcurrency(flags.concurrency),
        fixtures: flags.fixtures,
        containers: flags.containers,
        redeliver: flags.redeliver,
        ...(rateLimit !== undefined ? { rateLimit } : {}),
        ...(timeScale !== undefined ? { timeScale } : {}),
        ...(latency !== undefined ? { latency } : {}),
        output: flags.json ? () => undefined : undefined,
      });
      if (flags.json) process.stdout.write(`${JSON.stringify(result, undefined, 2)}\n`);
      // 2: the run could not start (bad input, unreadable files, unreachable emulator, no token): nothing was changed;
      // 1: a resource, a rollback or a clean-up failed.
      if (!result.success) process.exitCode = result.events.length === 0 && result.error !== undefined ? 2 : 1;
    });
}
