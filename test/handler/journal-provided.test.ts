/**
 * A lifecycle journal table supplied by the user (`ServiceConnectionProps.journalTable`): the handler uses it, never
 * creates it, and refuses one with the wrong key schema, naming the table.
 */
import { CreateTableCommand, DynamoDBClient, ListTablesCommand, ScanCommand } from '@aws-sdk/client-dynamodb';
import { INVENTED } from './delivery-helpers';
import { HandlerHarness } from './helpers';
import { CREATED_JOURNAL_TABLES_ENV, DECLARED_JOURNAL_TABLES_ENV } from '../../src/contract';
import { dynamoJournal, resetJournalCache } from '../../src/handler/journal';
import { journalMode, PROVIDED_JOURNAL_TABLES_ENV, providedJournalTables } from '../../src/handler/journal-provided';
import { CANCELLED_CREATE_GRACE_ROUNDS } from '../../src/handler/lease';
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

let h: HandlerHarness;
let client: DynamoDBClient;
let saved: string | undefined;

beforeAll(async () => {
  h = await HandlerHarness.start();
  client = new DynamoDBClient({ endpoint: h.journal.endpoint, region: 'us-east-1', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } });
  saved = process.env[PROVIDED_JOURNAL_TABLES_ENV];
});
afterAll(async () => {
  if (saved === undefined) delete process.env[PROVIDED_JOURNAL_TABLES_ENV];
  else process.env[PROVIDED_JOURNAL_TABLES_ENV] = saved;
  client.destroy();
  h.assertNoSecrets();
  await h.stop();
});
beforeEach(async () => {
  await h.reset();
  resetJournalCache();
});

async function tables(): Promise<string[]> {
  return (await client.send(new ListTablesCommand({}))).TableNames ?? [];
}

async function createTable(name: string, hash: string, range: string, rangeType: 'S' | 'N' = 'S'): Promise<void> {
  await client.send(new CreateTableCommand({
    TableName: name,
    BillingMode: 'PAY_PER_REQUEST',
    AttributeDefinitions: [{ AttributeName: hash, AttributeType: 'S' }, { AttributeName: range, AttributeType: rangeType }],
    KeySchema: [{ AttributeName: hash, KeyType: 'HASH' }, { AttributeName: range, KeyType: 'RANGE' }],
  }));
}

async function create(): Promise<{ ok: boolean; reason?: string }> {
  try {
    await h.onEvent(h.event(ResourceTypes.SUBSCRIPTION, 'Create', SUBSCRIPTION));
    return { ok: true };
  } catch (e) {
    return { ok: false, reason: (e as Error).message };
  }
}

describe('a supplied journal table', () => {
  test('is used as it is: the records land in it', async () => {
    await createTable(h.journalTable, 'pk', 'sk');
    process.env[PROVIDED_JOURNAL_TABLES_ENV] = `other-table,${h.journalTable}`;
    expect(await create()).toEqual({ ok: true });
    const items = (await client.send(new ScanCommand({ TableName: h.journalTable }))).Items ?? [];
    expect(items.map((i) => i.pk.S)).toContain('HandlerTest/Resource');
  });

  test('is never created: a missing one fails with a reason naming it, and stays missing', async () => {
    process.env[PROVIDED_JOURNAL_TABLES_ENV] = h.journalTable;
    const before = await tables();
    const r = await create();
    expect(r.ok).toBe(false);
    expect(r.reason).toContain(`the lifecycle journal table ${h.journalTable} does not exist; the handler creates no table the app did not ask it to create`);
    expect(await tables()).toEqual(before);
    expect(await tables()).not.toContain(h.journalTable);
    // Nothing was created in the service either: the journal is checked before the first changing call.
    expect(h.state().subscriptions.filter((s: { id: number }) => s.id >= 9001)).toEqual([]);
  });

  test('a cancellation Delete when it is missing (a stack deployed before its journal) looks again for a while, then answers success, ends nothing and makes no table', async () => {
    process.env[PROVIDED_JOURNAL_TABLES_ENV] = h.journalTable;
    const before = await tables();
    const slept = h.slept.length;
    const out = await h.onEvent(h.event(ResourceTypes.SUBSCRIPTION, 'Delete', SUBSCRIPTION, { PhysicalResourceId: INVENTED }));
    expect(out.PhysicalResourceId).toBe(INVENTED);
    // The lease's grace for a cancelled Create on its way: the table is looked for again each second.
    expect(h.slept.slice(slept).filter((ms) => ms === 1_000)).toHaveLength(CANCELLED_CREATE_GRACE_ROUNDS);
    expect(await tables()).toEqual(before);
    expect(await tables()).not.toContain(h.journalTable);
    expect(h.state().subscriptions.filter((s: { id: number }) => s.id >= 9001)).toEqual([]);
    // A Create still fails: it needs the journal before any service call.
    expect((await create()).ok).toBe(false);
  });

  test('a Delete of a made record (a service ID) whose table is missing fails visibly, and ends nothing', async () => {
    process.env[PROVIDED_JOURNAL_TABLES_ENV] = h.journalTable;
    let reason = '';
    try {
      await h.onEvent(h.event(ResourceTypes.SUBSCRIPTION, 'Delete', SUBSCRIPTION, { PhysicalResourceId: '8601' }));
    } catch (e) {
      reason = (e as Error).message;
    }
    expect(reason).toContain(`the lifecycle journal table ${h.journalTable} does not exist`);
    expect(h.state().subscriptions.find((s: { id: number }) => s.id === 8601)?.status).toBe('active');
  });

  test('a cancellation Delete whose table appears during the grace (its stack deploying now) runs as a Delete does', async () => {
    process.env[PROVIDED_JOURNAL_TABLES_ENV] = h.journalTable;
    let made = false;
    h.onSleep = async (ms) => {
      if (ms === 1_000 && !made) {
        made = true;
        await createTable(h.journalTable, 'pk', 'sk');
      }
    };
    try {
      const out = await h.onEvent(h.event(ResourceTypes.SUBSCRIPTION, 'Delete', SUBSCRIPTION, { PhysicalResourceId: INVENTED }));
      expect(out.PhysicalResourceId).toBe(INVENTED);
    } finally {
      h.onSleep = undefined;
    }
    // It ran with the journal: its lease is in the table.
    const items = (await client.send(new ScanCommand({ TableName: h.journalTable }))).Items ?? [];
    expect(items.map((i) => i.pk.S)).toContain('lease#HandlerTest/Resource');
  });

  test('with another key schema: refused, naming the table, its keys and the keys the journal needs', async () => {
    await createTable(h.journalTable, 'id', 'version', 'N');
    process.env[PROVIDED_JOURNAL_TABLES_ENV] = h.journalTable;
    const r = await create();
    expect(r.ok).toBe(false);
    expect(r.reason).toContain(`the lifecycle journal table ${h.journalTable} (the connection's journalTable) has partition key id (String) `
      + 'and sort key version (Number); the journal needs partition key pk (String) and sort key sk (String)');
  });

  test('a table the app asked the handler to create (DPI_CREATED_JOURNAL_TABLES lists it) is created on first use', async () => {
    delete process.env[PROVIDED_JOURNAL_TABLES_ENV];
    expect(await tables()).not.toContain(h.journalTable);
    expect(await create()).toEqual({ ok: true });
    expect(await tables()).toContain(h.journalTable);
  });

  test('a table no list names (the app asked for no creation) is never created: the Create fails and nothing is made', async () => {
    delete process.env[PROVIDED_JOURNAL_TABLES_ENV];
    h.createsJournal = false;
    const before = await tables();
    const r = await create();
    expect(r.ok).toBe(false);
    expect(r.reason).toContain(`the lifecycle journal table ${h.journalTable} does not exist; the handler creates no table the app did not ask it to create`);
    expect(await tables()).toEqual(before);
    expect(h.state().subscriptions.filter((s: { id: number }) => s.id >= 9001)).toEqual([]);
    // The same table, once the app asks for it: created.
    h.createsJournal = true;
    expect(await create()).toEqual({ ok: true });
    expect(await tables()).toContain(h.journalTable);
  });

  test('a table of the created list that is also supplied is checked, never created (the supplied list wins)', () => {
    const env = { [CREATED_JOURNAL_TABLES_ENV]: 't1,t2', [PROVIDED_JOURNAL_TABLES_ENV]: 't2', [DECLARED_JOURNAL_TABLES_ENV]: 't3' };
    expect(['t1', 't2', 't3', 't4'].map((t) => journalMode(t, env))).toEqual(['create', 'provided', 'declared', 'provided']);
  });

  test('the option wins over the environment', async () => {
    delete process.env[PROVIDED_JOURNAL_TABLES_ENV];
    const journal = dynamoJournal({ table: 'not-there', endpoint: h.journal.endpoint, sleep: async () => undefined, provided: true });
    await expect(journal.records('x')).rejects.toThrow('not-there does not exist; the handler creates no table');
    expect(await tables()).not.toContain('not-there');
    expect(providedJournalTables({ [PROVIDED_JOURNAL_TABLES_ENV]: ' a, b ,,' })).toEqual(['a', 'b']);
  });
});
