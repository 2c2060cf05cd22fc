#!/usr/bin/env node
// @ts-check
/**
 * The third-party code the package ships inside its bundles, named with its licence (task `bundle:notices`, the last
 * step of `npx projen bundle`). esbuild writes each bundle's inputs to `.bundles/<bundle>.meta.json` (its metafile);
 * from the `node_modules` files among them this writes:
 * - `assets/<bundle>/THIRD-PARTY-NOTICES.txt`: each package in that bundle, its version, its licence and the licence
 *   text the package ships (the handler's folder is the Lambda code: the notices travel with it);
 * - `assets/sbom.cdx.json`: a CycloneDX 1.5 SBOM of every bundled package of the whole package (name, version, purl,
 *   licence, and the bundles it is in).
 * Run from the repository root: `node scripts/third-party-notices.js`.
 */
const { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } = require('node:fs');
const { dirname, join, relative } = require('node:path');

/** The bundles and their metafiles (written by the bundle tasks of .projenrc.ts and projenrc/vendor-bundle.ts). */
const BUNDLES = ['handler/index', 'cli/dpi', 'cli/ops', 'local/runner', 'local/vendor', 'emulator/server'];
const LICENCE_FILE = /^(licen[cs]e|copying|notice)(\.(md|txt|markdown))?$/i;

/** @param {string} bundle */
const metafileOf = (bundle) => join('.bundles', `${bundle.replace('/', '-')}.meta.json`);

/**
 * The package a bundled file belongs to: the root of the innermost `node_modules/<name>` (or `<@scope>/<name>`) in
 * its path, or undefined for the project's own files.
 * @param {string} file a path relative to the repository root, as esbuild's metafile names inputs
 */
function packageRootOf(file) {
  const parts = file.split(/[\\/]/);
  const at = parts.lastIndexOf('node_modules');
  if (at < 0 || at + 1 >= parts.length) return undefined;
  const n = parts[at + 1].startsWith('@') ? 2 : 1;
  return parts.slice(0, at + 1 + n).join('/');
}

/**
 * @typedef {{ name: string; version: string; license: string; text: string; bundles: string[] }} Component
 */

/**
 * The SPDX licence of a package.json: `license` (a string, or the old `{type}` object), else the old `licenses` list.
 * @param {{ license?: unknown; licenses?: unknown }} pkg
 */
function licenseOf(pkg) {
  /** @param {unknown} l */
  const one = (l) => (typeof l === 'string' ? l : l && typeof l === 'object' && 'type' in l ? String(l.type) : undefined);
  const single = one(pkg.license);
  if (single) return single;
  const list = Array.isArray(pkg.licenses) ? pkg.licenses.map(one).filter((l) => l !== undefined) : [];
  return list.length > 0 ? list.join(' OR ') : 'UNKNOWN';
}

/**
 * The packages of the bundles, by `name@version`.
 * @param {Record<string, { inputs: Record<string, unknown> }>} metafiles the metafile of each bundle
 * @param {string} root the repository root
 * @returns {Map<string, Component>}
 */
function componentsOf(metafiles, root) {
  /** @type {Map<string, Component>} */
  const out = new Map();
  for (const [bundle, meta] of Object.entries(metafiles)) {
    const roots = new Set(Object.keys(meta.inputs).map(packageRootOf).filter((r) => r !== undefined));
    for (const pkgRoot of roots) {
      const dir = join(root, /** @type {string} */ (pkgRoot));
      const manifest = join(dir, 'package.json');
      if (!existsSync(manifest)) continue;
      const pkg = JSON.parse(readFileSync(manifest, 'utf8'));
      const key = `${pkg.name}@${pkg.version}`;
      const known = out.get(key);
      if (known) {
        if (!known.bundles.includes(bundle)) known.bundles.push(bundle);
        continue;
      }
      const license = licenseOf(pkg);
      const files = readdirSync(dir).filter((f) => LICENCE_FILE.test(f)).sort();
      const text = files.map((f) => readFileSync(join(dir, f), 'utf8').trim()).join('\n\n');
      out.set(key, { name: pkg.name, version: pkg.version, license, text, bundles: [bundle] });
    }
  }
  return out;
}

/**
 * The notices text of one bundle: every package once in the list, then each licence text once, headed by the packages
 * it covers (two dozen AWS SDK packages share one Apache-2.0 text); packages that ship no text are named with what their
 * package.json declares.
 * @param {string} bundle
 * @param {Component[]} components the bundle's packages
 */
function noticesText(bundle, components) {
  const sorted = [...components].sort((a, b) => a.name.localeCompare(b.name) || a.version.localeCompare(b.version));
  const label = (/** @type {Component} */ c) => `${c.name} ${c.version} (${c.license})`;
  const head = [
    `Third-party software in assets/${bundle}/ of data-pipeline-integration-cdk.`,
    sorted.length === 0
      ? 'This bundle contains no third-party code: only the package\'s own (Apache-2.0).'
      : `This bundle contains the following ${sorted.length} package(s), each under its own licence:`,
    ...sorted.map((c) => `  ${label(c)}`),
    '',
  ];
  /** @type {Map<string, Component[]>} */
  const byText = new Map();
  for (const c of sorted) {
    const key = c.text || `(none: ${c.name})`;
    byText.set(key, [...(byText.get(key) ?? []), c]);
  }
  const rule = '-'.repeat(80);
  const body = [...byText.entries()].map(([text, cs]) => [
    rule,
    ...cs.map(label),
    rule,
    cs[0].text ? text : (cs[0].license === 'Apache-2.0'
      ? 'The package ships no licence text; it is under the Apache License 2.0, whose text is the LICENSE file of this package.'
      : `The package ships no licence text; its package.json declares: ${cs[0].license}.`),
    '',
  ].join('\n'));
  return `${head.join('\n')}\n${body.join('\n')}`;
}

/**
 * A CycloneDX 1.5 SBOM of the components.
 * @param {Component[]} components
 * @param {{ name: string; version: string }} self the package itself
 */
function sbomOf(components, self) {
  const purl = (/** @type {string} */ name, /** @type {string} */ version) => `pkg:npm/${name.startsWith('@') ? `%40${name.slice(1)}` : name}@${version}`;
  return {
    bomFormat: 'CycloneDX',
    specVersion: '1.5',
    version: 1,
    metadata: { component: { type: 'library', name: self.name, version: self.version, purl: purl(self.name, self.version) } },
    components: [...components].sort((a, b) => a.name.localeCompare(b.name)).map((c) => ({
      'type': 'library',
      'bom-ref': purl(c.name, c.version),
      'name': c.name,
      'version': c.version,
      'purl': purl(c.name, c.version),
      'licenses': [/^[A-Za-z0-9.+-]+$/.test(c.license) ? { license: { id: c.license } } : { expression: c.license }],
      'properties': c.bundles.sort().map((b) => ({ name: 'bundle', value: `assets/${b}/index.js` })),
    })),
  };
}

function main() {
  const root = join(__dirname, '..');
  /** @type {Record<string, { inputs: Record<string, unknown> }>} */
  const metafiles = {};
  for (const b of BUNDLES) {
    const f = join(root, metafileOf(b));
    if (!existsSync(f)) throw new Error(`${relative(root, f)} is missing: build the bundles first (npx projen bundle)`);
    metafiles[b] = JSON.parse(readFileSync(f, 'utf8'));
  }
  const all = [...componentsOf(metafiles, root).values()];
  for (const b of BUNDLES) {
    const out = join(root, 'assets', ...b.split('/'), 'THIRD-PARTY-NOTICES.txt');
    mkdirSync(dirname(out), { recursive: true });
    writeFileSync(out, noticesText(b, all.filter((c) => c.bundles.includes(b))));
  }
  const self = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
  writeFileSync(join(root, 'assets', 'sbom.cdx.json'), `${JSON.stringify(sbomOf(all, self))}\n`);
  process.stdout.write(`third-party notices: ${all.length} package(s) in ${BUNDLES.length} bundles (assets/*/*/THIRD-PARTY-NOTICES.txt, assets/sbom.cdx.json)\n`);
}

module.exports = { componentsOf, licenseOf, noticesText, sbomOf, packageRootOf, metafileOf, BUNDLES };
if (require.main === module) main();
