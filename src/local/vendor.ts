/**
 * Entry of the vendor bundle, `assets/local/vendor/index.js`: the AWS SDK clients and dynalite, bundled once with
 * their dependencies and loaded only when a command uses them (vendor-load.ts). Each module is evaluated on its first
 * `vendorModule` call. dynalite's LevelDB backend (native bindings) is replaced by level-stub.ts.
 */
/* eslint-disable @typescript-eslint/no-require-imports, import/no-extraneous-dependencies */
import type { VendorId } from './vendor-load';

const LOADERS: Record<VendorId, () => unknown> = {
  '@aws-sdk/client-dynamodb': () => require('@aws-sdk/client-dynamodb'),
  '@aws-sdk/client-cloudformation': () => require('@aws-sdk/client-cloudformation'),
  'dynalite': () => require('dynalite'),
};

/** The module `id` (undefined when the bundle does not provide it). */
export function vendorModule(id: string): unknown {
  return Object.prototype.hasOwnProperty.call(LOADERS, id) ? LOADERS[id as VendorId]() : undefined;
}
