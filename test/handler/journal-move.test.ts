/**
 * A deployed resource whose connection names another lifecycle journal table (journalTableName or journalTable
 * changed): an Update is refused before any service call when the previous table holds the resource's live record and
 * the new one does not (a move without copying), and its rollback (the old table again) finishes. When neither table
 * proves the record (or the previous one cannot be read), the Update proceeds and never refuses, so a rollback always
 * finishes: a record made anew from the previous properties is then kept as adopted, so a later Delete releases it. A
 * re-made record also keeps an adoption the properties declare.
 */
import { DescribeTableCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { HandlerHarness, useHandlerHarness } from './helpers';
import { dynamoJournal } from '../../src/handler/journal';
import { checkJournalMove } from '../../src/handler/journal-move';
import { ResourceTypes } from '../../src/kinds';

const SUB = ResourceTypes.SUBSCRIPTION;
let h: HandlerHarness;
useHandlerHarness((started) => {
  h = started;
}, { resetEach: true });

const subOf = (id: string): any => h.state().subscriptions.find((s: any) => String(s.id) === id);
const props = (extra: Record<string, unknown>): Record<string, unknown> => ({
  ProductId: '3001', RemoteIdentityId: '362', StorageGroupId: '501', Name: 'by hand', Status: 'active', OnDelete: 'invalid', ...extra,
});

/** A subscription made in the UI (not by the stack), adopted with RETAIN in the current journal table. */
async function adoptHandMade(): Promise<{ id: string; adopted: Record<string, unknown>; oldConnection: Record<string, string> }> {
  const id = await h.subscribe(3001, 362, { marketplace_id: 'ATVPDKIKX0DER' }, { storage_group: 501, name: 'by hand' });
  const adopted = props({ AdoptId: id, RemovalPolicy: 'retain' });
  await h.onEvent(h.event(SUB, 'Create', adopted));
  return { id, adopted, oldConnection: h.connection };
}

test('moving to a journal table without the resource\'s records is refused before any call; the rollback finishes', async () => {
  const { id, adopted, oldConnection } = await adoptHandMade();
  const was = JSON.stringify(subOf(id));
  await h.reset({ keepEmulator: true }); // the connection now names a new, empty table
  await h.clearRequests();
  const reason = await h.fails(h.event(SUB, 'Update', { ...adopted, Name: 'renamed' }, {
    PhysicalResourceId: id, OldResourceProperties: { ...adopted, Connection: oldConnection },
  }));
  expect(reason).toContain(`changed from ${oldConnection.JournalTableName} to ${h.journalTable}`);
  expect(reason).toContain(`holds no record of HandlerTest/Resource while ${oldConnection.JournalTableName} does`);
  expect(reason).toContain('nothing was changed');
  expect(await h.changingRequests()).toEqual([]);
  // Nothing was made, not even the new table.
  const ddb = new DynamoDBClient({ endpoint: h.journal.endpoint, region: 'us-east-1', credentials: { accessKeyId: 'l', secretAccessKey: 'l' } });
  await expect(ddb.send(new DescribeTableCommand({ TableName: h.journalTable }))).rejects.toMatchObject({ name: 'ResourceNotFoundException' });
  ddb.destroy();
  // UPDATE_ROLLBACK: back to the old table, which holds the records.
  const newConnection = h.connection;
  const back = await h.onEvent({
    ...h.event(SUB, 'Update', adopted, { PhysicalResourceId: id, OldResourceProperties: { ...adopted, Name: 'renamed', Connection: newConnection } }),
    ResourceProperties: { ServiceToken: 'x', ...adopted, Connection: oldConnection },
  });
  expect(back.PhysicalResourceId).toBe(id);
  expect(JSON.stringify(subOf(id))).toBe(was);
});

test('a table the old records were copied into: the Update proceeds with them (the adoption is still known)', async () => {
  const { id, adopted, oldConnection } = await adoptHandMade();
  const from = dynamoJournal({ create: true, table: oldConnection.JournalTableName, endpoint: h.journal.endpoint, sleep: async () => undefined });
  const recs = await from.records('HandlerTest/Resource');
  expect(recs.map((r) => r.doc)).toEqual([expect.objectContaining({ adopted: true })]);
  await h.reset({ keepEmulator: true });
  const to = dynamoJournal({ create: true, table: h.journalTable, endpoint: h.journal.endpoint, sleep: async () => undefined });
  for (const r of recs) await to.create(r.key, r.state, r.doc, r.physicalId);
  await to.claim('sub', id, 'HandlerTest/Resource');
  await h.onEvent(h.event(SUB, 'Update', adopted, { PhysicalResourceId: id, OldResourceProperties: { ...adopted, Connection: oldConnection } }));
  // existingSubscriptionId dropped (the construct's default becomes DESTROY), then the resource removed: released, not ended.
  const dropped = props({ RemovalPolicy: 'destroy' });
  await h.onEvent(h.event(SUB, 'Update', dropped, { PhysicalResourceId: id, OldResourceProperties: { ...adopted, Connection: h.connection } }));
  await h.clearRequests();
  await h.onEvent(h.event(SUB, 'Delete', dropped, { PhysicalResourceId: id }));
  expect(await h.changingRequests()).toEqual([]);
  expect(subOf(id).status).toBe('active');
});

test('no journal record at all (re-made from the previous properties): a previously declared adoption is kept, a Delete releases it', async () => {
  const { id, adopted } = await adoptHandMade();
  await h.reset({ keepEmulator: true }); // the same table for both events below, with no record of the resource
  const oldProps = { ...adopted, Connection: h.connection };
  await h.onEvent(h.event(SUB, 'Update', adopted, { PhysicalResourceId: id, OldResourceProperties: oldProps }));
  expect((await h.journalRecords()).map((r) => [r.state, r.doc.adopted])).toEqual([['active', true]]);
  const dropped = props({ RemovalPolicy: 'destroy' });
  await h.onEvent(h.event(SUB, 'Update', dropped, { PhysicalResourceId: id, OldResourceProperties: oldProps }));
  await h.clearRequests();
  await h.onEvent(h.event(SUB, 'Delete', dropped, { PhysicalResourceId: id }));
  expect(await h.changingRequests()).toEqual([]);
  expect(subOf(id).status).toBe('active');
  h.assertNoSecrets();
});

test('neither table holds the record (made before the journal, or the old table emptied): the move proceeds as adopted, and so does its rollback', async () => {
  const { id } = await adoptHandMade();
  await h.reset({ keepEmulator: true });
  const tableA = h.connection;
  await h.reset({ keepEmulator: true });
  const tableB = h.connection;
  // Declared without the adoption now (a stack-made record as far as the properties tell): nothing proves it the stack's.
  const plain = props({ RemovalPolicy: 'destroy' });
  const forward = await h.onEvent({
    ...h.event(SUB, 'Update', { ...plain, Name: 'renamed' }, { PhysicalResourceId: id, OldResourceProperties: { ...plain, Connection: tableA } }),
  });
  expect(forward.PhysicalResourceId).toBe(id);
  expect((await h.journalRecords()).map((r) => [r.state, r.doc.adopted])).toEqual([['active', true]]);
  expect(h.logs.some((l) => l.includes('journal table changed without the resource\'s records'))).toBe(true);
  // The rollback: back to table A, which holds nothing either; it finishes.
  const back = await h.onEvent({
    ...h.event(SUB, 'Update', plain, { PhysicalResourceId: id, OldResourceProperties: { ...plain, Name: 'renamed', Connection: tableB } }),
    ResourceProperties: { ServiceToken: 'x', ...plain, Connection: tableA },
  });
  expect(back.PhysicalResourceId).toBe(id);
  // Under table B the record is the user's to keep: a Delete releases it.
  await h.clearRequests();
  await h.onEvent(h.event(SUB, 'Delete', plain, { PhysicalResourceId: id }));
  expect(await h.changingRequests()).toEqual([]);
  expect(subOf(id).status).toBe('active');
});

test('a previous table that cannot be read (the provider role may use the new table only): no refusal, the record is kept as adopted', async () => {
  const denied = Object.assign(new Error('AccessDeniedException: not authorized to perform dynamodb:Query'), { name: 'AccessDeniedException' });
  const tables: Record<string, unknown[] | Error> = { old: denied, fresh: [] };
  const journalAt = (table: string): any => ({
    records: async () => {
      const t = tables[table];
      if (t instanceof Error) throw t;
      return t;
    },
  });
  const event = h.event(SUB, 'Update', { ...props({}), Connection: { JournalTableName: 'fresh' } }, {
    PhysicalResourceId: '9001', OldResourceProperties: { ...props({}), Connection: { JournalTableName: 'old' } },
  });
  event.ResourceProperties = { ...event.ResourceProperties, Connection: { JournalTableName: 'fresh' } };
  expect((await checkJournalMove(event, { journalAt }))?.reason).toContain('old cannot be read here');
  tables.old = [{ key: 'HandlerTest/Resource', id: 'r1', state: 'active', physicalId: '9001', doc: {} }];
  await expect(checkJournalMove(event, { journalAt })).rejects.toThrow('holds no record of HandlerTest/Resource while old does');
  tables.fresh = [{ key: 'HandlerTest/Resource', id: 'r1', state: 'active', physicalId: '9001', doc: {} }];
  expect(await checkJournalMove(event, { journalAt })).toBeUndefined();
});
