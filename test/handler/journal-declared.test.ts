/**
 * A declared lifecycle journal (`LifecycleJournal`, issue 31): the handler uses it only when it is the table the
 * construct makes (the journal tag, deletion protection on, the resource policy's write fence). A table someone made
 * first under the journal's name is refused before any record is read or written and before any service call.
 */
import {
  CreateTableCommand, DeleteResourcePolicyCommand, DynamoDBClient, ListTablesCommand, PutResourcePolicyCommand, ScanCommand, TagResourceCommand,
} from '@aws-sdk/client-dynamodb';
import { App, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { HandlerHarness } from './helpers';
import { LifecycleJournal } from '../../src';
import { DECLARED_JOURNAL_TABLES_ENV, JOURNAL_MARKER_TAG } from '../../src/contract';
import { dynamoJournal, resetJournalCache } from '../../src/handler/journal';
import { checkProvidedTable, declaredJournalTables, fenceProblem, PROVIDED_JOURNAL_TABLES_ENV } from '../../src/handler/journal-provided';
import { ResourceTypes } from '../../src/kinds';

const SUBSCRIPTION = {
  ProductId: '3001',
  RemoteIdentityId: '362',
  StorageGroupId: '501',
  ProductParameters: { marketplace_id: 'ATVPDKIKX0DER' },
  Status: 'active',
  Name: 'Orders',
  OnDelete: 'invalid',
};

/** A template value as CloudFormation resolves it in account 123456789012 of us-east-1. */
function cfn(v: unknown): unknown {
  const pseudo: Record<string, string> = { 'AWS::Partition': 'aws', 'AWS::AccountId': '123456789012', 'AWS::Region': 'us-east-1' };
  if (Array.isArray(v)) return v.map(cfn);
  if (v === null || typeof v !== 'object') return v;
  const o = v as Record<string, unknown>;
  if (typeof o.Ref === 'string' && pseudo[o.Ref]) return pseudo[o.Ref];
  if (o['Fn::Join']) {
    const [sep, parts] = o['Fn::Join'] as [string, unknown[]];
    return parts.map((p) => String(cfn(p))).join(sep);
  }
  if (typeof o['Fn::Sub'] === 'string') return (o['Fn::Sub'] as string).replace(/\$\{([^}]+)\}/g, (_, k: string) => pseudo[k]);
  return Object.fromEntries(Object.entries(o).map(([k, x]) => [k, cfn(x)]));
}

/** The resource policy LifecycleJournal synthesizes for `table`, as DynamoDB returns it. */
function constructPolicy(table: string, maintainerArns?: string[]): string {
  const stack = new Stack(new App(), 'Journal', { env: { account: '123456789012', region: 'us-east-1' }, terminationProtection: true });
  new LifecycleJournal(stack, 'Journal', { tableName: table, maintainerArns });
  const [t] = Object.values(Template.fromStack(stack).findResources('AWS::DynamoDB::Table'));
  return JSON.stringify(cfn(stack.resolve(t.Properties.ResourcePolicy.PolicyDocument)));
}

describe('the write fence as DynamoDB returns the policy', () => {
  test('the construct\'s policy passes, with or without maintainers', () => {
    expect(fenceProblem(constructPolicy('team-journal'), 'team-journal')).toBeUndefined();
    expect(fenceProblem(constructPolicy('team-journal', ['arn:aws:iam::123456789012:role/Operators']), 'team-journal')).toBeUndefined();
    expect(constructPolicy('team-journal')).toContain('arn:aws:iam::123456789012:role/dpi-journal/team-journal/*');
  });

  test('a policy that looks like it but opens the fence is refused (found by an attacker\'s review)', () => {
    const good = JSON.parse(constructPolicy('team-journal', ['arn:aws:iam::123456789012:role/Operators'])) as { Statement: Array<Record<string, any>> };
    const variant = (change: (s: Array<Record<string, any>>) => void): string => {
      const doc = JSON.parse(JSON.stringify(good)) as typeof good;
      change(doc.Statement);
      return JSON.stringify(doc);
    };
    const writers = (s: Array<Record<string, any>>): Record<string, any> => s.find((x) => x.Sid === 'DpiJournalWritersOnly')!;
    const guard = (s: Array<Record<string, any>>): Record<string, any> => s.find((x) => x.Sid === 'DpiJournalTableGuard')!;
    const cases: Array<[string, (s: Array<Record<string, any>>) => void, RegExp]> = [
      ['an Allow', (s) => { writers(s).Effect = 'Allow'; }, /is not a Deny/],
      ['another Sid', (s) => { writers(s).Sid = 'Other'; }, /exactly the statements/],
      ['an extra Allow for another account', (s) => { s.push({ Effect: 'Allow', Principal: { AWS: 'arn:aws:iam::999999999999:root' }, Action: 'dynamodb:*', Resource: '*' }); }, /exactly the statements/],
      ['a duplicate Sid', (s) => { s.push({ ...writers(s), Effect: 'Allow' }); }, /exactly the statements/],
      ['no guard', (s) => { s.splice(s.indexOf(guard(s)), 1); }, /exactly the statements/],
      ['fewer actions (no PartiQL)', (s) => { writers(s).Action = ['dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:DeleteItem', 'dynamodb:BatchWriteItem']; }, /does not deny dynamodb:PartiQLInsert/],
      ['a guard without DeleteResourcePolicy', (s) => { guard(s).Action = guard(s).Action.filter((a: string) => a !== 'dynamodb:DeleteResourcePolicy'); }, /does not deny dynamodb:DeleteResourcePolicy/],
      ['another principal', (s) => { writers(s).Principal = { AWS: 'arn:aws:iam::123456789012:root' }; }, /every principal/],
      ['an index as the resource', (s) => { writers(s).Resource = 'arn:aws:dynamodb:us-east-1:123456789012:table/team-journal/index/none'; }, /whole table/],
      ['NotResource', (s) => { writers(s).NotResource = 'arn:aws:dynamodb:us-east-1:123456789012:table/team-journal'; }, /NotResource/],
      ['another writers\' path', (s) => { writers(s).Condition.ArnNotLike['aws:PrincipalArn'][0] = 'arn:aws:iam::123456789012:role/dpi-journal/other/*'; }, /by their IAM path/],
      ['a wildcard maintainer', (s) => { writers(s).Condition.ArnNotLike['aws:PrincipalArn'].push('arn:aws:iam::*:*'); }, /a pattern \(a wildcard\)/],
      ['a wildcard guardian', (s) => { guard(s).Condition.ArnNotLike['aws:PrincipalArn'] = ['*']; }, /a pattern \(a wildcard\)/],
      ['another condition', (s) => { writers(s).Condition.StringNotLike = { 'aws:userid': '*' }; }, /conditions other than/],
      ['a tag condition (session tags can be set by the caller)', (s) => {
        writers(s).Condition = { StringNotEquals: { 'aws:PrincipalTag/dpi:journal-writer': 'team-journal' } };
      }, /conditions other than/],
    ];
    for (const [what, change, reason] of cases) expect([what, fenceProblem(variant(change), 'team-journal')]).toEqual([what, expect.stringMatching(reason)]);
    expect(fenceProblem('{"Statement":[]}', 'team-journal')).toMatch(/exactly the statements/);
    expect(fenceProblem('not json', 'team-journal')).toMatch(/not JSON/);
  });
});

describe('the checks against DynamoDB\'s answers (as in Lambda)', () => {
  const described = {
    TableName: 'team-journal',
    TableArn: 'arn:aws:dynamodb:us-east-1:123456789012:table/team-journal',
    TableStatus: 'ACTIVE',
    KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }, { AttributeName: 'sk', KeyType: 'RANGE' }],
    AttributeDefinitions: [{ AttributeName: 'pk', AttributeType: 'S' }, { AttributeName: 'sk', AttributeType: 'S' }],
    DeletionProtectionEnabled: true,
  };
  const fake = (answers: Record<string, () => unknown>): never => ({
    send: async (cmd: { constructor: { name: string } }) => {
      const op = cmd.constructor.name.replace(/Command$/, '');
      if (!answers[op]) throw new Error(`unexpected ${op}`);
      return answers[op]();
    },
  }) as never;
  const tagged = { Tags: [{ Key: JOURNAL_MARKER_TAG, Value: 'v1' }] };
  const check = (answers: Record<string, () => unknown>): Promise<void> => checkProvidedTable(fake(answers), 'team-journal', async () => undefined, true);

  test('the table LifecycleJournal makes passes', async () => {
    await expect(check({
      DescribeTable: () => ({ Table: described }),
      ListTagsOfResource: () => tagged,
      GetResourcePolicy: () => ({ Policy: constructPolicy('team-journal') }),
    })).resolves.toBeUndefined();
  });

  test('deletion protection off, no journal tag, no policy or an unreadable policy: refused, naming the table', async () => {
    await expect(check({ DescribeTable: () => ({ Table: { ...described, DeletionProtectionEnabled: false } }) }))
      .rejects.toThrow('the lifecycle journal table team-journal (the connection\'s journal) has deletion protection off');
    await expect(check({ DescribeTable: () => ({ Table: described }), ListTagsOfResource: () => ({ Tags: [] }) }))
      .rejects.toThrow(`does not carry the tag ${JOURNAL_MARKER_TAG}=v1`);
    const notFound = Object.assign(new Error('no policy'), { name: 'PolicyNotFoundException' });
    const tags = { DescribeTable: () => ({ Table: described }), ListTagsOfResource: () => tagged };
    await expect(check({ ...tags, GetResourcePolicy: () => { throw notFound; } }))
      .rejects.toThrow('has no resource policy');
    const denied = Object.assign(new Error('not authorized to perform: dynamodb:GetResourcePolicy'), { name: 'AccessDeniedException' });
    await expect(check({ ...tags, GetResourcePolicy: () => { throw denied; } })).rejects.toThrow('dynamodb:GetResourcePolicy');
  });
});

describe('a declared journal in a run', () => {
  let h: HandlerHarness;
  let client: DynamoDBClient;
  const saved = { provided: process.env[PROVIDED_JOURNAL_TABLES_ENV], declared: process.env[DECLARED_JOURNAL_TABLES_ENV] };
  beforeAll(async () => {
    h = await HandlerHarness.start();
    client = new DynamoDBClient({ endpoint: h.journal.endpoint, region: 'us-east-1', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } });
  });
  afterAll(async () => {
    for (const [k, v] of [[PROVIDED_JOURNAL_TABLES_ENV, saved.provided], [DECLARED_JOURNAL_TABLES_ENV, saved.declared]] as const) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
    client.destroy();
    h.assertNoSecrets();
    await h.stop();
  });
  beforeEach(async () => {
    await h.reset();
    resetJournalCache();
    process.env[PROVIDED_JOURNAL_TABLES_ENV] = h.journalTable;
    process.env[DECLARED_JOURNAL_TABLES_ENV] = h.journalTable;
  });

  async function createTable(tag: boolean, policy?: string): Promise<void> {
    const out = await client.send(new CreateTableCommand({
      TableName: h.journalTable,
      BillingMode: 'PAY_PER_REQUEST',
      AttributeDefinitions: [{ AttributeName: 'pk', AttributeType: 'S' }, { AttributeName: 'sk', AttributeType: 'S' }],
      KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }, { AttributeName: 'sk', KeyType: 'RANGE' }],
    }));
    const arn = out.TableDescription!.TableArn;
    if (tag) await client.send(new TagResourceCommand({ ResourceArn: arn, Tags: [{ Key: JOURNAL_MARKER_TAG, Value: 'v1' }] }));
    if (policy) await client.send(new PutResourcePolicyCommand({ ResourceArn: arn, Policy: policy }));
  }
  const create = async (): Promise<{ ok: boolean; reason?: string }> => {
    try {
      await h.onEvent(h.event(ResourceTypes.SUBSCRIPTION, 'Create', SUBSCRIPTION));
      return { ok: true };
    } catch (e) {
      return { ok: false, reason: (e as Error).message };
    }
  };

  test('the journal\'s table: the records land in it', async () => {
    await createTable(true, constructPolicy(h.journalTable));
    expect(await create()).toEqual({ ok: true });
    const items = (await client.send(new ScanCommand({ TableName: h.journalTable }))).Items ?? [];
    expect(items.map((i) => i.pk.S)).toContain('HandlerTest/Resource');
    expect(declaredJournalTables()).toEqual([h.journalTable]);
  });

  test('a table made first under the journal\'s name, without its tag: refused; nothing written, nothing created in the service', async () => {
    await createTable(false);
    const r = await create();
    expect(r.ok).toBe(false);
    expect(r.reason).toContain(`the lifecycle journal table ${h.journalTable} (the connection's journal) does not carry the tag ${JOURNAL_MARKER_TAG}=v1`);
    expect((await client.send(new ScanCommand({ TableName: h.journalTable }))).Items ?? []).toEqual([]);
    expect(h.state().subscriptions.filter((s: { id: number }) => s.id >= 9001)).toEqual([]);
  });

  test('tagged, but without the write fence (or with a widened one): refused, nothing written', async () => {
    await createTable(true);
    expect((await create()).reason).toContain('(the connection\'s journal) has no resource policy');
    resetJournalCache();
    const widened = JSON.parse(constructPolicy(h.journalTable)) as { Statement: Array<{ Condition: Record<string, unknown> }> };
    widened.Statement[0].Condition.StringNotLike = { 'aws:PrincipalArn': 'arn:aws:iam::*:role/*' };
    await client.send(new PutResourcePolicyCommand({ ResourceArn: `arn:aws:dynamodb:us-east-1:000000000000:table/${h.journalTable}`, Policy: JSON.stringify(widened) }));
    expect((await create()).reason).toContain('has conditions other than ArnNotLike aws:PrincipalArn');
    expect((await client.send(new ScanCommand({ TableName: h.journalTable }))).Items ?? []).toEqual([]);
  });

  test('a warm container checks the fence again after five minutes, in the background: the invocation that finds it removed still runs; the next is refused', async () => {
    await createTable(true, constructPolicy(h.journalTable));
    let clock = Date.now();
    const open = (): ReturnType<typeof dynamoJournal> => dynamoJournal({
      table: h.journalTable, endpoint: h.journal.endpoint, sleep: async () => undefined, now: () => clock,
    });
    await open().records('k');
    await client.send(new DeleteResourcePolicyCommand({ ResourceArn: `arn:aws:dynamodb:us-east-1:000000000000:table/${h.journalTable}` }));
    // Within five minutes: the passed check stands.
    clock += 4 * 60_000;
    await expect(open().records('k')).resolves.toEqual([]);
    // Later: this invocation is not failed halfway (the check it opened with stands) and starts the recheck.
    clock += 3 * 60_000;
    await expect(open().records('k')).resolves.toEqual([]);
    // Once the background check has read the table (a few local calls; slower on a loaded machine), the next
    // invocation is refused.
    let refused: unknown;
    for (let i = 0; i < 200 && refused === undefined; i++) {
      await new Promise((r) => setTimeout(r, 50));
      refused = await open().records('k').then(() => undefined, (e: unknown) => e);
    }
    expect(String(refused)).toContain('has no resource policy');
  });

  test('a missing declared journal is never created', async () => {
    const r = await create();
    expect(r.ok).toBe(false);
    expect(r.reason).toContain('does not exist');
    expect((await client.send(new ListTablesCommand({}))).TableNames ?? []).not.toContain(h.journalTable);
  });
});
