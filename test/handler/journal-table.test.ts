/**
 * The journal table's first use by two stacks at once: the second handler finds the table CREATING (made by the
 * first) and waits for it instead of failing with a misleading message.
 */
import { CreateTableCommand, DescribeTableCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { dynamoJournal, resetJournalCache } from '../../src/handler/journal';
import { JournalServer, startJournalServer } from '../../src/local/journal-server';

let server: JournalServer;
beforeAll(async () => {
  server = await startJournalServer({ createTableMs: 1500 });
});
afterAll(async () => {
  await server?.stop();
});

test('a handler that finds the table CREATING waits until it is ACTIVE, then works', async () => {
  resetJournalCache();
  const table = 'dpi-journal-race';
  const client = new DynamoDBClient({ endpoint: server.endpoint, region: 'us-east-1', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } });
  // Another stack's handler started creating it a moment ago.
  await client.send(new CreateTableCommand({
    TableName: table,
    BillingMode: 'PAY_PER_REQUEST',
    AttributeDefinitions: [{ AttributeName: 'pk', AttributeType: 'S' }, { AttributeName: 'sk', AttributeType: 'S' }],
    KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }, { AttributeName: 'sk', KeyType: 'RANGE' }],
  }));
  expect((await client.send(new DescribeTableCommand({ TableName: table }))).Table?.TableStatus).toBe('CREATING');
  let waits = 0;
  const journal = dynamoJournal({
    table,
    create: true,
    endpoint: server.endpoint,
    sleep: async (ms) => {
      waits++;
      await new Promise((r) => setTimeout(r, Math.min(ms, 200)));
    },
  });
  const rec = await journal.create('Stack/Resource', 'recording', { product: 3001 });
  expect(waits).toBeGreaterThan(0);
  expect((await journal.records('Stack/Resource')).map((r) => r.id)).toEqual([rec.id]);
});
