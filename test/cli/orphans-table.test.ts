/**
 * `dpi orphans` judges a record only in the journal table its stack writes to: the records of a live stack whose
 * Custom::Dpi* resources name another table (the stack moved to it, or its table is defined elsewhere) are copies the
 * stack no longer keeps up to date, so they are never judged or fixed there, with the CloudFormation view (the deployed
 * templates; a `Ref` to a parameter and an `Fn::ImportValue` resolved) and with the local-deploy state.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fakeCloudFormation, FakeStack } from './fake-cloudformation';
import { clearRequests, dpi, requests } from './helpers';
import { orphansSeams } from '../../src/cli/commands/orphans';
import { cloudView, findOrphans, localView, Rec } from '../../src/cli/commands/orphans-judge';
import { CloudFormationSender, deployedResources } from '../../src/cli/deployed';
import { DpiClient, endpointsFromBase } from '../../src/client';
import { DEFAULT_REFRESH_TOKEN, RunningEmulator, startEmulator } from '../../src/emulator';
import * as handler from '../../src/handler';
import { dynamoJournal } from '../../src/handler/journal';
import { ResourceTypes } from '../../src/kinds';
import { startJournalServer } from '../../src/local/journal-server';
import { LocalState, ResourceState } from '../../src/local/state';

jest.setTimeout(120_000);

const SUB = ResourceTypes.SUBSCRIPTION;
const rec = (key: string, physicalId: string): Rec => ({
  key,
  id: `2026-11-01T00:00:00.000Z#${physicalId}`,
  state: 'active',
  physicalId,
  doc: { kind: SUB, product: 3001, subscriptionId: physicalId, removalPolicy: 'destroy' },
} as unknown as Rec);
const conn = (table: unknown): Record<string, unknown> => ({ Connection: table === undefined ? {} : { JournalTableName: table } });

/** The fake client with ListExports (the account's exports). */
function withExports(stacks: FakeStack[], exports: Record<string, string>, calls: string[] = []): CloudFormationSender {
  const inner = fakeCloudFormation(stacks, calls);
  return {
    send: async (c: object) => {
      if (c.constructor.name === 'ListExportsCommand') {
        calls.push('ListExportsCommand');
        return { Exports: Object.entries(exports).map(([Name, Value]) => ({ Name, Value })) };
      }
      return inner.send(c);
    },
  };
}

describe('the judge', () => {
  const records = [rec('Moved/Gone', '9001'), rec('Moved/Kept', '9002'), rec('Stays/Gone', '9003'), rec('Deleted/Any', '9004')];

  test('CloudFormation: a live stack whose resources name another table is not judged; one naming the judged table (by export) is', async () => {
    const calls: string[] = [];
    const cfn = withExports([
      { name: 'Moved', resources: [{ logicalId: 'Kept', physicalId: '9002', type: SUB, properties: conn('team-journal') }] },
      { name: 'Stays', resources: [{ logicalId: 'Other', physicalId: '9010', type: SUB, properties: conn({ 'Fn::ImportValue': 'Journal:Name' }) }] },
    ], { 'Journal:Name': 'dpi-lifecycle-journal' }, calls);
    const stacks = await deployedResources(['Moved', 'Stays', 'Deleted'], cfn, { nested: true, templates: true });
    expect(calls.filter((c) => c.startsWith('GetTemplate'))).toEqual(['GetTemplateCommand Moved', 'GetTemplateCommand Stays']);
    const exportsMap = new Map([['Journal:Name', 'dpi-lifecycle-journal']]);
    const elsewhere = new Map<string, string>();
    const found = findOrphans(records, cloudView(stacks, 'us-east-1', (n) => exportsMap.get(n)), new Set(), { table: 'dpi-lifecycle-journal', elsewhere });
    expect(found.map((o) => [o.key, o.why])).toEqual([['Stays/Gone', 'resource gone'], ['Deleted/Any', 'stack gone']]);
    expect([...elsewhere.entries()]).toEqual([['Moved', 'stack Moved: its Custom::Dpi* resources name the journal table team-journal, not '
      + 'dpi-lifecycle-journal: its records in dpi-lifecycle-journal are not judged (dpi orphans --table team-journal)']]);
    // Judged in the table the stack uses, the same stack's records are judged.
    const there = findOrphans([rec('Moved/Gone', '9001')], cloudView(stacks, 'us-east-1'), new Set(), { table: 'team-journal', elsewhere: new Map() });
    expect(there.map((o) => o.key)).toEqual(['Moved/Gone']);
  });

  test('CloudFormation: a table name that cannot be resolved leaves the stack unjudged; a nested stack\'s parameter is resolved', async () => {
    const arn = 'arn:aws:cloudformation:us-east-1:123456789012:stack/Fleet-Nested/fake';
    const cfn = fakeCloudFormation([
      { name: 'Unknown', resources: [{ logicalId: 'Other', physicalId: '1', type: SUB, properties: conn({ 'Fn::ImportValue': 'Nowhere' }) }] },
      { name: 'Fleet', resources: [{ logicalId: 'Nested', physicalId: arn, type: 'AWS::CloudFormation::Stack' }] },
      {
        name: 'Fleet-Nested',
        id: arn,
        parentId: 'arn:aws:cloudformation:us-east-1:123456789012:stack/Fleet/fake',
        resources: [{ logicalId: 'P362', physicalId: '9020', type: ResourceTypes.NOTIFICATION_PIPELINE, properties: conn({ Ref: 'JournalTableParam' }) }],
      },
    ]);
    const stacks = await deployedResources(['Unknown', 'Fleet'], cfn, { nested: true, templates: true });
    const nested = stacks.get('Fleet-Nested')!;
    const withParam = new Map(stacks);
    withParam.set('Fleet-Nested', { ...nested, parameters: new Map([['JournalTableParam', 'dpi-lifecycle-journal']]) });
    const elsewhere = new Map<string, string>();
    const found = findOrphans([rec('Unknown/Gone', '5'), rec('Fleet/Fleet/Pipelines/363', '9021')], cloudView(withParam, undefined), new Set(),
      { table: 'dpi-lifecycle-journal', elsewhere });
    expect(found.map((o) => o.key)).toEqual(['Fleet/Fleet/Pipelines/363']);
    expect(elsewhere.get('Unknown')).toContain('{"Fn::ImportValue":"Nowhere"} (cannot be resolved here)');
    // Without the parameter's value the fleet's table is unknown too: nothing of it is judged.
    const none = new Map<string, string>();
    expect(findOrphans([rec('Fleet/Fleet/Pipelines/363', '9021')], cloudView(stacks, undefined), new Set(), { table: 'dpi-lifecycle-journal', elsewhere: none }))
      .toEqual([]);
    expect(none.has('Fleet')).toBe(true);
  });

  test('local-deploy state: the stacks of another table are not judged (a --table one stack uses does not judge the other\'s copies)', () => {
    const res = (stack: string, logicalId: string, physicalId: string, table?: string): ResourceState => ({
      stack, logicalId, type: SUB, physicalId, properties: conn(table), attributes: {}, dependsOn: [], waiter: false,
    });
    const stack = (stackName: string): LocalState['stacks'][number] => ({ stackName, stackId: `id-${stackName}`, account: '1', region: 'us-east-1', dependencies: [] });
    const state: LocalState = {
      version: 1,
      stacks: [stack('A'), stack('B')],
      resources: { 'A/Orders': res('A', 'Orders', '9101'), 'B/Other': res('B', 'Other', '9102', 'team-journal') },
      orphans: [],
    };
    const elsewhere = new Map<string, string>();
    const found = findOrphans([rec('A/Gone', '9103'), rec('B/Gone', '9104')], localView(state, 'state.json'), new Set(),
      { table: 'dpi-lifecycle-journal', elsewhere });
    expect(found.map((o) => o.key)).toEqual(['A/Gone']);
    expect([...elsewhere.keys()]).toEqual(['B']);
  });
});

test('dpi orphans --fix in a table the stack moved away from: the copy of a record it later retained is not ended', async () => {
  const work = mkdtempSync(join(tmpdir(), 'dpi-orphans-table-'));
  const emu: RunningEmulator = await startEmulator({ host: '127.0.0.1', port: 0 });
  const server = await startJournalServer({ stateFile: join(work, 'journal.json') });
  try {
    const client = new DpiClient({ endpoints: endpointsFromBase(emu.url), refreshToken: DEFAULT_REFRESH_TOKEN });
    const s = await client.subscriptions.create({
      account: 1001,
      user: 2001,
      product: 3001,
      status: 'active',
      date_start: '2026-11-01T00:00:00Z',
      remote_identity: 362,
      storage_group: 501,
      name: 'orders',
      product_parameters: { marketplace_id: 'ATVPDKIKX0DER', remote_identity_id: '362' },
    });
    const id = String(s.id);
    const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
    // The old table: the record as the stack left it before it moved to team-journal (DESTROY then).
    const old = dynamoJournal({ create: true, table: 'dpi-lifecycle-journal', endpoint: server.endpoint, sleep });
    await old.create('Live/Orders', 'active', { kind: SUB, product: 3001, identity: '362', subscriptionId: id, removalPolicy: 'destroy' }, id);
    await old.claim('sub', id, 'Live/Orders');
    // The new table: the same resource, released by its Delete under RETAIN.
    const now = dynamoJournal({ create: true, table: 'team-journal', endpoint: server.endpoint, sleep });
    await now.create('Live/Orders', 'released', { kind: SUB, product: 3001, identity: '362', subscriptionId: id, removalPolicy: 'retain' }, id);
    orphansSeams.cloudFormation = fakeCloudFormation([{
      name: 'Live',
      resources: [
        { logicalId: 'Other', physicalId: '12345', type: SUB, properties: conn('team-journal') },
      ],
    }]);
    orphansSeams.stdinIsTTY = () => false;
    orphansSeams.handler = handler;
    await clearRequests(emu);
    const r = await dpi(['orphans', '--endpoint', server.endpoint, '--region', 'us-east-1', '--table', 'dpi-lifecycle-journal', '--fix', '--yes', '--json'],
      { env: { DPI_BASE_URL: emu.url, DPI_REFRESH_TOKEN: DEFAULT_REFRESH_TOKEN } });
    expect(r.stderr).toContain('stack Live: its Custom::Dpi* resources name the journal table team-journal, not dpi-lifecycle-journal');
    const report = JSON.parse(r.stdout) as { orphans: unknown[]; notJudged: Array<{ stack: string }>; fixed: unknown[] };
    expect(report.orphans).toEqual([]);
    expect(report.notJudged.map((x) => x.stack)).toEqual(['Live']);
    expect(report.fixed).toEqual([]);
    expect(r.code).toBe(0);
    expect((await requests(emu)).filter((q) => q.method !== 'GET' && q.path !== '/auth/api/ref')).toEqual([]);
    expect(emu.state().subscriptions.find((x) => String(x.id) === id)?.status).toBe('active');
  } finally {
    orphansSeams.cloudFormation = undefined;
    orphansSeams.handler = undefined;
    await server.stop();
    await emu.stop();
    rmSync(work, { recursive: true, force: true });
  }
});

