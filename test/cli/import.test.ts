import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { dpi, SUB, testNoSecretsPrinted, useCliEmulator } from './helpers';
import { importModel, renderImportedStack } from '../../src/cli/commands/import';
import { RunningEmulator } from '../../src/emulator';

// dpi import needs the vendor's read fields (product, identity, storage, name): the CLI emulator in vendor mode.
let emu: RunningEmulator;
useCliEmulator((e) => {
  emu = e;
}, { reads: 'vendor' });

describe('dpi import', () => {
  test('prints the stack without --out; --json gives the model with the reasons of what is not imported', async () => {
    const r = await dpi(['import', '--class-name', 'Acct'], { emu });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('export class Acct extends Stack {');
    expect(r.stdout).toContain(`new Subscription(this, 'Subscription${SUB}', {`);
    expect(r.stdout).toContain(`      existingSubscriptionId: ${SUB},\n      productId: 3001,\n      remoteIdentityId: 362,\n      storageGroupId: 501,\n`
      + "      name: 'CLI orders',\n      productParameters: {\n        marketplace_id: 'ATVPDKIKX0DER',\n      },\n      removalPolicy: RemovalPolicy.RETAIN,\n");
    expect(r.stdout).toContain("from 'data-pipeline-integration-cdk';");
    // The fixture's legacy pipeline (product 86) is listed, not declared; it is not a unified one, so no refusal.
    expect(r.stdout).toContain('// Not imported: subscription 8601 (product 86): legacy notification pipeline');

    const j = await dpi(['import', '--json'], { emu });
    expect(j.code).toBe(0);
    const model = JSON.parse(j.stdout);
    expect(model.subscriptions).toEqual([{
      subscriptionId: String(SUB),
      productId: 3001,
      productName: 'Marketplace Orders',
      remoteIdentityId: 362,
      storageGroupId: 501,
      name: 'CLI orders',
      status: 'active',
      productParameters: { marketplace_id: 'ATVPDKIKX0DER' },
    }]);
    expect(model.notImported.map((n: { subscriptionId: string }) => n.subscriptionId)).toEqual(['8601']);
    // The vendor's parameter reads show the stored parameters: nothing is left unshown.
    expect(model.notShown).toEqual([]);
    expect(model.code).toContain('class ImportedDpiStack');
  });

  test('--out writes the file and prints one line; --help lists the options; --skip-pipelines without pipelines changes nothing', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'dpi-import-'));
    try {
      const out = join(dir, 'stack.ts');
      const r = await dpi(['import', '--out', out], { emu });
      expect(r.code).toBe(0);
      expect(r.stdout).toBe(`wrote ${out}: 1 subscription adopted, 1 not imported (listed in the file)\n`);
      const printed = await dpi(['import', '--skip-pipelines'], { emu });
      expect(printed.stdout).toBe(readFileSync(out, 'utf8'));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    const help = await dpi(['import', '--help'], { emu });
    for (const o of ['--out', '--class-name', '--module', '--skip-pipelines', '--json']) expect(help.stdout).toContain(o);
  });

  test('a --class-name that is not a class name exits 2', async () => {
    const r = await dpi(['import', '--class-name', 'my-stack'], { emu });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("--class-name 'my-stack' is not a class name");
  });
});

describe('importModel / renderImportedStack', () => {
  const products = [{ id: '3001', name: 'Orders', active: 1, is_storage_product: 0, required_meta_fields: [] }] as any;
  test('cancelled and invalid subscriptions are left out; paused ones keep their status', () => {
    const model = importModel([
      { id: '5', status: 'paused', product: 3001, remote_identity: null, storage_group: null, name: null },
      { id: '6', status: 'invalid', product: 3001, remote_identity: null, storage_group: null, name: null },
      { id: '7', status: 'cancelled', product: 3001, remote_identity: null, storage_group: null, name: null },
    ], products);
    expect(model.subscriptions).toEqual([{ subscriptionId: '5', productId: 3001, productName: 'Orders', status: 'paused' }]);
    const code = renderImportedStack(model, { className: 'S', module: 'm' });
    expect(code).toContain("import { ServiceConnection, Subscription, SubscriptionStatus } from 'm';");
    expect(code).toContain('status: SubscriptionStatus.PAUSED,');
    expect(code).not.toContain('remoteIdentityId');
    expect(model.notShown).toEqual(['productParameters', 'stageIds']);
    expect(code).toContain('productParameters and stageIds are not shown');
  });

  test('stored parameters (the vendor\'s bulk read) fill stageIds and productParameters; remote_identity_id is left out', () => {
    const stored = new Map<string, Record<string, string>>([['5', { 'stage_ids': '[1001, 1000]', 'remote_identity_id': '362', 'b-key': 'x\'y', 'a_key': '1' }], ['6', {}]]);
    const model = importModel([
      { id: '5', status: 'active', product: 3001, remote_identity: 362, storage_group: null, name: null },
      { id: '6', status: 'active', product: 3001, remote_identity: null, storage_group: null, name: null },
    ], products, { stored });
    expect(model.subscriptions[0]).toMatchObject({ stageIds: [1001, 1000], productParameters: { 'a_key': '1', 'b-key': "x'y" } });
    expect(model.subscriptions[1].stageIds).toBeUndefined();
    expect(model.subscriptions[1].productParameters).toBeUndefined();
    expect(model.notShown).toEqual([]);
    const code = renderImportedStack(model, { className: 'S', module: 'm' });
    expect(code).toContain("      stageIds: [1001, 1000],\n      productParameters: {\n        a_key: '1',\n        'b-key': 'x\\'y',\n      },\n");
    expect(code).toContain('stageIds and productParameters are the stored ones');
  });

  test('a stored stage_ids that is not a list of stage IDs (>= 1000) is left out (the constructs refuse it; adoption keeps it)', () => {
    const model = importModel([{ id: '5', status: 'active', product: 3001, remote_identity: null, storage_group: null, name: null }],
      products, { stored: new Map([['5', { stage_ids: '[12]', k: 'v' }]]) });
    expect(model.subscriptions[0].stageIds).toBeUndefined();
    expect(model.subscriptions[0].productParameters).toEqual({ k: 'v' });
  });
});

testNoSecretsPrinted();
