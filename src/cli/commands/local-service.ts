/**
 * `--local` for the commands that read the service (`dpi status`, `dpi subscriptions`): the embedded emulator of
 * `dpi local-deploy` on its saved state (`emulator-state.json` beside `--state`), as `dpi drift --local` uses it.
 */
import { dirname, join } from 'node:path';
// commander is bundled into the dpi CLI by esbuild, so a devDependency is enough.
// eslint-disable-next-line import/no-extraneous-dependencies
import { Command, Option } from 'commander';
import { READ_MODES } from '../../emulator/core';
import { DEFAULT_STATE_FILE } from '../../local/defaults';
import { lockState } from '../../local/state';
import { hasServiceAddress } from '../connection';
import { connectFor, RunContext } from '../context';
import { CliError } from '../errors';
import { embeddedEmulatorState, Service, serviceOf, ServiceFlags } from './service-of';

/** Adds `--local`, `--state` and `--reads`. */
export function addLocalOptions(cmd: Command): Command {
  return cmd
    .option('--local', 'the embedded emulator of dpi local-deploy (its saved state beside --state) instead of the service')
    .option('--state <file>', 'state file of dpi local-deploy (with --local)', DEFAULT_STATE_FILE)
    .addOption(new Option('--reads <mode>', 'with --local: how the embedded emulator answers reads; default DPI_EMULATOR_READS or minimal')
      .choices(READ_MODES));
}

/**
 * The service of a command with `addLocalOptions`: with --local and no service address, the embedded emulator's saved
 * state (which must exist); with --local and a service address (a long-lived `dpi emulator` given to local-deploy with
 * --emulator), that address.
 */
export async function openService(ctx: RunContext, flags: ServiceFlags): Promise<Service> {
  if (flags.local && !hasServiceAddress(flags, ctx.io.env) && embeddedEmulatorState(ctx, flags) === undefined) {
    const file = join(dirname(flags.state), 'emulator-state.json');
    throw new CliError(`--local: ${file} does not exist: nothing was deployed with dpi local-deploy --state ${flags.state} `
      + '(an app deployed with --emulator URL: give that URL as DPI_BASE_URL)');
  }
  if (flags.local && embeddedEmulatorState(ctx, flags) !== undefined) {
    // The emulator saves its state when it stops: not while a local-deploy of another process holds the state.
    let unlock: () => void;
    try {
      unlock = lockState(flags.state);
    } catch (e) {
      throw new CliError((e as Error).message);
    }
    try {
      const service = await serviceOf(ctx, flags, () => undefined);
      return { ...service, close: async () => { try { await service.close(); } finally { unlock(); } } };
    } catch (e) {
      unlock();
      throw e;
    }
  }
  if (flags.local) return serviceOf(ctx, flags, () => undefined);
  const { client, origins } = connectFor(ctx, flags);
  return { client, origins, embedded: false, close: async () => undefined };
}
