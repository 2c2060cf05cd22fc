/**
 * The local runner starts the embedded emulator through this module: from the runner's bundle
 * (`assets/local/runner/index.js`) it loads the emulator's own bundle (`assets/emulator/server/index.js`) at run time,
 * so the package ships the emulator (fastify and its dependencies) once; from the sources (jest, ts-node) it requires
 * the emulator's module.
 */
import { existsSync } from 'node:fs';
import { basename, join } from 'node:path';
import type { EmulatorOptions, RunningEmulator } from '../emulator/server';

type EmulatorServer = typeof import('../emulator/server');

/** Where the emulator's bundle is, for code running from a bundle under assets/; undefined from the sources. */
export function emulatorBundlePath(from: string = __dirname): string | undefined {
  const assets = join(from, '..', '..');
  return basename(assets) === 'assets' ? join(assets, 'emulator', 'server', 'index.js') : undefined;
}

/** The emulator's server module (its bundle from a bundle, its source from the sources). */
export function emulatorServer(from: string = __dirname): EmulatorServer {
  // A require with a computed argument: esbuild leaves it to run time instead of bundling the emulator into the runner.
  const req = require;
  const bundle = emulatorBundlePath(from);
  if (bundle === undefined) return req(join(from, '..', 'emulator', 'server')) as EmulatorServer;
  if (!existsSync(bundle)) throw new Error(`${bundle} is missing: the package is incomplete (its bundles are built by 'npx projen bundle')`);
  return req(bundle) as EmulatorServer;
}

/** Starts the emulator (see src/emulator/server.ts). */
export function startEmulator(options: EmulatorOptions = {}): Promise<RunningEmulator> {
  return emulatorServer().startEmulator(options);
}

/** One line saying what fixtures did to a saved emulator state (see src/emulator/fixture-merge.ts). */
export function describeFixturesMerge(merge: NonNullable<RunningEmulator['fixturesMerge']>): string {
  return emulatorServer().describeFixturesMerge(merge);
}
