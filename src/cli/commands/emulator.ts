// commander is bundled into the dpi CLI by esbuild, so a devDependency is enough.
// eslint-disable-next-line import/no-extraneous-dependencies
import { Command, Option } from 'commander';
import { isLoopbackHost } from '../../emulator/browser-guard';
import { Latency, parseLatency, parseTimeScale } from '../../emulator/clock';
import { parseRateLimit, RateLimit, READ_MODES, ReadMode } from '../../emulator/core';
import { DEFAULT_REFRESH_TOKEN, EmulatorFixtures, loadFixturesFile } from '../../emulator/fixtures';
import { RunContext } from '../context';
import { CliError } from '../errors';
import { parseIntFlag } from '../format';
import { interruption } from '../io';
import { loadPart } from '../load-part';

interface EmulatorFlags {
  host: string;
  port: string;
  fixtures?: string;
  tokenTtl?: string;
  stateFile?: string;
  reads: string;
  rateLimit: string;
  timeScale?: string;
  latency?: string;
}

/** `dpi emulator` */
export function emulatorCommand(ctx: RunContext): Command {
  return new Command('emulator')
    .description('run the service emulator on this machine until Ctrl-C (for tests, demos and trying an app without an account)')
    .option('--host <host>', 'address to listen on', '127.0.0.1')
    .addOption(new Option('--port <port>', 'port (0 = any free port; with --state-file, the one it last listened on when free)').default('0', '0'))
    .option('--fixtures <file>', 'JSON file of fixtures merged over the defaults (see docs/emulator.md)')
    .option('--token-ttl <seconds>', 'lifetime of issued access tokens in seconds (default: 3600)')
    .option('--state-file <file>', 'keep the state in this JSON file (loaded at start when present, saved on every change and on stop)')
    .option('--reads <mode>', 'response shapes: minimal (only what the interface spec shows) or vendor (as the vendor docs show)', 'minimal')
    .addOption(new Option('--rate-limit <N/SECONDS|off>', 'requests per client address in a rolling window (the service\'s 1,000 per 5 minutes), or off')
      .default('1000/300', '1000/300'))
    .option('--time-scale <n>', 'the clock passes N times as fast as real time (1 to 3600): rate window, Retry-After, jobs; the latency '
      + 'takes 1/N of its time (default 1)')
    .option('--latency <MS[~JITTER]>', 'every service request waits MS milliseconds of service time, plus or minus up to JITTER at random '
      + '(default none)')
    .option('--no-healthchecks', 'do not serve the healthchecks listing (it answers 404, like a service that does not serve it)')
    .option('--no-pagination', 'answer every list with all its records as {data: [...]}, no links or meta (like a service that does not paginate)')
    .action(async (opts: EmulatorFlags & { healthchecks?: boolean; pagination?: boolean }) => {
      const io = ctx.io;
      let port: number;
      let ttl: number | undefined;
      let fixtures: EmulatorFixtures | undefined;
      if (!(READ_MODES as readonly string[]).includes(opts.reads)) {
        throw new CliError(`--reads must be one of ${READ_MODES.join(', ')} (got '${opts.reads}')`);
      }
      const reads = opts.reads as ReadMode;
      let rateLimit: RateLimit | 'off';
      try {
        rateLimit = parseRateLimit(opts.rateLimit);
      } catch (e) {
        throw new CliError(`--rate-limit: ${(e as Error).message}`);
      }
      let timeScale: number | undefined;
      let latency: Latency | undefined;
      try {
        if (opts.timeScale !== undefined) timeScale = parseTimeScale(opts.timeScale);
      } catch (e) {
        throw new CliError(`--time-scale: ${(e as Error).message}`);
      }
      try {
        if (opts.latency !== undefined) latency = parseLatency(opts.latency);
      } catch (e) {
        throw new CliError(`--latency: ${(e as Error).message}`);
      }
      try {
        port = parseIntFlag('--port', opts.port, 0, 65535);
        if (opts.tokenTtl !== undefined) ttl = parseIntFlag('--token-ttl', opts.tokenTtl, 1);
        if (opts.fixtures !== undefined) fixtures = loadFixturesFile(opts.fixtures);
      } catch (e) {
        throw new CliError((e as Error).message);
      }
      // Subscribe before starting so that an early Ctrl-C still stops the server cleanly.
      const intr = interruption(io);
      let emu;
      // The server (fastify) is loaded only when the emulator runs.
      const { startEmulator, describeFixturesMerge } = loadPart<typeof import('../../emulator/server')>('emulator/server', '../emulator/server');
      try {
        emu = await startEmulator({
          host: opts.host,
          port,
          fixtures,
          tokenTtlSeconds: ttl,
          stateFile: opts.stateFile,
          reads,
          rateLimit,
          healthchecks: opts.healthchecks,
          pagination: opts.pagination,
          timeScale,
          latency,
        });
      } catch (e) {
        intr.dispose();
        throw new CliError(`cannot start the emulator on ${opts.host}:${port}: ${(e as Error).message}`);
      }
      io.stdout.write(`listening on ${emu.url}\n`);
      if (emu.movedFrom) {
        io.stderr.write(`the address ${opts.stateFile} was last served at, ${emu.movedFrom}, is taken (or another port was asked for): `
          + 'its saved rate window starts empty here\n');
      }
      if (emu.fixturesMerge) {
        io.stdout.write(`fixtures merged into the saved state of ${opts.stateFile}: ${describeFixturesMerge(emu.fixturesMerge)}\n`);
      }
      if (!isLoopbackHost(opts.host)) {
        io.stderr.write(`warning: --host ${opts.host} is not this machine's loopback address: anyone who can reach ${emu.url} can use the `
          + 'admin API (/_emulator/*: reset, faults, the state with its tokens) and the default refresh token; it has no authentication\n');
      }
      io.stdout.write(
        `default refresh token for local use (emulator only, not a secret): ${DEFAULT_REFRESH_TOKEN}\n`
        + `  export DPI_BASE_URL=${emu.url}\n`
        + `  export DPI_REFRESH_TOKEN=${DEFAULT_REFRESH_TOKEN}\n`
        + `responses: ${reads} reads; rate limit ${rateLimit === 'off' ? 'off' : `${rateLimit.requests} per ${rateLimit.seconds} s`}`
        + `${timeScale !== undefined ? `; time scale ${timeScale}` : ''}${latency ? `; latency ${latency.ms} ms${latency.jitterMs ? ` ± ${latency.jitterMs} ms` : ''}` : ''}; admin API under /_emulator/ (see docs/emulator.md); press Ctrl-C to stop\n`,
      );
      const signal = await intr.promise;
      intr.dispose();
      io.stderr.write(`${signal}: stopping the emulator\n`);
      await emu.stop();
      io.stderr.write('emulator stopped\n');
    });
}
