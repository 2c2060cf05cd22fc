/**
 * The local journal server: a real DynamoDB-compatible server (dynalite) that the SDK talks to,
 * persisted to a JSON state file between runs.
 */
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  ConditionalCheckFailedException, CreateTableCommand, DynamoDBClient, GetItemCommand, PutItemCommand, QueryCommand,
} from '@aws-sdk/client-dynamodb';
import { tempDir } from './helpers';
import { readJournalState, startJournalServer } from '../../src/local/journal-server';
import { useJournalServer } from '../journal-server';

const client = (endpoint: string): DynamoDBClient => new DynamoDBClient({
  endpoint, region: 'us-east-1', credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
});

let tmp: { dir: string; cleanup: () => void };
beforeEach(() => {
  tmp = tempDir('dpi-journal-');
});
afterEach(() => tmp.cleanup());

const TABLE = 'dpi-lifecycle-journal';

async function createJournalTable(db: DynamoDBClient): Promise<void> {
  await db.send(new CreateTableCommand({
    TableName: TABLE,
    BillingMode: 'PAY_PER_REQUEST',
    KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }, { AttributeName: 'sk', KeyType: 'RANGE' }],
    AttributeDefinitions: [
      { AttributeName: 'pk', AttributeType: 'S' },
      { AttributeName: 'sk', AttributeType: 'S' },
      { AttributeName: 'stackId', AttributeType: 'S' },
    ],
    GlobalSecondaryIndexes: [{
      IndexName: 'byStack',
      KeySchema: [{ AttributeName: 'stackId', KeyType: 'HASH' }, { AttributeName: 'sk', KeyType: 'RANGE' }],
      Projection: { ProjectionType: 'ALL' },
    }],
  }));
}

test('SDK round trip, conditional failure, flush, stop, restart from the state file', async () => {
  const stateFile = join(tmp.dir, '.dpi', 'journal.json');
  const first = await startJournalServer({ stateFile });
  expect(first.endpoint).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
  const db1 = client(first.endpoint);
  try {
    await createJournalTable(db1);
    const item = {
      pk: { S: 'pipeline#9001' },
      sk: { S: 'op#0001' },
      stackId: { S: 'arn:stack/Demo/1' },
      state: { S: 'CREATED' },
      count: { N: '3' },
      blob: { B: Buffer.from([0, 1, 254, 255]) },
      tags: { SS: ['a', 'b'] },
      meta: { M: { ok: { BOOL: true }, none: { NULL: true }, list: { L: [{ S: 'x' }, { N: '1' }] } } },
    };
    await db1.send(new PutItemCommand({ TableName: TABLE, Item: item, ConditionExpression: 'attribute_not_exists(pk)' }));
    // The same conditional put again is a real ConditionalCheckFailedException.
    const again = db1.send(new PutItemCommand({ TableName: TABLE, Item: item, ConditionExpression: 'attribute_not_exists(pk)' }));
    await expect(again).rejects.toBeInstanceOf(ConditionalCheckFailedException);
    await first.flush();
    expect(existsSync(stateFile)).toBe(true);
    // Atomic write: no temporary file left behind.
    expect(readdirSync(join(tmp.dir, '.dpi'))).toEqual(['journal.json']);
    const saved = readJournalState(stateFile);
    expect(saved.tables.map((t) => [t.TableName, t.Items.length])).toEqual([[TABLE, 1]]);
  } finally {
    db1.destroy();
    await first.stop();
  }
  await first.stop(); // idempotent

  const second = await startJournalServer({ stateFile });
  const db2 = client(second.endpoint);
  try {
    expect(second.endpoint).not.toBe('');
    const got = await db2.send(new GetItemCommand({ TableName: TABLE, Key: { pk: { S: 'pipeline#9001' }, sk: { S: 'op#0001' } } }));
    expect(got.Item?.state).toEqual({ S: 'CREATED' });
    expect(got.Item?.count).toEqual({ N: '3' });
    expect(Buffer.from(got.Item!.blob.B!)).toEqual(Buffer.from([0, 1, 254, 255]));
    expect(got.Item?.tags.SS?.sort()).toEqual(['a', 'b']);
    expect(got.Item?.meta).toEqual({ M: { ok: { BOOL: true }, none: { NULL: true }, list: { L: [{ S: 'x' }, { N: '1' }] } } });
    // The GSI came back with the table.
    const q = await db2.send(new QueryCommand({
      TableName: TABLE, IndexName: 'byStack', KeyConditionExpression: 'stackId = :s', ExpressionAttributeValues: { ':s': { S: 'arn:stack/Demo/1' } },
    }));
    expect(q.Items?.map((i) => i.sk.S)).toEqual(['op#0001']);
    // The condition still holds against the restored item.
    await expect(db2.send(new PutItemCommand({
      TableName: TABLE, Item: { pk: { S: 'pipeline#9001' }, sk: { S: 'op#0001' } }, ConditionExpression: 'attribute_not_exists(pk)',
    }))).rejects.toBeInstanceOf(ConditionalCheckFailedException);
  } finally {
    db2.destroy();
    await second.stop();
  }
});

test('many items (several scan pages) survive a restart; stop() flushes', async () => {
  const stateFile = join(tmp.dir, 'journal.json');
  const first = await startJournalServer({ stateFile });
  const db = client(first.endpoint);
  const big = 'x'.repeat(20_000);
  try {
    await createJournalTable(db);
    for (let i = 0; i < 80; i++) {
      await db.send(new PutItemCommand({ TableName: TABLE, Item: { pk: { S: `p${i % 7}` }, sk: { S: `s${i}` }, payload: { S: big } } }));
    }
  } finally {
    db.destroy();
    await first.stop(); // no explicit flush
  }
  expect(readJournalState(stateFile).tables[0].Items).toHaveLength(80);
  const second = await startJournalServer({ stateFile });
  try {
    await second.flush();
    expect(readJournalState(stateFile).tables[0].Items).toHaveLength(80);
  } finally {
    await second.stop();
  }
});

test('a corrupt state file fails the start with an error naming the file', async () => {
  const stateFile = join(tmp.dir, 'journal.json');
  writeFileSync(stateFile, '{"version": 1, "tables": [');
  await expect(startJournalServer({ stateFile })).rejects.toThrow(stateFile);
  writeFileSync(stateFile, JSON.stringify({ version: 1, tables: [{ TableName: 't' }] }));
  await expect(startJournalServer({ stateFile })).rejects.toThrow(`the journal state file ${stateFile} is not valid`);
  writeFileSync(stateFile, JSON.stringify({ version: 7, tables: [] }));
  await expect(startJournalServer({ stateFile })).rejects.toThrow(/unsupported version 7/);
  // A well-formed file DynamoDB rejects (bad key schema) also names the file.
  writeFileSync(stateFile, JSON.stringify({ version: 1, tables: [{ TableName: 't', KeySchema: [], AttributeDefinitions: [], BillingMode: 'PAY_PER_REQUEST', Items: [] }] }));
  await expect(startJournalServer({ stateFile })).rejects.toThrow(`cannot restore the journal from ${stateFile}`);
  // The file is left as it was.
  expect(readFileSync(stateFile, 'utf8')).toContain('"KeySchema":[]');
});

test('a flush that would write a forbidden value (a secret) is refused', async () => {
  const stateFile = join(tmp.dir, 'journal.json');
  const server = await startJournalServer({ stateFile, forbidden: ['rt-secret-123'] });
  const db = client(server.endpoint);
  try {
    await createJournalTable(db);
    await db.send(new PutItemCommand({ TableName: TABLE, Item: { pk: { S: 'p' }, sk: { S: 'rt-secret-123' } } }));
    await expect(server.flush()).rejects.toThrow(`refusing to write a secret into the journal state file ${stateFile}`);
    expect(existsSync(stateFile)).toBe(false);
  } finally {
    db.destroy();
    await server.stop().catch(() => undefined);
  }
});

describe('the test helper', () => {
  const journal = useJournalServer();
  test('gives a running endpoint for the file', async () => {
    const db = client(journal.endpoint);
    try {
      await createJournalTable(db);
      await db.send(new PutItemCommand({ TableName: TABLE, Item: { pk: { S: 'a' }, sk: { S: 'b' } } }));
      const got = await db.send(new GetItemCommand({ TableName: TABLE, Key: { pk: { S: 'a' }, sk: { S: 'b' } } }));
      expect(got.Item).toBeDefined();
    } finally {
      db.destroy();
    }
  });
});

test('a runner killed before its flush loses nothing: every acknowledged write is in the write-ahead log and replayed at the next start', async () => {
  const stateFile = join(tmp.dir, '.dpi', 'journal.json');
  const first = await startJournalServer({ stateFile, forbidden: ['top-secret-token'] });
  const db1 = client(first.endpoint);
  await createJournalTable(db1);
  await first.flush();
  await db1.send(new PutItemCommand({ TableName: TABLE, Item: { pk: { S: 'r#1' }, sk: { S: 's' }, state: { S: 'posting' } } }));
  await db1.send(new PutItemCommand({ TableName: TABLE, Item: { pk: { S: 'r#1' }, sk: { S: 's' }, state: { S: 'posted' } } }));
  // A write that would store a secret is not logged.
  await db1.send(new PutItemCommand({ TableName: TABLE, Item: { pk: { S: 'r#2' }, sk: { S: 's' }, doc: { S: 'top-secret-token' } } }));
  expect(readFileSync(`${stateFile}.wal`, 'utf8').trim().split('\n')).toHaveLength(2);
  // "Killed": no flush. A new server on the same files sees the acknowledged writes; it saves them at start (the log is
  // trimmed) and logs neither its restore nor its replay, so a second kill and restart does not go back in time.
  const second = await startJournalServer({ stateFile });
  const db2 = client(second.endpoint);
  expect(existsSync(`${stateFile}.wal`)).toBe(false);
  expect(readJournalState(stateFile).tables[0].Items.map((i) => (i.state as { S: string }).S)).toEqual(['posted']);
  await db2.send(new PutItemCommand({ TableName: TABLE, Item: { pk: { S: 'r#1' }, sk: { S: 's' }, state: { S: 'active' } } }));
  const third = await startJournalServer({ stateFile });
  const db3 = client(third.endpoint);
  try {
    const got = await db3.send(new GetItemCommand({ TableName: TABLE, Key: { pk: { S: 'r#1' }, sk: { S: 's' } }, ConsistentRead: true }));
    expect(got.Item?.state).toEqual({ S: 'active' });
  } finally {
    db3.destroy();
    await third.stop();
    db2.destroy();
    await second.stop();
    db1.destroy();
    await first.stop().catch(() => undefined); // its flush refuses the secret item
  }
});

test('a read-only reader (dpi plan, drift, orphans, journal show --local) sees the log, writes nothing and loses no concurrent write', async () => {
  const file = join(tmp.dir, 'journal.json');
  const put = (db: DynamoDBClient, pk: string): Promise<unknown> =>
    db.send(new PutItemCommand({ TableName: TABLE, Item: { pk: { S: pk }, sk: { S: '1' } } }));
  // The writer: a dpi local-deploy's journal server, with a write in the state file and one in its log only.
  const writer = await startJournalServer({ stateFile: file });
  const w = client(writer.endpoint);
  await createJournalTable(w);
  await put(w, 'S/A');
  await writer.flush();
  await put(w, 'S/B');
  const saved = readFileSync(file, 'utf8');
  const logged = readFileSync(`${file}.wal`, 'utf8');
  const reader = await startJournalServer({ stateFile: file, readOnly: true });
  const r = client(reader.endpoint);
  const keys = async (db: DynamoDBClient): Promise<string[]> => {
    const found: string[] = [];
    for (const pk of ['S/A', 'S/B', 'S/C']) {
      if ((await db.send(new GetItemCommand({ TableName: TABLE, Key: { pk: { S: pk }, sk: { S: '1' } } }))).Item) found.push(pk);
    }
    return found;
  };
  expect(await keys(r)).toEqual(['S/A', 'S/B']);
  await expect(put(r, 'S/X')).rejects.toThrow(/read-only/);
  // The writer goes on while the reader is open; the reader stops; the writer is killed before its next flush.
  await put(w, 'S/C');
  await reader.stop();
  expect(readFileSync(file, 'utf8')).toBe(saved);
  expect(readFileSync(`${file}.wal`, 'utf8').startsWith(logged)).toBe(true);
  w.destroy();
  r.destroy();
  const after = await startJournalServer({ stateFile: file });
  const a = client(after.endpoint);
  expect(await keys(a)).toEqual(['S/A', 'S/B', 'S/C']);
  a.destroy();
  await after.stop();
  await writer.stop().catch(() => undefined);
});
