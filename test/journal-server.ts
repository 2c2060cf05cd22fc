/**
 * Test helper: one local DynamoDB-compatible journal server (dynalite) per test file.
 */
import { CreateTableCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { JournalServer, JournalServerOptions, startJournalServer } from '../src/local/journal-server';

/** The journal server of the current test file; `endpoint` is set once `beforeAll` has run. */
export interface TestJournalServer {
  /** `http://127.0.0.1:<port>` (pass it as `journalEndpoint` to `configureLocalRuntime`). */
  readonly endpoint: string;
  /** The running server (flush, stop). */
  readonly server: JournalServer;
}

/**
 * Registers `beforeAll` / `afterAll` hooks that start a journal server for the test file and stop it.
 * Call it at the top level of a test file; read `endpoint` inside tests or hooks (not at module load).
 */
export function useJournalServer(options: JournalServerOptions = {}): TestJournalServer {
  let server: JournalServer | undefined;
  beforeAll(async () => {
    server = await startJournalServer(options);
  });
  afterAll(async () => {
    await server?.stop();
    server = undefined;
  });
  const running = (): JournalServer => {
    if (!server) throw new Error('the journal server is not running: read it inside a test or a hook, after beforeAll');
    return server;
  };
  return {
    get endpoint() {
      return running().endpoint;
    },
    get server() {
      return running();
    },
  };
}

/** Creates a journal-shaped table (`pk`/`sk` strings, on demand) in the local journal at `endpoint`. */
export async function createJournalTable(endpoint: string, table: string): Promise<void> {
  const c = new DynamoDBClient({ endpoint, region: 'us-east-1', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } });
  try {
    await c.send(new CreateTableCommand({
      TableName: table,
      BillingMode: 'PAY_PER_REQUEST',
      AttributeDefinitions: [{ AttributeName: 'pk', AttributeType: 'S' }, { AttributeName: 'sk', AttributeType: 'S' }],
      KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }, { AttributeName: 'sk', KeyType: 'RANGE' }],
    }));
  } finally {
    c.destroy();
  }
}
