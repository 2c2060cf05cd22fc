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
      + "      name: 'CLI orders',\n      removalPolicy: RemovalPolicy.RETAIN,\n");
    expect(r.stdout).toContain("from 'data-pipeline-integration-cdk';");
    // The fixture's legacy pipeline (product 86) is listed, not declared; it is not a unified one, so no refusal.
    expect(r.stdout).toContain('// Not imported: subscription 8601 (product 86): legacy notification pipeline');

    const j = await dpi(['import', '--json'], { emu });
    expect(j.code).toBe(0);
    const model = JSON.parse(j.stdout);
    expect(model.subscriptions).toEqual([{
      subscriptionId: String(SUB), productId: 3001, productName: 'Marketplace Orders', remoteIdentityId: 362, storageGroupId: 501, name: 'CLI orders', status: 'active',
    }]);
    expect(model.notImported.map((n: { subscriptionId: string }) => n.subscriptionId)).toEqual(['8601']);
    expect(model.notShown).toEqual(['productParameters', 'stageIds']);
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
  });
});

testNoSecretsPrinted();
