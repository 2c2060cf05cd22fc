/**
 * `dpi plan` against CloudFormation (a fake client: the deployed stacks of an assembly, the fleet's nested stacks as
 * `AWS::CloudFormation::Stack` resources of the parent with CloudFormation's random name suffixes) and against another
 * cloud assembly (`--from`): the fleet's one changed pipeline is one entry with its deployed physical ID, an identity
 * that leaves is planned from the deployed template, a stack that is not deployed is all creates; a replaced
 * subscription's dependents get the deploy-time value.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { FakeResource, FakeStack, fakeCloudFormation, stackArn } from './fake-cloudformation';
import { CLI_FIXTURES, dpi, requests, startCliEmulator, testNoSecretsPrinted } from './helpers';
import { synthExample } from './plan-apps';
import { planSeams } from '../../src/cli/commands/plan';
import type { ReviewedEntry } from '../../src/cli/commands/plan-live';
import type { PlanEntry } from '../../src/handler/plan-types';
import { readAssembly } from '../../src/local/assembly';
import { synthFleetApp } from '../local/fleet-app';
import { tempDir } from '../local/helpers';

jest.setTimeout(240_000);

const IDS = [2001, 2002, 2003, 2004, 2005];
let work: { dir: string; cleanup: () => void };

interface PlanDoc { entries: PlanEntry[]; summary: Record<string, number> }

/** Physical IDs of the fake deployment by logical ID (numeric, as the service's record IDs are). */
const PHYSICAL = new Map<string, string>();
const physicalOf = (logicalId: string): string => {
  if (!PHYSICAL.has(logicalId)) PHYSICAL.set(logicalId, String(9100 + PHYSICAL.size));
  return PHYSICAL.get(logicalId)!;
};

/** The stacks of an assembly as CloudFormation shows them once deployed (physical IDs from `physicalOf`). */
function deployedAs(app: string): FakeStack[] {
  const stacks = readAssembly(app);
  const cfnName = (name: string): string => (stacks.find((s) => s.stackName === name)?.nested ? `${name}-1RANDOM` : name);
  return stacks.map((s) => ({
    name: cfnName(s.stackName),
    ...(s.nested ? { parentId: stackArn(cfnName(s.nested.parent.stackName)) } : {}),
    pageSize: 3,
    resources: Object.entries(s.template.Resources ?? {}).map(([logicalId, r]): FakeResource => {
      const child = stacks.find((c) => c.nested?.parent.stackName === s.stackName && c.nested.logicalId === logicalId);
      return {
        logicalId,
        type: r.Type,
        physicalId: child ? stackArn(cfnName(child.stackName)) : physicalOf(logicalId),
        ...(r.Type.startsWith('Custom::Dpi') ? { properties: r.Properties } : {}),
      };
    }),
  }));
}

beforeAll(() => {
  work = tempDir('dpi-plan-sources-');
});
afterAll(() => {
  planSeams.cloudFormation = undefined;
  work.cleanup();
});

describe('against CloudFormation (fake client), nested stacks followed', () => {
  let v0: string;
  let calls: string[];
  beforeAll(() => {
    v0 = join(work.dir, 'fleet-v0');
    synthFleetApp(v0, { identities: IDS, types: ['ORDER_CHANGE', 'REPORT_PROCESSING_FINISHED'] });
    calls = [];
    const deployed = deployedAs(v0);
    planSeams.cloudFormation = () => fakeCloudFormation(deployed, calls);
  });

  test('the deployed app itself: every resource no change, read through the nested stacks', async () => {
    const r = await dpi(['plan', '--app', v0, '--json']);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const doc = JSON.parse(r.stdout) as PlanDoc;
    expect(doc.entries.map((e) => e.action)).toEqual(IDS.map(() => 'no-change'));
    expect(doc.entries.every((e) => e.physicalId === physicalOf(e.logicalId))).toBe(true);
    expect(calls.filter((c) => c.startsWith('GetTemplateCommand')).length).toBeGreaterThanOrEqual(2);
    expect(calls.some((c) => c.includes('-1RANDOM'))).toBe(true);
    const text = await dpi(['plan', '--app', v0]);
    expect(text.stdout).toBe(`No changes.\n\nPlan: 0 create, 0 update, 0 rebuild, 0 replace, 0 delete, 0 retain, ${IDS.length} no-change\n`
      + 'Live state: not read (no service address: set DPI_BASE_URL and DPI_REFRESH_TOKEN (or pass --base-url) to read it); each record is '
      + 'assumed live and as last deployed\n');
  });

  test('with a service address, the live state is read with one listing each: records not listed and unknown identities are flagged', async () => {
    const emu = await startCliEmulator(CLI_FIXTURES, 'vendor');
    try {
      const r = await dpi(['plan', '--app', v0, '--json', '--fail-on', 'failure'], { emu });
      // The fleet's identities (2001-2005) are not the emulator's: the deploy would fail on each.
      expect(r.code).toBe(1);
      expect(r.stderr).toContain(`--fail-on: ${IDS.length} resources planned to failure`);
      const doc = JSON.parse(r.stdout) as { entries: ReviewedEntry[]; live: { read: boolean; notes: string[] } };
      expect(doc.live).toMatchObject({ read: true, notes: [] });
      expect(doc.entries).toHaveLength(IDS.length);
      for (const e of doc.entries) {
        expect(e.action).toBe('no-change');
        expect(e.live?.map((f) => f.kind)).toEqual(['identity-unknown', 'gone']);
        expect(e.live![1].text).toBe(`the pipeline's subscription ${e.physicalId} is not in the account's subscription listing (gone, or another `
          + 'account\'s); this deploy sends nothing for it: the stack keeps naming a record that is gone (dpi drift shows it)');
      }
      const seen = (await requests(emu)).map((q) => `${q.method} ${q.path}`).filter((q) => !q.startsWith('POST /auth/'));
      expect(seen.sort()).toEqual(['GET /sri', 'GET /v2/sub']);
    } finally {
      await emu.stop();
    }
  });

  test('one identity changed and one removed: two entries with their deployed IDs; --fail-on delete trips', async () => {
    const v1 = join(work.dir, 'fleet-v1');
    const paths = synthFleetApp(v1, { identities: IDS.filter((i) => i !== 2005), types: ['ORDER_CHANGE', 'REPORT_PROCESSING_FINISHED'] });
    // Identity 2003 gets a third type in its own template only (the fleet gives every identity the same types).
    const stacks = readAssembly(v1);
    const nested = stacks.find((s) => Object.keys(s.template.Resources ?? {}).some((id) => id.startsWith('Identity2003')))!;
    const [id2003] = Object.entries(nested.template.Resources!).find(([id]) => id.startsWith('Identity2003'))!;
    const t = JSON.parse(readFileSync(nested.templateFile, 'utf8')) as { Resources: Record<string, { Properties: Record<string, unknown> }> };
    t.Resources[id2003].Properties.NotificationTypes = ['ORDER_CHANGE', 'LISTINGS_ITEM_STATUS_CHANGE', 'REPORT_PROCESSING_FINISHED'];
    writeFileSync(nested.templateFile, JSON.stringify(t));

    const r = await dpi(['plan', '--app', v1, '--json', '--fail-on', 'delete']);
    expect(r.code).toBe(1);
    const doc = JSON.parse(r.stdout) as PlanDoc & { gateFailed: boolean };
    expect(doc.gateFailed).toBe(true);
    const ch = doc.entries.filter((e) => e.action !== 'no-change').sort((a, b) => a.logicalId.localeCompare(b.logicalId));
    expect(ch.map((e) => [e.logicalId.replace(/[0-9A-F]{8}$/, ''), e.action, e.physicalId])).toEqual([
      ['Identity2003', 'update', physicalOf(id2003)],
      ['Identity2005', 'delete', physicalOf([...PHYSICAL.keys()].find((k) => k.startsWith('Identity2005'))!)],
    ]);
    expect(ch[0].stack).toBe(paths.get(2003)!.replace(/^\/?/, ''));
    expect(ch[0].constructPath).toBe(`${ch[0].stack}/Identity2003`);
    expect(ch.every((e) => e.type === 'Custom::DpiNotificationPipeline')).toBe(true);
    expect(doc.summary).toMatchObject({ 'update': 1, 'delete': 1, 'no-change': 3 });
  });

  test('a stack that is not deployed: every resource is a create', async () => {
    const other = join(work.dir, 'example');
    synthExample(other);
    const r = await dpi(['plan', '--app', other, '--json']);
    expect(r.code).toBe(0);
    const doc = JSON.parse(r.stdout) as PlanDoc;
    expect(doc.entries.length).toBe(5);
    expect(doc.entries.every((e) => e.action === 'create' && e.physicalId === undefined)).toBe(true);
    expect(doc.summary.create).toBe(5);
  });
});

describe('the journal table the plan reads is the deployed resources\' own', () => {
  let v0: string;
  let v1: string;
  const asked: string[] = [];
  /** The fleet deployed with its connection's table given as `table` (e.g. an import of another stack's export). */
  const deployWith = (table: unknown, exports: Record<string, string>): void => {
    const stacks = deployedAs(v0).map((st) => ({
      ...st,
      resources: st.resources.map((r) => (r.properties
        ? { ...r, properties: { ...r.properties, Connection: { ...(r.properties.Connection as object), JournalTableName: table } } }
        : r)),
    }));
    planSeams.cloudFormation = () => {
      const inner = fakeCloudFormation(stacks);
      return {
        send: async (c: object) => (c.constructor.name === 'ListExportsCommand'
          ? { Exports: Object.entries(exports).map(([Name, Value]) => ({ Name, Value })) } : inner.send(c)),
      };
    };
    planSeams.journal = async (t) => {
      asked.push(t);
      return undefined;
    };
  };
  beforeAll(() => {
    v0 = join(work.dir, 'table-v0');
    v1 = join(work.dir, 'table-v1');
    synthFleetApp(v0, { identities: IDS, types: ['ORDER_CHANGE'] });
    synthFleetApp(v1, { identities: IDS.filter((i) => i !== 2005), types: ['ORDER_CHANGE'] });
  });
  afterAll(() => {
    planSeams.journal = undefined;
  });

  test('an Fn::ImportValue is resolved from the account\'s exports; one that cannot be is said, and the delete keeps its caveat', async () => {
    deployWith({ 'Fn::ImportValue': 'Journal:TableName' }, { 'Journal:TableName': 'team-journal' });
    asked.length = 0;
    const r = await dpi(['plan', '--app', v1, '--json']);
    expect(asked).toEqual(['team-journal']);
    expect(r.stderr).toContain('the lifecycle journal table team-journal was not found');
    deployWith({ 'Fn::ImportValue': 'Journal:TableName' }, {});
    asked.length = 0;
    const unknown = await dpi(['plan', '--app', v1, '--json']);
    expect(asked).toEqual([]);
    expect(unknown.stderr).toContain('is {"Fn::ImportValue":"Journal:TableName"}, which cannot be resolved here: pass --table NAME');
    const del = (JSON.parse(unknown.stdout) as PlanDoc).entries.find((e) => e.action === 'delete')!;
    expect(del.effects.join(' ')).toContain('unless the lifecycle journal records it as adopted');
  });

  test('a --table that is not the deployed resources\' table is refused (exit 2); the same table is read', async () => {
    deployWith('team-journal', {});
    const wrong = await dpi(['plan', '--app', v1, '--table', 'dpi-lifecycle-journal']);
    expect(wrong.code).toBe(2);
    expect(wrong.stderr).toContain('--table dpi-lifecycle-journal is not the lifecycle journal table of');
    expect(wrong.stderr).toContain('its connection uses team-journal');
    asked.length = 0;
    await dpi(['plan', '--app', v1, '--table', 'team-journal']);
    expect(asked).toEqual(['team-journal']);
  });
});

describe('--from another cloud assembly (offline review)', () => {
  test('a product change replaces the subscription; its dependents get the new ID; usage errors exit 2', async () => {
    const base = synthExample(join(work.dir, 'base'));
    const head = synthExample(join(work.dir, 'head'), { ordersProduct: 3002 });
    const r = await dpi(['plan', '--app', head, '--from', base, '--json']);
    // The journal is not read offline: said on stderr (as docs/cli.md says), not in the JSON on stdout.
    expect(r.stderr).toBe('dpi plan: the lifecycle journal is not read with --from (no deployed stack to find it from); a planned delete '
      + 'ends the record unless the journal records it as adopted\n');
    const doc = JSON.parse(r.stdout) as PlanDoc;
    const orders = doc.entries.find((e) => e.type === 'Custom::DpiSubscription')!;
    expect(orders.action).toBe('replace');
    expect(orders.constructPath).toBe('MarketplaceData/Orders');
    expect(orders.changes).toContainEqual(expect.objectContaining({ prop: 'productId', from: '3001', to: '3002', effect: 'replace' }));
    // The backfill and the order jobs reference the subscription: CloudFormation updates them with the new ID.
    const dependents = doc.entries.filter((e) => e.type === 'Custom::DpiHistoryRequest' || e.type === 'Custom::DpiProductOrderJobs');
    expect(dependents.length).toBe(2);
    expect(dependents.every((e) => e.action !== 'no-change')).toBe(true);
    expect(doc.entries.filter((e) => e.type === 'Custom::DpiNotificationPipeline').map((e) => e.action)).toEqual(['no-change', 'no-change']);

    const same = await dpi(['plan', '--app', base, '--from', base, '--fail-on', 'replace,rebuild,delete']);
    expect(same.code).toBe(0);
    expect(same.stderr).toBe('');
    expect(same.stdout).toContain('No changes.');
    const gate = await dpi(['plan', '--app', head, '--from', base, '--fail-on', 'replace,rebuild,delete']);
    expect(gate.code).toBe(1);

    expect((await dpi(['plan', '--app', head, '--from', base, '--local'])).code).toBe(2);
    const missing = await dpi(['plan', '--app', head, '--from', join(work.dir, 'nope')]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('--from:');
    expect(missing.stderr).toContain('or pass --from <cdk.out directory>');
    expect(missing.stderr).not.toContain('--app');
  });
});

testNoSecretsPrinted();
