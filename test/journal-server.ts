/**
 * Test helper: one local DynamoDB-compatible journal server (dynalite) per test file.
 */
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
