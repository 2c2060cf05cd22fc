/**
 * Builds the vendor bundle, `assets/local/vendor/index.js` (task `bundle:local/vendor`, part of `npx projen bundle`):
 * src/local/vendor.ts with the AWS SDK clients and dynalite, which the package ships instead of depending on them
 * (src/local/vendor-load.ts). Built with esbuild's API rather than a projen bundle (its command line) for one plugin:
 *
 * - dynalite loads its actions and validations with `require('./actions/' + action)`; esbuild bundles every file of the
 *   folder but keys them with their extension (`./actions/getItem.js`; evanw/esbuild#3328), so the extension is added
 *   to those two requires. A dynalite whose source no longer has them fails the build (the plugin must be revisited).
 * - `level` (LevelDB on disk, native bindings) is replaced by src/local/level-stub.ts: the journal server runs dynalite
 *   with its memory backend only.
 *
 * Run from the repository root: `ts-node --transpile-only projenrc/vendor-bundle.ts`.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { build, Plugin } from 'esbuild';

export const VENDOR_ENTRY = './src/local/vendor.ts';
export const VENDOR_OUTFILE = 'assets/local/vendor/index.js';

/** dynalite's computed requires, and what they become. */
const DYNALITE_REQUIRES: ReadonlyArray<[string, string]> = [
  ["require('./actions/' + action)", "require('./actions/' + action + '.js')"],
  ["require('./validations/' + action)", "require('./validations/' + action + '.js')"],
];

const dynaliteRequires: Plugin = {
  name: 'dynalite-requires',
  setup(b) {
    b.onLoad({ filter: /[\\/]node_modules[\\/]dynalite[\\/]index\.js$/ }, (args) => {
      let contents = readFileSync(args.path, 'utf8');
      for (const [from, to] of DYNALITE_REQUIRES) {
        if (!contents.includes(from)) throw new Error(`${args.path} no longer contains ${from}: check projenrc/vendor-bundle.ts against this dynalite`);
        contents = contents.split(from).join(to);
      }
      return { contents, loader: 'js' };
    });
  },
};

async function main(): Promise<void> {
  const result = await build({
    entryPoints: [VENDOR_ENTRY],
    outfile: VENDOR_OUTFILE,
    bundle: true,
    platform: 'node',
    target: 'node20',
    minify: true,
    alias: { level: './src/local/level-stub.ts' },
    plugins: [dynaliteRequires],
    logLevel: 'info',
    metafile: true,
  });
  // Its inputs, for the third-party notices (scripts/third-party-notices.js), outside the shipped assets.
  mkdirSync('.bundles', { recursive: true });
  writeFileSync('.bundles/local-vendor.meta.json', JSON.stringify(result.metafile));
}

main().catch((e: unknown) => {
  process.stderr.write(`${e instanceof Error ? e.message : String(e)}\n`);
  process.exit(1);
});
