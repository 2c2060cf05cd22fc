/**
 * The service a command that reads records talks to (`dpi drift`, `dpi plan`): the connection settings; or, with
 * --local and no service address, the embedded emulator of `dpi local-deploy` on its state (`emulator-state.json`
 * beside --state), loaded only then.
 */
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { DpiClient } from '../../client';
import { READ_MODES, ReadMode } from '../../emulator/core';
import { DEFAULT_REFRESH_TOKEN } from '../../emulator/fixtures';
import { CLI_MAX_RATE_LIMIT_WAIT_MS, ConnectionFlags, hasServiceAddress } from '../connection';
import { connectFor, RunContext } from '../context';
import { CliError } from '../errors';
import { loadPart } from '../load-part';
import { Progress, waitReporter } from '../waits';

/** The flags that choose the service. */
export interface ServiceFlags extends ConnectionFlags {
  local?: boolean;
  state: string;
  /** With --local and no service address: the embedded emulator's read mode (default DPI_EMULATOR_READS, else minimal). */
  reads?: string;
}

/** The service of a run and how to let it go. */
export interface Service {
  readonly client: DpiClient;
  readonly origins: string[];
  /** The embedded emulator of the local-deploy state (not a service address). */
  readonly embedded: boolean;
  close(): Promise<void>;
}

/** With --local and no service address, the embedded emulator's state file of the local-deploy state (when it exists). */
export function embeddedEmulatorState(ctx: RunContext, flags: ServiceFlags): string | undefined {
  const file = join(dirname(flags.state), 'emulator-state.json');
  return flags.local && !hasServiceAddress(flags, ctx.io.env) && existsSync(file) ? file : undefined;
}

/** The service of a run (see the module comment). */
export async function serviceOf(ctx: RunContext, flags: ServiceFlags, progress: Progress): Promise<Service> {
  const emulatorState = embeddedEmulatorState(ctx, flags);
  if (emulatorState !== undefined) {
    const reads = (flags.reads ?? ctx.io.env.DPI_EMULATOR_READS ?? 'minimal') as ReadMode;
    if (!(READ_MODES as readonly string[]).includes(reads)) throw new CliError(`DPI_EMULATOR_READS: '${reads}' is not a read mode; use one of ${READ_MODES.join(', ')}`);
    const { startEmulator } = loadPart<typeof import('../../emulator/server')>('emulator/server', '../emulator/server');
    let emu;
    try {
      emu = await startEmulator({ host: '127.0.0.1', port: 0, stateFile: emulatorState, reads, otherClients: true });
    } catch (e) {
      throw new CliError((e as Error).message);
    }
    const u = emu.url;
    const client = new DpiClient({
      endpoints: { baseUrl: u, subscriptionsUrl: u, accountUrl: u, userUrl: u, remoteIdentityUrl: u, authUrl: u },
      refreshToken: DEFAULT_REFRESH_TOKEN,
      requestTimeoutMs: 30_000,
      maxRateLimitWaitMs: CLI_MAX_RATE_LIMIT_WAIT_MS,
      onWait: waitReporter(ctx.io, progress),
    });
    ctx.secrets.add(DEFAULT_REFRESH_TOKEN);
    const running = emu;
    return { client, origins: [u], embedded: true, close: () => running.stop() };
  }
  const { client, origins } = connectFor(ctx, flags, { progress });
  return { client, origins, embedded: false, close: async () => undefined };
}
