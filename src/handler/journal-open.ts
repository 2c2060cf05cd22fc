/**
 * Opening the lifecycle journal's table (journal.ts): one DynamoDB client per endpoint per container, the table
 * created on first use where the app asked for it (pay-per-request, point-in-time recovery, deletion protection),
 * checked where it is declared or supplied (journal-provided.ts), and every failure named after the table.
 */
import type * as ddb from '@aws-sdk/client-dynamodb';
import { DEFAULT_JOURNAL_TABLE } from '../contract';
import { HandlerError, messageOf } from './errors';
import { checkProvidedTable, JournalEnvironment, journalMode } from './journal-provided';
import { log } from './log';

export type DdbModule = typeof import('@aws-sdk/client-dynamodb');

function sdk(): DdbModule {
  // The Lambda runtime provides the SDK (external in the bundle); `dpi local-deploy` ships it as a dependency.
  // eslint-disable-next-line @typescript-eslint/no-require-imports, import/no-extraneous-dependencies
  return require('@aws-sdk/client-dynamodb') as DdbModule;
}

const ensured = new Map<string, Promise<void>>();
/** How long a warm container trusts a passed check of a declared journal (its tag, deletion protection and fence). */
export const DECLARED_RECHECK_MS = 5 * 60_000;
/** Each container's own offset, so warm containers do not all ask DynamoDB's control plane at the same moment. */
const RECHECK_JITTER_MS = Math.floor(Math.random() * 60_000);

interface DeclaredCheck {
  p: Promise<void>;
  at: number;
  revalidating: boolean;
}
const declaredChecks = new Map<string, DeclaredCheck>();

/**
 * The check of a declared journal for an invocation that opens it now. The first check is awaited; a passed check is
 * checked again in the background once it is older than DECLARED_RECHECK_MS (plus the container's jitter), and its
 * outcome serves the invocations that open the journal afterwards: a definite refusal (HandlerError: the tag,
 * deletion protection or fence is wrong) refuses them; a transient failure (throttling) keeps the last result.
 */
function declaredCheck(key: string, check: () => Promise<void>, now: () => number): Promise<void> {
  const e = declaredChecks.get(key);
  if (!e) {
    const p = check();
    const entry: DeclaredCheck = { p, at: now(), revalidating: false };
    declaredChecks.set(key, entry);
    p.catch(() => {
      if (declaredChecks.get(key) === entry) declaredChecks.delete(key);
    });
    return p;
  }
  if (!e.revalidating && now() - e.at > DECLARED_RECHECK_MS + RECHECK_JITTER_MS) {
    e.revalidating = true;
    check().then(() => {
      declaredChecks.set(key, { p: Promise.resolve(), at: now(), revalidating: false });
    }, (err: unknown) => {
      if (err instanceof HandlerError) {
        const refused = Promise.reject(err);
        refused.catch(() => undefined);
        declaredChecks.set(key, { p: refused, at: now(), revalidating: false });
        log({ level: 'ERROR', msg: 'the declared lifecycle journal failed its check again; later invocations are refused', error: err.message });
      } else {
        log({ level: 'WARNING', msg: 'the declared lifecycle journal could not be checked again; its last check stands', error: (err as Error).message });
        e.at = now();
        e.revalidating = false;
      }
    });
  }
  return e.p;
}

/** Forgets which tables were ensured (tests and the local runner, with a new server). */
export function resetJournalCache(): void {
  ensured.clear();
  declaredChecks.clear();
}

async function ensureTable(client: ddb.DynamoDBClient, table: string, sleep: (ms: number) => Promise<void>): Promise<void> {
  const m = sdk();
  const describe = async (): Promise<string | undefined> => {
    try {
      const out = await client.send(new m.DescribeTableCommand({ TableName: table }));
      return out.Table?.TableStatus;
    } catch (e) {
      if ((e as { name?: string }).name === 'ResourceNotFoundException') return undefined;
      throw e;
    }
  };
  let status = await describe();
  if (status !== undefined && status !== 'ACTIVE') {
    // Another stack's handler is creating it (CREATING) or it is being updated: wait for it, as the creator does.
    log({ msg: 'waiting for the lifecycle journal table to become ACTIVE', table, status });
    for (let i = 0; i < 120 && status !== 'ACTIVE'; i++) {
      await sleep(1000);
      status = await describe();
    }
    if (status !== 'ACTIVE') {
      throw new HandlerError(`the lifecycle journal table ${table} is ${status ?? 'gone'}, not ACTIVE, after 2 minutes (another stack's handler may be `
        + 'creating it); deploy again once it is ACTIVE');
    }
  } else if (status === undefined) {
    log({ msg: 'creating the lifecycle journal table', table });
    try {
      await client.send(new m.CreateTableCommand({
        TableName: table,
        BillingMode: 'PAY_PER_REQUEST',
        AttributeDefinitions: [{ AttributeName: 'pk', AttributeType: 'S' }, { AttributeName: 'sk', AttributeType: 'S' }],
        KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }, { AttributeName: 'sk', KeyType: 'RANGE' }],
        DeletionProtectionEnabled: true,
        Tags: [{ Key: 'created-by', Value: 'data-pipeline-integration-cdk' }],
      }));
    } catch (e) {
      // Another stack's handler created it at the same time.
      if ((e as { name?: string }).name !== 'ResourceInUseException') throw e;
    }
    for (let i = 0; i < 120; i++) {
      status = await describe();
      if (status === 'ACTIVE') break;
      await sleep(1000);
    }
    if (status !== 'ACTIVE') throw new HandlerError(`the lifecycle journal table ${table} did not become ACTIVE; deploy again`);
    try {
      await client.send(new m.UpdateContinuousBackupsCommand({
        TableName: table, PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
      }));
    } catch (e) {
      log({ level: 'WARNING', msg: 'could not enable point-in-time recovery on the journal table', table, error: messageOf(e) });
    }
  }
}

function journalError(table: string, e: unknown): Error {
  if (e instanceof HandlerError) return e;
  const name = (e as { name?: string }).name ?? 'Error';
  return new HandlerError(`the lifecycle journal (DynamoDB table ${table}) failed: ${name}: ${messageOf(e)}; `
    + 'check that the provider role may use the table, then deploy again');
}

/** Options of `dynamoJournal`. */
export interface JournalOptions {
  readonly table?: string;
  /** A DynamoDB-compatible endpoint (local runner, tests): static local credentials, region us-east-1. */
  readonly endpoint?: string;
  readonly sleep: (ms: number) => Promise<void>;
  /**
   * A table never created here (key schema checked): the CLI's tables and another table of an Update (journalAt).
   * Default: as the provider function's `environment` says (`journalMode`).
   */
  readonly provided?: boolean;
  /**
   * The provider function's environment, which says whether the table is declared, supplied or to be created
   * (`journalMode`). @default process.env
   */
  readonly environment?: JournalEnvironment;
  /** Create the table when it is missing whatever the environment says (tests and tools that seed a journal). */
  readonly create?: boolean;
  /**
   * The clock (epoch ms) of the resource leases' times and of the record IDs (the two are compared: a record made by a
   * request has an ID at or after the request's `requestSince`). @default Date.now
   */
  readonly now?: () => number;
}

const clients = new Map<string, ddb.DynamoDBClient>();

/** One journal table as the handler reaches it: its client, its name, and `run` (the table ensured first, failures named). */
export interface JournalTable {
  readonly client: ddb.DynamoDBClient;
  readonly table: string;
  readonly sdk: DdbModule;
  run<T>(fn: () => Promise<T>): Promise<T>;
}

/** Opens the journal table of `opts` (one client per endpoint per container; the table ensured once per container). */
export function openJournalTable(opts: JournalOptions): JournalTable {
  const table = opts.table && opts.table !== '' ? opts.table : DEFAULT_JOURNAL_TABLE;
  const m = sdk();
  const ck = opts.endpoint ?? '';
  let client = clients.get(ck);
  if (!client) {
    client = opts.endpoint
      ? new m.DynamoDBClient({ endpoint: opts.endpoint, region: 'us-east-1', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } })
      : new m.DynamoDBClient({});
    clients.set(ck, client);
  }
  const c = client;
  const mode = journalMode(table, opts.environment ?? process.env);
  const declared = mode === 'declared';
  // Created only when the app asked for it (journalTableName): every other table is checked, never made.
  const provided = declared || opts.provided === true || (mode !== 'create' && opts.create !== true);
  // A declared journal: its check is decided once, when the invocation opens the journal (never halfway through).
  const declaredReady = declared ? declaredCheck(`${ck}|${table}`, () => checkProvidedTable(c, table, opts.sleep, true), opts.now ?? Date.now) : undefined;
  const ready = (): Promise<void> => {
    if (declaredReady) return declaredReady;
    const k = `${ck}|${table}|${provided ? 'provided' : 'own'}`;
    let p = ensured.get(k);
    if (!p) {
      p = provided ? checkProvidedTable(c, table, opts.sleep) : ensureTable(c, table, opts.sleep);
      p.catch(() => ensured.delete(k));
      ensured.set(k, p);
    }
    return p;
  };
  const run = async <T>(fn: () => Promise<T>): Promise<T> => {
    try {
      await ready();
      return await fn();
    } catch (e) {
      throw journalError(table, e);
    }
  };
  return { client: c, table, sdk: m, run };
}
