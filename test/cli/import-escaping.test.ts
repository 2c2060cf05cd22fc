/**
 * `dpi import` writes what the service answers into TypeScript: a malicious or compromised service must not get code
 * to run on the machine that compiles the generated file (`cdk synth`). The emulator serves the payloads (names through
 * its fixtures; an ID that is not an integer through an injected answer, as a compromised service would send it); the
 * generated file is checked for syntax, transpiled and run in a vm sandbox whose `require` reaches the real `fs` (so a
 * payload that ran would create its marker file), and the stack's constructor is called with stand-ins of the
 * constructs, which record the properties the file passes.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as vm from 'node:vm';
import * as ts from 'typescript';
import { dpi, fault, SUB, testNoSecretsPrinted, useCliEmulator } from './helpers';
import { importModel, renderImportedStack } from '../../src/cli/commands/import';
import { commentText, idCode, tsString } from '../../src/cli/commands/import-code';
import { RunningEmulator } from '../../src/emulator';

let emu: RunningEmulator;
useCliEmulator((e) => {
  emu = e;
}, { reads: 'vendor', resetEach: true });

let dir: string;
let marker: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'dpi-import-escaping-'));
  marker = join(dir, 'pwned');
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** Code that creates the marker file when it runs (as a statement and as an expression). */
const payload = (): string => `require('fs').writeFileSync(${JSON.stringify(marker)}, 'x')`;

/** What the generated stack passed to each construct it made. */
interface Made { type: string; id: string; props: Record<string, unknown> }

/**
 * Checks the generated file's syntax, transpiles it and runs it in a sandbox: the module body, then the stack's
 * constructor. The constructs are stand-ins that record their properties; any other module is the real one.
 */
function runGenerated(code: string, module = 'data-pipeline-integration-cdk'): Made[] {
  const compilerOptions = { module: ts.ModuleKind.CommonJS, target: ts.ScriptTarget.ES2020 };
  const out = ts.transpileModule(code, { reportDiagnostics: true, compilerOptions });
  const errors = (out.diagnostics ?? []).map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'));
  expect(errors).toEqual([]);
  const made: Made[] = [];
  const construct = (type: string) => class {
    constructor(_scope: unknown, id: string, props: Record<string, unknown>) {
      made.push({ type, id, props });
    }
  };
  const stubs: Record<string, unknown> = {
    'aws-cdk-lib': { RemovalPolicy: { RETAIN: 'RETAIN', DESTROY: 'DESTROY' }, Stack: class { constructor(..._a: unknown[]) { /* stand-in */ } } },
    'constructs': { Construct: class {} },
    [module]: { ServiceConnection: class {}, Subscription: construct('Subscription'), SubscriptionStatus: { PAUSED: 'paused' } },
  };
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const sandboxRequire = (name: string): unknown => (name in stubs ? stubs[name] : require(name));
  const exports: Record<string, any> = {};
  vm.runInNewContext(out.outputText, { require: sandboxRequire, exports, module: { exports } }, { timeout: 5000 });
  const cls = Object.values(exports).find((v) => typeof v === 'function');
  expect(cls).toBeDefined();
  new cls({}, 'Imported', { connection: () => ({}) });
  return made;
}

describe('the code writers', () => {
  const nasty = [
    '', 'plain', 'it\'s', 'say "hi"', 'back\\slash', '\\\'', '\\"', 'a\nb', 'a\rb', 'a\r\nb', 'a\u2028b', 'a\u2029b', 'tab\tnul\u0000esc\u001b[31m',
    '\'); require(\'fs\'); (\'', '*/ x /*', '${1}', '`', '\ud800 lone surrogate', 'emoji \u{1f600}', 'c1 \u0085\u009b',
  ];
  test('tsString: a literal that reads back as the very string, on one line, through JSON.stringify\'s escaping', () => {
    for (const s of nasty) {
      const lit = tsString(s);
      expect(lit).not.toMatch(/[\r\n\u2028\u2029]/);
      expect(vm.runInNewContext(ts.transpileModule(`exports.v = ${lit};`, {}).outputText, { exports: {} })).toBe(s);
    }
    expect(tsString('it\'s "x"')).toBe('\'it\\\'s "x"\'');
  });

  test('commentText: no line terminator, no control character, no end of a block comment', () => {
    for (const s of nasty) expect(commentText(s)).not.toMatch(/[\r\n\u2028\u2029\u0000-\u001f\u007f-\u009f]|\*\//);
    expect(commentText('Orders\u2028code()')).toBe('Orders code()');
  });

  test('idCode: positive decimal integers only, the bad value named', () => {
    expect(idCode('9001', 'x')).toBe('9001');
    expect(idCode(9001, 'x')).toBe('9001');
    for (const bad of ['0', '01', '-1', '1e3', '0x10', ' 1', '1 ', '1.5', '', '(require(\'fs\'),1)', '99999999999999999999', 1.5, NaN, null, {}]) {
      expect(() => idCode(bad, 'the subscription ID')).toThrow(/dpi import: the service answered the subscription ID .*which is not an ID/);
    }
  });

  test('renderImportedStack refuses a model whose ID is not an integer (a model not made by importModel)', () => {
    const model = { subscriptions: [{ subscriptionId: '(1)', productId: 3001, status: 'active' as const }], notImported: [], notShown: [] };
    expect(() => renderImportedStack(model, { className: 'S', module: 'm' })).toThrow('the subscription ID "(1)"');
  });
});

describe('dpi import against a service that sends code', () => {
  test('a subscription ID that is an expression: the import fails naming it, nothing is written, nothing runs', async () => {
    const id = `(${payload()},1)`;
    await fault(emu, {
      method: 'GET',
      pathPrefix: '/v2/sub',
      status: 200,
      body: {
        data: [{
          id,
          type: 'subscriptions',
          attributes: { status: 'active', product_id: 3001, remote_identity_id: 362, storage_group_id: 501, name: 'x' },
        }],
      },
    });
    const out = join(dir, 'stack.ts');
    const r = await dpi(['import', '--skip-pipelines'], { emu });
    // Whatever was printed as code is compiled and run, as `cdk synth` would.
    if (r.code === 0) runGenerated(r.stdout);
    expect(existsSync(marker)).toBe(false);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain(`dpi import: the service answered the subscription ID ${JSON.stringify(id.length > 80 ? `${id.slice(0, 80)}...` : id)}, which is not an ID`);
    expect(r.stderr).toContain('nothing was written');
    await fault(emu, { method: 'GET', pathPrefix: '/v2/sub', status: 200, body: { data: [{ id: '7', type: 'subscriptions', attributes: { status: 'active', product_id: '3001; x()', remote_identity_id: 362, storage_group_id: 501, name: 'x' } }] } });
    const p = await dpi(['import', '--out', out], { emu });
    expect(p.code).toBe(2);
    expect(p.stderr).toContain('the service answered the product of subscription 7 "3001; x()", which is not an ID');
    expect(existsSync(out)).toBe(false);
  });

  test('a product name with U+2028 or U+2029 leaves no // comment: the code after it does not run', async () => {
    // `(0` takes the `)` that closes the comment's parenthesis: before the fix the line after U+2028 was valid code.
    for (const sep of ['\u2028', '\u2029']) {
      const res = await fetch(`${emu.url}/_emulator/fixtures`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ productCards: [{ id: 3001, name: `Orders${sep}${payload()};(0` }] }),
      });
      expect(res.status).toBe(200);
      const r = await dpi(['import', '--skip-pipelines'], { emu });
      expect(r.code).toBe(0);
      runGenerated(r.stdout);
      expect(existsSync(marker)).toBe(false);
      expect(r.stdout).toContain(`    // product 3001 (Orders ${payload()};(0)\n`);
    }
  });

  test('names that try to leave their comment or string (U+2028, U+2029, \\r, \\n, quotes, */): the file compiles, nothing runs, the names are kept', async () => {
    const productName = `Orders\u2028${payload()}\u2029${payload()}\r${payload()}\n${payload()} */ ${payload()}`;
    const subName = `x'\r${payload()}//\u2028${payload()}\n'"\\`;
    const key = `k'\u2028${payload()}`;
    const value = `v\r\n${payload()}'`;
    const res = await fetch(`${emu.url}/_emulator/fixtures`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        productCards: [{ id: 3001, name: productName }],
        subscriptions: [{
          id: SUB,
          account: 1001,
          user: 2001,
          product: 3001,
          name: subName,
          status: 'active',
          date_start: '2026-01-01T00:00:00Z',
          remote_identity: 362,
          storage_group: 501,
          product_parameters: { remote_identity_id: '362', [key]: value },
        }],
      }),
    });
    expect(res.status).toBe(200);
    const r = await dpi(['import', '--skip-pipelines'], { emu });
    expect([r.code, r.stderr]).toEqual([0, '']);
    expect(r.stdout).toContain(`new Subscription(this, 'Subscription${SUB}', {`);
    const made = runGenerated(r.stdout);
    expect(existsSync(marker)).toBe(false);
    expect(made).toEqual([{
      type: 'Subscription',
      id: `Subscription${SUB}`,
      props: expect.objectContaining({ existingSubscriptionId: SUB, productId: 3001, name: subName, productParameters: { [key]: value } }),
    }]);
    // Every comment line of the file is one line of the source: the product name's comment holds it all.
    expect(r.stdout.split('\n').filter((l) => l.includes('// product 3001'))).toHaveLength(1);
    expect(r.stdout).not.toMatch(/[\r\u2028\u2029]/);
    // --json and --out carry the same names (JSON, and the same file).
    const j = await dpi(['import', '--skip-pipelines', '--json'], { emu });
    expect(JSON.parse(j.stdout).subscriptions[0]).toMatchObject({ productName, name: subName, productParameters: { [key]: value } });
    const file = join(dir, 'stack.ts');
    expect((await dpi(['import', '--skip-pipelines', '--out', file], { emu })).code).toBe(0);
    expect(readFileSync(file, 'utf8')).toBe(r.stdout);
  });

  test('a --module name is written as a string too', async () => {
    const module = `m'; ${payload()}; '`;
    const r = await dpi(['import', '--skip-pipelines', '--module', module], { emu });
    expect(r.code).toBe(0);
    runGenerated(r.stdout, module);
    expect(existsSync(marker)).toBe(false);
  });
});

test('importModel names the first bad ID and the field (a remote identity that is not an integer)', () => {
  const products = [{ id: '3001', name: 'Orders', active: 1, is_storage_product: 0, required_meta_fields: [] }] as any;
  expect(() => importModel([{ id: '5', status: 'active', product: 3001, remote_identity: '1+1' as unknown as number, storage_group: null, name: null }], products))
    .toThrow('dpi import: the service answered the remote identity of subscription 5 "1+1", which is not an ID');
  // A cancelled record is not written: its ID is not checked.
  expect(importModel([{ id: 'x', status: 'cancelled', product: 3001, remote_identity: null, storage_group: null, name: null }], products).subscriptions)
    .toEqual([]);
});

testNoSecretsPrinted();
