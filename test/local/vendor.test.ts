/**
 * The package ships its third-party modules in the vendor bundle (src/local/vendor-load.ts): the loader, the `level`
 * stand-in, and the handler's scoped `require` (src/local/handler.ts) that gives the handler bundle the SDK clients
 * without them being resolvable from its directory. The installed-package runs are in test/packaging.
 *
 * Needs the bundles: `npx projen bundle`.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadHandler } from '../../src/local/handler';
import { Level } from '../../src/local/level-stub';
import { loadVendor, vendorBundlePath } from '../../src/local/vendor-load';

const ROOT = join(__dirname, '..', '..');
let dir: string;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'dpi-vendor-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

test('the level stand-in throws a clear error (dynalite runs in memory only)', () => {
  expect(() => new Level('/var/db')).toThrow(/LevelDB on disk \(\/var\/db\) is not part of data-pipeline-integration-cdk.*memory only/);
});

test('from a bundle under assets/ the vendor modules come from the vendor bundle; from the sources from node_modules', () => {
  const dpiDir = join(ROOT, 'assets', 'cli', 'dpi');
  expect(vendorBundlePath(dpiDir)).toBe(join(ROOT, 'assets', 'local', 'vendor', 'index.js'));
  expect(vendorBundlePath(join(ROOT, 'src', 'local'))).toBeUndefined();
  const bundled = loadVendor('@aws-sdk/client-dynamodb', dpiDir) as { DynamoDBClient?: unknown };
  expect(typeof bundled.DynamoDBClient).toBe('function');
  // eslint-disable-next-line @typescript-eslint/no-require-imports, import/no-extraneous-dependencies
  expect(bundled).not.toBe(require('@aws-sdk/client-dynamodb'));
  expect(typeof loadVendor('dynalite', dpiDir)).toBe('function');
});

test('a bundle whose vendor bundle is missing says the package is incomplete', () => {
  const part = join(dir, 'assets', 'cli', 'dpi');
  mkdirSync(part, { recursive: true });
  expect(() => loadVendor('dynalite', part)).toThrow(`${join(dir, 'assets', 'local', 'vendor', 'index.js')} is missing: the package is incomplete`);
});

test('the loaded handler gets the SDK clients from the package even where they do not resolve; other modules as usual', () => {
  // A handler bundle outside the repository: @aws-sdk/* does not resolve from its directory.
  const handlerDir = join(dir, 'handler');
  mkdirSync(handlerDir, { recursive: true });
  writeFileSync(join(handlerDir, 'helper.js'), 'module.exports = 42;');
  writeFileSync(join(handlerDir, 'index.js'), [
    '"use strict";',
    'const ddb = require("@aws-sdk/client-dynamodb");',
    'exports.onEvent = async () => ({ Data: { ddb: typeof ddb.DynamoDBClient, helper: require("./helper"), path: require("node:path").sep } });',
    'exports.iam = () => require("@aws-sdk/client-iam");',
    '',
  ].join('\n'));
  expect(() => require.resolve('@aws-sdk/client-dynamodb', { paths: [handlerDir] })).toThrow();
  const h = loadHandler(join(handlerDir, 'index.js')) as unknown as {
    onEvent(): Promise<{ Data: Record<string, unknown> }>;
    iam(): unknown;
  };
  return h.onEvent().then((out) => {
    expect(out.Data).toEqual({ ddb: 'function', helper: 42, path: '/' });
    expect(() => h.iam()).toThrow(/requires @aws-sdk\/client-iam, which local runs do not provide \(they provide @aws-sdk\/client-dynamodb, @aws-sdk\/client-cloudformation;/);
  });
});
