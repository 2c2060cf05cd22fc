/**
 * scripts/third-party-notices.js (task `bundle:notices`): which packages a bundle holds, with which licence and text.
 * A fake repository with three packages and a metafile; the shipped files are checked by test/packaging.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

type Meta = Record<string, { inputs: Record<string, unknown> }>;
type Component = { name: string; license: string; text: string; bundles: string[] };
// eslint-disable-next-line @typescript-eslint/no-require-imports
const notices = require('../../scripts/third-party-notices.js') as {
  componentsOf(meta: Meta, root: string): Map<string, Component>;
  licenseOf(pkg: Record<string, unknown>): string;
  packageRootOf(file: string): string | undefined;
  noticesText(bundle: string, components: unknown[]): string;
  sbomOf(components: unknown[], self: { name: string; version: string }): { components: Array<{ purl: string; licenses: unknown[] }> };
};

let root: string;
beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'dpi-notices-'));
  const pkg = (dir: string, manifest: Record<string, unknown>, licence?: string): void => {
    mkdirSync(join(root, dir), { recursive: true });
    writeFileSync(join(root, dir, 'package.json'), JSON.stringify(manifest));
    if (licence) writeFileSync(join(root, dir, 'LICENSE'), licence);
  };
  pkg('node_modules/left-pad', { name: 'left-pad', version: '1.3.0', license: 'WTFPL' }, 'DO WHAT THE F*** YOU WANT');
  pkg('node_modules/@scope/old', { name: '@scope/old', version: '0.1.0', licenses: [{ type: 'MIT' }] });
  pkg('node_modules/left-pad/node_modules/inner', { name: 'inner', version: '2.0.0', license: { type: 'ISC' } }, 'ISC text');
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

test('a file belongs to the innermost package of its path; the project\'s own files to none', () => {
  expect(notices.packageRootOf('node_modules/left-pad/index.js')).toBe('node_modules/left-pad');
  expect(notices.packageRootOf('node_modules/@scope/old/lib/a.js')).toBe('node_modules/@scope/old');
  expect(notices.packageRootOf('node_modules/left-pad/node_modules/inner/x.js')).toBe('node_modules/left-pad/node_modules/inner');
  expect(notices.packageRootOf('src/handler/index.ts')).toBeUndefined();
});

test('licences in the three forms package.json has had', () => {
  expect(notices.licenseOf({ license: 'MIT' })).toBe('MIT');
  expect(notices.licenseOf({ license: { type: 'ISC' } })).toBe('ISC');
  expect(notices.licenseOf({ licenses: [{ type: 'MIT' }, { type: 'Apache-2.0' }] })).toBe('MIT OR Apache-2.0');
  expect(notices.licenseOf({})).toBe('UNKNOWN');
});

test('each bundle names its packages with their licence texts; the SBOM lists each once with the bundles it is in', () => {
  const meta = {
    'cli/dpi': { inputs: { 'src/cli/dpi.ts': {}, 'node_modules/left-pad/index.js': {}, 'node_modules/left-pad/node_modules/inner/x.js': {} } },
    'local/vendor': { inputs: { 'node_modules/@scope/old/lib/a.js': {}, 'node_modules/left-pad/other.js': {} } },
    'handler/index': { inputs: { 'src/handler/index.ts': {} } },
  };
  const all = [...notices.componentsOf(meta, root).values()];
  expect(all.map((c) => [c.name, c.license, c.bundles])).toEqual([
    ['left-pad', 'WTFPL', ['cli/dpi', 'local/vendor']],
    ['inner', 'ISC', ['cli/dpi']],
    ['@scope/old', 'MIT', ['local/vendor']],
  ]);
  const dpi = notices.noticesText('cli/dpi', all.filter((c) => c.bundles.includes('cli/dpi')));
  expect(dpi).toContain('following 2 package(s)');
  expect(dpi).toMatch(/^left-pad 1\.3\.0 \(WTFPL\)\n-+\nDO WHAT THE F\*\*\* YOU WANT$/m);
  expect(notices.noticesText('local/vendor', all.filter((c) => c.bundles.includes('local/vendor')))).toContain('@scope/old 0.1.0 (MIT)\n' + '-'.repeat(80) + '\nThe package ships no licence text');
  expect(notices.noticesText('handler/index', [])).toContain('contains no third-party code');
  const sbom = notices.sbomOf(all, { name: 'me', version: '1.0.0' });
  expect(sbom.components.map((c) => c.purl)).toEqual(['pkg:npm/%40scope/old@0.1.0', 'pkg:npm/inner@2.0.0', 'pkg:npm/left-pad@1.3.0']);
  expect(sbom.components[2].licenses).toEqual([{ license: { id: 'WTFPL' } }]);
});
