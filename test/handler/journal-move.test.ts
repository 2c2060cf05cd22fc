/**
 * A deployed resource whose connection names another lifecycle journal table (journalTableName or journalTable
 * changed): an Update is refused before any service call unless the new table holds the resource's records (copied),
 * and its rollback (the old table again) finishes. A record re-made from the previous properties (no journal record
 * at all) keeps an adoption that the previous properties declared, so a later Delete releases it instead of ending it.
 */
import { HandlerHarness, useHandlerHarness } from './helpers';
import { ResourceTypes } from '../../src/contract';
import { dynamoJournal } from '../../src/handler/journal';

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
  expect(reason).toContain('holds no record of HandlerTest/Resource');
  expect(reason).toContain('nothing was changed');
  expect(await h.changingRequests()).toEqual([]);
  expect(await h.journalItems()).toEqual([]);
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
  const from = dynamoJournal({ table: oldConnection.JournalTableName, endpoint: h.journal.endpoint, sleep: async () => undefined });
  const recs = await from.records('HandlerTest/Resource');
  expect(recs.map((r) => r.doc)).toEqual([expect.objectContaining({ adopted: true })]);
  await h.reset({ keepEmulator: true });
  const to = dynamoJournal({ table: h.journalTable, endpoint: h.journal.endpoint, sleep: async () => undefined });
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
