/**
 * The CLI's journal (`dpi orphans`, `dpi drift`, `dpi journal`) is checked as the handler checks a declared journal
 * when its table carries the journal tag: a `LifecycleJournal` whose fence was opened (a policy that is not the
 * construct's) is refused before any record is read, so records written through the opening are never believed.
 * An untagged table (supplied or handler-created) is read as before, with its key schema checked.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CreateTableCommand, DynamoDBClient, PutItemCommand, PutResourcePolicyCommand, TagResourceCommand } from '@aws-sdk/client-dynamodb';
import { openJournal } from '../../src/cli/commands/journal-access';
import { JOURNAL_MARKER_TAG } from '../../src/contract';
import { resetJournalCache } from '../../src/handler/journal';
import { JournalServer, startJournalServer } from '../../src/local/journal-server';
import { constructPolicy } from '../handler/journal-policy';

let work: string;
let server: JournalServer;
let client: DynamoDBClient;

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), 'dpi-cli-declared-'));
  server = await startJournalServer({ stateFile: join(work, 'journal.json') });
  client = new DynamoDBClient({ endpoint: server.endpoint, region: 'us-east-1', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } });
});
afterAll(async () => {
  client.destroy();
  await server.stop();
  rmSync(work, { recursive: true, force: true });
});
beforeEach(() => resetJournalCache());

/** A journal table with one record (a forged one, for the opened fence), tagged and with `policy` as asked. */
async function table(name: string, o: { tag: boolean; policy?: string }): Promise<void> {
  const out = await client.send(new CreateTableCommand({
    TableName: name,
    BillingMode: 'PAY_PER_REQUEST',
    AttributeDefinitions: [{ AttributeName: 'pk', AttributeType: 'S' }, { AttributeName: 'sk', AttributeType: 'S' }],
    KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }, { AttributeName: 'sk', KeyType: 'RANGE' }],
  }));
  const arn = out.TableDescription!.TableArn;
  if (o.tag) await client.send(new TagResourceCommand({ ResourceArn: arn, Tags: [{ Key: JOURNAL_MARKER_TAG, Value: 'v1' }] }));
  if (o.policy) await client.send(new PutResourcePolicyCommand({ ResourceArn: arn, Policy: o.policy }));
  await client.send(new PutItemCommand({ TableName: name, Item: { pk: { S: 'Gone/Sub' }, sk: { S: 'r#2026-11-01T00:00:00.000Z#8601' } } }));
}

async function read(name: string): Promise<{ ok: boolean; reason?: string }> {
  const opened = await openJournal({ endpoint: server.endpoint, table: name, state: join(work, 'state.json') }, 'dpi orphans');
  try {
    await opened.journal.records('Gone/Sub');
    return { ok: true };
  } catch (e) {
    return { ok: false, reason: (e as Error).message };
  } finally {
    await opened.close();
  }
}

test('a tagged table whose resource policy is not LifecycleJournal\'s fence: refused before any record is read, naming the table', async () => {
  const opened = JSON.stringify({
    Version: '2012-10-17',
    Statement: [{ Sid: 'Anyone', Effect: 'Allow', Principal: { AWS: 'arn:aws:iam::123456789012:root' }, Action: 'dynamodb:PutItem', Resource: '*' }],
  });
  await table('opened-journal', { tag: true, policy: opened });
  const r = await read('opened-journal');
  expect(r.ok).toBe(false);
  expect(r.reason).toContain('opened-journal');
  expect(r.reason).toContain('has a resource policy that is not LifecycleJournal\'s');
});

test('the table LifecycleJournal makes (tag and fence) and an untagged table are read', async () => {
  await table('team-journal', { tag: true, policy: constructPolicy('team-journal') });
  expect(await read('team-journal')).toEqual({ ok: true });
  await table('supplied-journal', { tag: false });
  expect(await read('supplied-journal')).toEqual({ ok: true });
});
