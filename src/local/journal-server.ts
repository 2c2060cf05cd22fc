/**
 * A DynamoDB-compatible server (dynalite, memory backend) for the handler's lifecycle journal while
 * `dpi local-deploy` runs, persisted to a JSON file between runs.
 */
import { existsSync, mkdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { dirname } from 'node:path';
import { expireLeases } from './journal-leases';
import { DECLARED_JOURNAL_TAG, DeclaredTable, servePolicies } from './journal-policies';
import { createTableInput, indexes, JournalState, KeyElement, readJournalState, SavedTable, WireItem } from './journal-state';

export type { JournalState, SavedTable, WireItem } from './journal-state';
export { readJournalState } from './journal-state';
import { appendPrivateFile, writePrivateFile } from './private-files';

/** File name of the journal state beside the runner's state file. */
export const JOURNAL_STATE_FILE_NAME = 'journal.json';

/** Region the handler uses with a local journal endpoint. */
export const JOURNAL_LOCAL_REGION = 'us-east-1';

/** Options of `startJournalServer`. */
export interface JournalServerOptions {
  /**
   * JSON file the tables and items are restored from at start (when it exists) and saved to by
   * `flush()` and `stop()`. Without it, the journal lives in memory only.
   */
  readonly stateFile?: string;
  /** Values that must never be written into the state file (secrets): a flush that would is refused. */
  readonly forbidden?: readonly string[];
  /** How long a new table stays CREATING (tests of concurrent first use); default 0. */
  readonly createTableMs?: number;
  /**
   * Only read: the state file and its write-ahead log are read (the log replayed in memory) and never written, not even
   * by `stop()`, and every write is refused. For the commands that only read the local-deploy journal while a
   * `dpi local-deploy` may be writing it (a flush here would trim log lines that the runner appended meanwhile).
   */
  readonly readOnly?: boolean;
}

/** A running journal server. */
export interface JournalServer {
  /** `http://127.0.0.1:<port>`: the endpoint for the DynamoDB client (any credentials, region us-east-1). */
  readonly endpoint: string;
  /** Saves every table (definition and items) to the state file atomically (no-op without a state file). */
  flush(): Promise<void>;
  /**
   * Flushes only when the write-ahead log has grown past `maxLogBytes` (every write is already in the log before it
   * is answered, so nothing is lost meanwhile; the log is replayed at the next start). A flush reads and writes the
   * whole journal, so one per invocation would make a deploy of N resources cost O(N²).
   */
  checkpoint(maxLogBytes?: number): Promise<void>;
  /** Flushes, then closes the server. Idempotent. */
  stop(): Promise<void>;
  /**
   * Makes a declared journal's table (`LifecycleJournal`) as CloudFormation would, when it does not exist: key schema
   * `pk`/`sk`, its tags and its resource policy (which `GetResourcePolicy` then answers); an existing table is left as
   * it is (RETAIN). Resolves to whether it was made.
   */
  declareTable(table: DeclaredTable): Promise<boolean>;
}

interface DynaliteOptions {
  createTableMs?: number;
  deleteTableMs?: number;
  updateTableMs?: number;
}
type DynaliteFactory = (options: DynaliteOptions) => Server;

/**
 * Loads dynalite. It is not a dependency of the package: in the bundles of the command line and the runner, esbuild
 * replaces it by a shim that loads it from the vendor bundle (vendor-load.ts), where it is bundled with its memory
 * backend only (level-stub.ts: this server never gives dynalite a path); from the sources, from node_modules.
 */
function dynalite(): DynaliteFactory {
  // eslint-disable-next-line @typescript-eslint/no-require-imports, import/no-extraneous-dependencies
  return require('dynalite') as DynaliteFactory;
}

class DynamoError extends Error {
  constructor(readonly type: string, message: string) {
    super(message);
  }
}

/** Minimal DynamoDB JSON-protocol client (dynalite checks the shape of the signature, not its value). */
function caller(endpoint: string): (op: string, body: Record<string, unknown>) => Promise<Record<string, unknown>> {
  return async (op, body) => {
    const date = new Date().toISOString().replace(/[-:]/g, '').replace(/\.\d+/, '');
    const res = await fetch(`${endpoint}/`, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-amz-json-1.0',
        'x-amz-target': `DynamoDB_20120810.${op}`,
        'x-amz-date': date,
        'authorization': `AWS4-HMAC-SHA256 Credential=local/${date.slice(0, 8)}/${JOURNAL_LOCAL_REGION}/dynamodb/aws4_request, SignedHeaders=host;x-amz-date, Signature=0`,
      },
      body: JSON.stringify(body),
    });
    const text = await res.text();
    const parsed = (text ? JSON.parse(text) : {}) as Record<string, unknown>;
    if (!res.ok) {
      const type = String(parsed.__type ?? `HTTP ${res.status}`).split('#').pop() ?? 'Error';
      throw new DynamoError(type, `${op}: ${type}: ${String(parsed.message ?? parsed.Message ?? text)}`);
    }
    return parsed;
  };
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Operations that change tables or items (logged ahead for a killed runner). */
const WRITE_OPS = new Set(['CreateTable', 'DeleteTable', 'PutItem', 'UpdateItem', 'DeleteItem', 'BatchWriteItem', 'TransactWriteItems', 'TagResource']);

/**
 * Starts dynalite on 127.0.0.1 (free port, memory backend) and restores the tables and items of
 * `stateFile` when it exists. A corrupt state file fails the start with an error naming the file.
 */
export async function startJournalServer(options: JournalServerOptions = {}): Promise<JournalServer> {
  const stateFile = options.stateFile;
  const saved = stateFile && existsSync(stateFile) ? readJournalState(stateFile) : undefined;
  const server = dynalite()({ createTableMs: options.createTableMs ?? 0, deleteTableMs: 0, updateTableMs: 0 });
  // Resource policies (dynalite has none): table name to policy JSON, saved with the table.
  const policies = new Map<string, string>();
  servePolicies(server, policies, async (name) => {
    try {
      await call('DescribeTable', { TableName: name });
      return true;
    } catch {
      return false;
    }
  });
  // A container reuses its idle keep-alive connection as DynamoDB lets it: Node's 5 s default would close it under
  // a container that waited (its clock time-scaled, its work queued behind a hundred others) and its next request would
  // meet a reset socket.
  server.keepAliveTimeout = 10 * 60_000;
  server.headersTimeout = 10 * 60_000 + 5_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  // Write-ahead log: every successful write is appended to `<stateFile>.wal` before the handler sees its answer,
  // so a runner killed between two flushes loses nothing the handler was told is stored (DynamoDB's durability).
  // Only the handler's writes are logged: not the restore of the saved state, nor the replay of the log itself.
  const wal = stateFile ? `${stateFile}.wal` : undefined;
  let logging = false;
  const readOnly = options.readOnly === true;
  if (readOnly) refuseWrites(server, () => logging);
  if (wal && !readOnly) {
    mkdirSync(dirname(wal), { recursive: true });
    server.prependListener('request', (req: IncomingMessage, res: ServerResponse) => {
      const op = String(req.headers['x-amz-target'] ?? '').split('.').pop() ?? '';
      if (!logging || !WRITE_OPS.has(op)) return;
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      const end = res.end.bind(res) as (...args: unknown[]) => ServerResponse;
      res.end = ((...args: unknown[]) => {
        if (res.statusCode === 200) {
          const line = `${JSON.stringify({ op, body: JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') as unknown })}\n`;
          if (!(options.forbidden ?? []).some((f) => f.length > 0 && line.includes(f))) appendPrivateFile(wal, line);
        }
        return end(...args);
      }) as ServerResponse['end'];
    });
  }
  const endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const call = caller(endpoint);
  let closed = false;
  const close = (): Promise<void> => new Promise((resolve) => {
    if (closed) return resolve();
    closed = true;
    server.closeIdleConnections?.();
    server.close(() => resolve());
  });

  const waitActive = async (name: string): Promise<void> => {
    for (let i = 0; i < 200; i++) {
      const d = await call('DescribeTable', { TableName: name });
      if ((d.Table as Record<string, unknown> | undefined)?.TableStatus === 'ACTIVE') return;
      await sleep(10);
    }
    throw new Error(`the journal table ${name} did not become ACTIVE`);
  };

  const tableArn = async (name: string): Promise<string> => String(((await call('DescribeTable', { TableName: name })).Table as Record<string, unknown>).TableArn);
  const savedTags = async (arn: string): Promise<{ Tags?: Array<{ Key: string; Value: string }> }> => {
    const tags = ((await call('ListTagsOfResource', { ResourceArn: arn })).Tags as Array<{ Key: string; Value: string }> | undefined) ?? [];
    return tags.length > 0 ? { Tags: tags } : {};
  };

  if (saved) {
    try {
      for (const t of saved.tables) {
        await call('CreateTable', createTableInput(t));
        await waitActive(t.TableName);
        if (t.Tags && t.Tags.length > 0) await call('TagResource', { ResourceArn: await tableArn(t.TableName), Tags: t.Tags });
        if (t.ResourcePolicy !== undefined) policies.set(t.TableName, t.ResourcePolicy);
        for (let i = 0; i < t.Items.length; i += 25) {
          let requests: unknown[] = t.Items.slice(i, i + 25).map((Item) => ({ PutRequest: { Item } }));
          for (let attempt = 0; requests.length > 0; attempt++) {
            if (attempt > 20) throw new Error(`could not restore the items of ${t.TableName}`);
            const out = await call('BatchWriteItem', { RequestItems: { [t.TableName]: requests } });
            const unprocessed = (out.UnprocessedItems as Record<string, unknown[]> | undefined)?.[t.TableName];
            requests = unprocessed ?? [];
          }
        }
      }
    } catch (e) {
      await close();
      throw new Error(`cannot restore the journal from ${stateFile}: ${(e as Error).message}; fix it or delete it (the journal records in it are then lost)`);
    }
  }

  if (wal && existsSync(wal)) {
    // Writes of a run that ended before its last flush (a killed runner): applied again, in order, on the saved state.
    try {
      for (const line of readFileSync(wal, 'utf8').split('\n').filter((l) => l.trim() !== '')) {
        const { op, body } = JSON.parse(line) as { op: string; body: Record<string, unknown> };
        try {
          await call(op, body);
          if (op === 'CreateTable') await waitActive(String(body.TableName));
        } catch (e) {
          // Already applied before the last flush (the log is trimmed after each flush, not atomically with it).
          if (!(e instanceof DynamoError) || !['ConditionalCheckFailedException', 'ResourceInUseException', 'TransactionCanceledException'].includes(e.type)) throw e;
        }
      }
    } catch (e) {
      await close();
      throw new Error(`cannot replay the journal's write-ahead log ${wal}: ${(e as Error).message}; fix it or delete it (the journal records in it are then lost)`);
    }
  }

  if (!readOnly) await expireLeases(call);

  const snapshot = async (): Promise<JournalState> => {
    const names: string[] = [];
    let start: string | undefined;
    do {
      const out = await call('ListTables', start ? { ExclusiveStartTableName: start } : {});
      names.push(...((out.TableNames as string[] | undefined) ?? []));
      start = out.LastEvaluatedTableName as string | undefined;
    } while (start);
    const tables: SavedTable[] = [];
    for (const name of names.sort()) {
      let d: Record<string, unknown>;
      try {
        d = (await call('DescribeTable', { TableName: name })).Table as Record<string, unknown>;
      } catch (e) {
        if (e instanceof DynamoError && e.type === 'ResourceNotFoundException') continue; // deleted meanwhile
        throw e;
      }
      if (d.TableStatus === 'DELETING') continue;
      if (d.TableStatus !== 'ACTIVE') await waitActive(name);
      const items: WireItem[] = [];
      let key: Record<string, unknown> | undefined;
      do {
        const out = await call('Scan', { TableName: name, ...(key ? { ExclusiveStartKey: key } : {}) });
        items.push(...((out.Items as WireItem[] | undefined) ?? []));
        key = out.LastEvaluatedKey as Record<string, unknown> | undefined;
      } while (key);
      const billing = (d.BillingModeSummary as Record<string, unknown> | undefined)?.BillingMode === 'PAY_PER_REQUEST' ? 'PAY_PER_REQUEST' : 'PROVISIONED';
      const pt = d.ProvisionedThroughput as Record<string, unknown> | undefined;
      const table: SavedTable = {
        TableName: name,
        KeySchema: d.KeySchema as KeyElement[],
        AttributeDefinitions: d.AttributeDefinitions as SavedTable['AttributeDefinitions'],
        BillingMode: billing,
        ...(billing === 'PROVISIONED'
          ? {
            ProvisionedThroughput: {
              ReadCapacityUnits: Number(pt?.ReadCapacityUnits ?? 1) || 1,
              WriteCapacityUnits: Number(pt?.WriteCapacityUnits ?? 1) || 1,
            },
          }
          : {}),
        ...(indexes(d.GlobalSecondaryIndexes) ? { GlobalSecondaryIndexes: indexes(d.GlobalSecondaryIndexes) } : {}),
        ...(indexes(d.LocalSecondaryIndexes) ? { LocalSecondaryIndexes: indexes(d.LocalSecondaryIndexes) } : {}),
        ...(await savedTags(String(d.TableArn))),
        ...(policies.has(name) ? { ResourcePolicy: policies.get(name) } : {}),
        Items: items,
      };
      tables.push(table);
    }
    return { version: 1, tables };
  };

  // Flushes run one after the other (each writes the whole state); a flush asked for while another one waits to
  // start joins it (concurrent invocations ending together are saved by one write).
  let queue: Promise<void> = Promise.resolve();
  let waiting: Promise<void> | undefined;
  const flush = (): Promise<void> => {
    if (!stateFile || closed || readOnly) return queue;
    if (waiting) return waiting;
    const next = queue.catch(() => undefined).then(async () => {
      waiting = undefined;
      // The log's length before the snapshot: what is in the saved state afterwards and can be trimmed.
      const logged = wal && existsSync(wal) ? statSync(wal).size : 0;
      const text = `${JSON.stringify(await snapshot(), undefined, 1)}\n`;
      for (const f of options.forbidden ?? []) {
        if (f.length > 0 && text.includes(f)) throw new Error(`refusing to write a secret into the journal state file ${stateFile}`);
      }
      writePrivateFile(stateFile, text);
      if (wal && logged > 0) {
        const rest = readFileSync(wal).subarray(logged);
        if (rest.length === 0) rmSync(wal, { force: true });
        else writePrivateFile(wal, rest);
      }
    });
    queue = next;
    waiting = next;
    return next;
  };

  let stopping: Promise<void> | undefined;
  const stop = (): Promise<void> => {
    if (!stopping) {
      stopping = (async () => {
        try {
          await flush();
        } finally {
          await close();
        }
      })();
    }
    return stopping;
  };

  // The replayed writes are saved at once (and the log trimmed), then every later write is logged (refused when read-only).
  if (wal && existsSync(wal) && !readOnly) await flush();
  logging = true;
  const checkpoint = (maxLogBytes = DEFAULT_CHECKPOINT_BYTES): Promise<void> => {
    if (!wal) return flush();
    let size = 0;
    try {
      size = statSync(wal).size;
    } catch {
      size = 0;
    }
    return size > maxLogBytes ? flush() : Promise.resolve();
  };
  const declareTable = async (t: DeclaredTable): Promise<boolean> => {
    if (readOnly) throw new Error(`the local journal is open read-only here: ${t.tableName} cannot be made`);
    let made = false;
    try {
      const d = (await call('DescribeTable', { TableName: t.tableName })).Table as Record<string, unknown>;
      // Made by an earlier deploy of the journal's stack (tagged), kept; any other table of that name fails the create, as in CloudFormation.
      const tags = (await savedTags(String(d.TableArn))).Tags ?? [];
      if (!tags.some((g) => g.Key === DECLARED_JOURNAL_TAG)) {
        throw new Error(`Resource of type 'AWS::DynamoDB::Table' with identifier '${t.tableName}' already exists (made outside the journal's stack)`);
      }
      // The journal's stack deployed again: its table's policy is what the template says now (CloudFormation updates it).
      if (t.policy !== undefined && policies.get(t.tableName) !== t.policy) {
        policies.set(t.tableName, t.policy);
        await flush();
      }
    } catch (e) {
      if (!(e instanceof DynamoError) || e.type !== 'ResourceNotFoundException') throw e;
      const keys = [{ AttributeName: 'pk', KeyType: 'HASH' }, { AttributeName: 'sk', KeyType: 'RANGE' }];
      await call('CreateTable', createTableInput({
        TableName: t.tableName,
        KeySchema: keys,
        BillingMode: 'PAY_PER_REQUEST',
        Items: [],
        AttributeDefinitions: [{ AttributeName: 'pk', AttributeType: 'S' }, { AttributeName: 'sk', AttributeType: 'S' }],
      }));
      await waitActive(t.tableName);
      if (t.tags.length > 0) await call('TagResource', { ResourceArn: await tableArn(t.tableName), Tags: t.tags });
      if (t.policy !== undefined) policies.set(t.tableName, t.policy);
      made = true;
      await flush();
    }
    return made;
  };
  return { endpoint, flush, checkpoint, stop, declareTable };
}

/** Answers every write with a DynamoDB error once `started()` (the restore and the replay write before that). */
function refuseWrites(server: Server, started: () => boolean): void {
  const handlers = server.listeners('request') as Array<(req: IncomingMessage, res: ServerResponse) => void>;
  server.removeAllListeners('request');
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    const op = String(req.headers['x-amz-target'] ?? '').split('.').pop() ?? '';
    if (started() && WRITE_OPS.has(op)) {
      req.resume();
      res.statusCode = 400;
      res.setHeader('content-type', 'application/x-amz-json-1.0');
      res.end(JSON.stringify({ __type: 'com.amazon.coral.service#AccessDeniedException', message: `the local journal is open read-only here: ${op} refused` }));
      return;
    }
    for (const h of handlers) h.call(server, req, res);
  });
}

/** Size of the journal's write-ahead log past which `checkpoint()` saves the whole journal. */
export const DEFAULT_CHECKPOINT_BYTES = 1024 * 1024;
