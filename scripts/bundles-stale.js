#!/usr/bin/env node
// @ts-check
/**
 * Exits 0 when the esbuild bundles (assets/) must be built: one is missing, or a source they are built from (src/,
 * projenrc/vendor-bundle.ts, package-lock.json) is newer than the oldest of them; exits 1 when they are up to date.
 * The condition of the test tasks' and the demo's bundle step (.projenrc.ts): the build bundles once (pre-compile),
 * and `npm test` after an edit still tests what was edited.
 */
const { existsSync, readdirSync, statSync } = require('node:fs');
const { join } = require('node:path');

const root = join(__dirname, '..');
const BUNDLES = ['handler/index', 'cli/dpi', 'cli/ops', 'local/runner', 'local/vendor', 'emulator/server'].map((b) => join(root, 'assets', b, 'index.js'));

/** The newest modification time (ms) of the files under a folder. */
function newest(dir) {
  let t = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    t = Math.max(t, e.isDirectory() ? newest(p) : statSync(p).mtimeMs);
  }
  return t;
}

// The notices step (scripts/third-party-notices.js) ends the bundle task: without its files the bundles are incomplete.
const NOTICES = [...BUNDLES.map((b) => join(b, '..', 'THIRD-PARTY-NOTICES.txt')), join(root, 'assets', 'sbom.cdx.json')];
const missing = [...BUNDLES, ...NOTICES].filter((b) => !existsSync(b));
if (missing.length > 0) process.exit(0);
const oldestBundle = Math.min(...BUNDLES.map((b) => statSync(b).mtimeMs));
const sources = Math.max(newest(join(root, 'src')), ...['projenrc/vendor-bundle.ts', 'scripts/third-party-notices.js', 'package-lock.json'].map((f) => statSync(join(root, f)).mtimeMs));
process.exit(sources > oldestBundle ? 0 : 1);
