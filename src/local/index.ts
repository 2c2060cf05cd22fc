/**
 * `dpi local-deploy`: drives the custom resources of a synthesized CDK app
 * through the real bundled handler against the (embedded) emulator.
 */
import { Command } from 'commander';

/** Options of a local deployment run. */
export interface LocalDeployOptions {
  /** Cloud assembly directory (default `./cdk.out`). */
  readonly app?: string;
  /** URL of a running emulator; default: start an embedded one for the run. */
  readonly emulatorUrl?: string;
  /** State file (default `.dpi/local-state.json`). */
  readonly stateFile?: string;
  /** Delete everything in the state instead of deploying. */
  readonly destroy?: boolean;
  /** Name of the environment variable holding the refresh token (default `DPI_REFRESH_TOKEN`). */
  readonly refreshTokenEnv?: string;
}

/** Result of a local deployment run. */
export interface LocalDeployResult {
  readonly success: boolean;
}

/** Runs a local deployment (placeholder until the runner lands). */
export async function runLocalDeploy(_options: LocalDeployOptions): Promise<LocalDeployResult> {
  throw new Error('local-deploy: not implemented yet');
}

/** The `local-deploy` command for the `dpi` program. */
export function localDeployCommand(): Command {
  return new Command('local-deploy')
    .description('Drive the custom resources of a synthesized CDK app through the real handler against the emulator')
    .option('--app <dir>', 'cloud assembly directory', './cdk.out')
    .option('--emulator <url>', 'URL of a running emulator (default: start an embedded one)')
    .option('--state <file>', 'state file', '.dpi/local-state.json')
    .option('--destroy', 'delete every resource in the state')
    .option('--refresh-token-env <name>', 'environment variable holding the refresh token', 'DPI_REFRESH_TOKEN')
    .action(async (opts: { app: string; emulator?: string; state: string; destroy?: boolean; refreshTokenEnv: string }) => {
      const result = await runLocalDeploy({
        app: opts.app, emulatorUrl: opts.emulator, stateFile: opts.state, destroy: opts.destroy, refreshTokenEnv: opts.refreshTokenEnv,
      });
      if (!result.success) process.exitCode = 1;
    });
}
