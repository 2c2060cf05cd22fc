/**
 * The third-party modules of the command line and the local runner (the AWS SDK clients of `dpi` and of the handler
 * loaded by `dpi local-deploy`, and dynalite, the local journal server) are not dependencies of the package: they are
 * bundled once into their own part, `assets/local/vendor/index.js` (entry: vendor.ts), which the parts load at run
 * time only when a command uses one of them.
 *
 * In the bundles of the parts (`assets/cli/dpi`, `assets/cli/ops`, `assets/local/runner`, `assets/emulator/server`),
 * esbuild replaces each vendor module by a shim (`--alias`, .projenrc.ts; vendor-shims/) that calls `loadVendor`.
 * From the sources (jest, ts-node) the modules are required from node_modules (devDependencies of the repository).
 */
import { existsSync } from 'node:fs';
import { basename, join } from 'node:path';

/** The modules of the vendor bundle. */
export const VENDOR_IDS = ['@aws-sdk/client-dynamodb', '@aws-sdk/client-cloudformation', 'dynalite'] as const;

/** A module of the vendor bundle. */
export type VendorId = (typeof VENDOR_IDS)[number];

/** Whether `id` is a module of the vendor bundle. */
export function isVendorId(id: string): id is VendorId {
  return (VENDOR_IDS as readonly string[]).includes(id);
}

/** The vendor bundle's exports (vendor.ts). */
export interface VendorBundle {
  vendorModule(id: string): unknown;
}

/**
 * Where the vendor bundle is, for code running from a bundle under assets/ (`assets/<a>/<b>/index.js`, whose
 * directory is `from`); undefined for code running from the sources.
 */
export function vendorBundlePath(from: string = __dirname): string | undefined {
  const assets = join(from, '..', '..');
  return basename(assets) === 'assets' ? join(assets, 'local', 'vendor', 'index.js') : undefined;
}

/** Loads a vendor module: from the vendor bundle when running from a bundle, else from node_modules. */
export function loadVendor(id: VendorId, from: string = __dirname): unknown {
  // A require with a computed argument: esbuild leaves it to run time (nothing of the vendor bundle is parsed before).
  const req = require;
  const bundle = vendorBundlePath(from);
  if (bundle === undefined) return req(id);
  if (!existsSync(bundle)) throw new Error(`${bundle} is missing: the package is incomplete (its bundles are built by 'npx projen bundle'); it provides ${id}`);
  const m = (req(bundle) as VendorBundle).vendorModule(id);
  if (m === undefined) throw new Error(`${bundle} does not provide ${id}: rebuild the bundles with 'npx projen bundle'`);
  return m;
}
