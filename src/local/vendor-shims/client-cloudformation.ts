/**
 * What `require('@aws-sdk/client-cloudformation')` gives in the bundles of the command line and the local runner (esbuild `--alias`,
 * .projenrc.ts): the module from the vendor bundle (../vendor-load.ts), loaded when first required.
 */
import { loadVendor } from '../vendor-load';

export = loadVendor('@aws-sdk/client-cloudformation');
