import { randomUUID } from 'node:crypto';
import { AttributeValue, CreateTableCommand, DescribeTableCommand, DynamoDBClient, PutItemCommand, ScanCommand } from '@aws-sdk/client-dynamodb';
import {
  BOUND_CONNECTION_FIELDS, BOUND_CONNECTIONS_ENV, BOUND_RUN_ENV, BOUND_STACK_ID_ENV, BOUND_STACKS_ENV, CREATED_JOURNAL_TABLES_ENV,
  DECLARED_JOURNAL_TABLES_ENV,
} from '../../src/contract';
import { DEFAULT_CLOUD_ACCOUNT, DEFAULT_REFRESH_TOKEN, EmulatorFixtures, RateLimit, ReadMode, RunningEmulator, startEmulator } from '../../src/emulator';
import { CfnEvent, configureLocalRuntime, isComplete, IsCompleteResult, onEvent, OnEventResult } from '../../src/handler';
import type { StackLineage } from '../../src/handler/binding';
import { PROVIDED_JOURNAL_TABLES_ENV } from '../../src/handler/journal-provided';
import { JournalServer, JournalServerOptions, startJournalServer } from '../../src/local/journal-server';

export const STACK_ID = 'arn:aws:cloudformation:us-east-1:123456789012:stack/HandlerTest/11111111-2222-3333-4444-555555555555';
export const SECRET_ARN = 'arn:aws:secretsmanager:us-east-1:123456789012:secret:dpi-refresh-token-AbCdEf';
export const ROLE = `arn:aws:iam::${DEFAULT_CLOUD_ACCOUNT}:role/dpi-management`;
export const EB_ROLE = `arn:aws:iam::${DEFAULT_CLOUD_ACCOUNT}:role/dpi-eventbus-to-firehose`;

/** Properties of a minimal seller notification pipeline of identity 362 (one type, PartialFailure FAIL). */
export const SELLER_PIPELINE = {
  RemoteIdentityId: '362',
  AccountType: 'seller',
  NotificationTypes: ['ORDER_CHANGE'],
  RoleArn: ROLE,
  EbToFhRoleArn: EB_ROLE,
  DeploymentRegion: 'us-east-1',
  PartialFailure: 'FAIL',
};

/**
 * How the emulator answers reads in this run: `minimal` (only what the spec shows, the default) or `vendor` (the
 * vendor's documented shapes). The integration tier runs the handler and local suites in both
 * (`npm run test:vendor-reads`: `DPI_EMULATOR_READS=vendor`).
 */
export const TEST_READS: ReadMode = process.env.DPI_EMULATOR_READS === 'vendor' ? 'vendor' : 'minimal';
/** `DPI_EMULATOR_PAGINATION=off`: the emulator answers every list unpaginated (`pagination: false`, a service that does not paginate). */
export const TEST_PAGINATION = process.env.DPI_EMULATOR_PAGINATION !== 'off';

export interface RequestLogEntry { method: string; path: string; status: number; query: Record<string, unknown> }

/** One item of the lifecycle journal table, as the test reads it (`doc` parsed). */
export interface JournalItem {
  /** Resource key (`<stack name>/<logical ID>`) or `claim#<kind>#<service ID>`. */
  pk: string;
  /** Record ID, or `claim`. */
  sk: string;
  state?: string;
  physicalId?: string;
  /** The resource key that owns a claim. */
  owner?: string;
  doc?: any;
}

/** An emulator on 127.0.0.1 plus the handler configured against it, with captured logs and a fake sleep. */
export class HandlerHarness {
  static async start(opts: {
    fixtures?: EmulatorFixtures;
    callerAccount?: string;
    secretString?: string;
    rateLimit?: RateLimit | 'off';
    reads?: ReadMode;
    /** The journal server's options (e.g. `createTableMs`: how long each new journal table stays CREATING). */
    journal?: JournalServerOptions;
  } = {}): Promise<HandlerHarness> {
    const emu = await startEmulator({
      host: '127.0.0.1', port: 0, fixtures: opts.fixtures, reads: opts.reads ?? TEST_READS, rateLimit: opts.rateLimit, pagination: TEST_PAGINATION,
    });
    const journal = await startJournalServer(opts.journal);
    const h = new HandlerHarness(emu, journal);
    h.callerAccount = opts.callerAccount ?? DEFAULT_CLOUD_ACCOUNT;
    h.secretString = opts.secretString ?? JSON.stringify({ refreshToken: DEFAULT_REFRESH_TOKEN });
    h.configure();
    h.logSpy = jest.spyOn(console, 'log').mockImplementation((...args: unknown[]) => {
      h.logs.push(args.map(String).join(' '));
    });
    return h;
  }

  /** Journal table of the current test (a new one after each reset: the journal starts empty with the emulator). */
  journalTable = 'dpi-journal-0';
  private journalTables = 0;

  callerAccount = DEFAULT_CLOUD_ACCOUNT;
  secretString = '';
  readonly logs: string[] = [];
  readonly failures: string[] = [];
  readonly slept: number[] = [];
  secretReads = 0;
  /**
   * The handler's clock (LocalRuntime.now) once a test sets it (e.g. `h.clock = Date.now()`): every sleep then moves it
   * by its length, so waiting for a lease to expire takes no real time. Undefined (the real clock) after each reset.
   */
  clock: number | undefined;

  /** Called by the fake sleep (e.g. to move the emulator clock). */
  onSleep: ((ms: number) => Promise<void>) | undefined;
  /**
   * What the harness's provider serves (its function's environment, src/handler/binding.ts): the stacks, and the
   * connections besides the harness's own (which is bound with every journal table the harness has had). Tests change
   * them to bind other stacks or connections.
   */
  bound: { stacks: string[]; connections: Array<Record<string, string>>; stackId?: string } = { stacks: ['HandlerTest'], connections: [] };
  /**
   * Whether the app asked the handler to create the journal tables (`journalTableName`: `DPI_CREATED_JOURNAL_TABLES`
   * lists them); false: no table is listed, so none may be created.
   */
  createsJournal = true;
  /** The run bound to the scheduled functions (`DPI_BOUND_RUN`); default: the harness's connection alone. */
  boundRun?: Record<string, unknown>;
  /** What CloudFormation says of each stack (DescribeStacks: parent and root): the nested-stack proof reads it. */
  lineage: Record<string, StackLineage> = {};
  logSpy: jest.SpyInstance | undefined;
  private journalClient: DynamoDBClient | undefined;

  private constructor(public readonly emu: RunningEmulator, public readonly journal: JournalServer) {}

  /** Binds the scheduled functions to `run` (as their construct would: all but the subscription list) and returns it. */
  bindRun<T extends object>(run: T): T {
    const { Subscriptions: _unbound, Identities: _ids, Monitor: _monitor, ...bound } = run as Record<string, unknown>;
    this.boundRun = bound;
    return run;
  }

  /** The handler's clock: `clock`, else the real one. */
  now(): number {
    return this.clock ?? Date.now();
  }

  configure(): void {
    configureLocalRuntime(this.runtime());
  }

  /** The harness's local runtime (tests replace a part of it). */
  runtime(): Parameters<typeof configureLocalRuntime>[0] {
    return {
      readSecret: async (arn) => {
        if (arn !== SECRET_ARN) throw new Error(`unexpected secret ${arn}`);
        this.secretReads++;
        return this.secretString;
      },
      callerAccountId: async () => this.callerAccount,
      journalEndpoint: this.journal.endpoint,
      environment: () => this.environment(),
      describeStack: async (id) => this.lineage[id],
      sleep: async (ms) => {
        this.slept.push(ms);
        if (this.clock !== undefined) this.clock += ms;
        if (this.onSleep) await this.onSleep(ms);
      },
      now: () => this.now(),
    };
  }

  /**
   * The environment of the harness's provider function: the harness's connection with each journal table it has had
   * (a rollback after a reset sends an earlier one), the connections of `bound` and the stacks of `bound`.
   */
  environment(): Record<string, string> {
    const tables = Array.from({ length: this.journalTables + 1 }, (_, i) => `dpi-journal-${i}`);
    const conns: Array<Record<string, string>> = [...tables.map((t) => ({ ...this.connection, JournalTableName: t })), ...this.bound.connections];
    return {
      [BOUND_CONNECTIONS_ENV]: JSON.stringify(conns.map((c) => BOUND_CONNECTION_FIELDS.map((f) => c[f] ?? 'dpi-lifecycle-journal'))),
      [BOUND_STACKS_ENV]: JSON.stringify(this.bound.stacks),
      [BOUND_STACK_ID_ENV]: this.bound.stackId ?? STACK_ID,
      // A scheduled function's bound run (SubscriptionMonitor, DriftMonitor).
      [BOUND_RUN_ENV]: JSON.stringify(this.boundRun ?? { Connection: this.connection }),
      // The harness's journal tables are the handler's to create (journalTableName), unless a test lists a table as
      // supplied or declared (in process.env, as a Lambda function's environment would hold them).
      [CREATED_JOURNAL_TABLES_ENV]: this.createsJournal ? [...tables, ...this.bound.connections.map((c) => c.JournalTableName ?? '')].join(',') : '',
      ...Object.fromEntries([PROVIDED_JOURNAL_TABLES_ENV, DECLARED_JOURNAL_TABLES_ENV]
        .flatMap((k) => (process.env[k] === undefined ? [] : [[k, process.env[k] as string]]))),
    };
  }

  /** Every item of the current test's journal table (records and claims); empty before the handler created it. */
  async journalItems(): Promise<JournalItem[]> {
    this.journalClient ??= new DynamoDBClient({
      endpoint: this.journal.endpoint, region: 'us-east-1', credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    });
    const out: JournalItem[] = [];
    let start: Record<string, AttributeValue> | undefined;
    try {
      do {
        const page = await this.journalClient.send(new ScanCommand({ TableName: this.journalTable, ConsistentRead: true, ExclusiveStartKey: start }));
        for (const i of page.Items ?? []) {
          out.push({
            pk: i.pk.S!,
            sk: i.sk.S!,
            state: i.state?.S,
            physicalId: i.physicalId?.S,
            owner: i.owner?.S,
            doc: i.doc?.S !== undefined ? JSON.parse(i.doc.S) : undefined,
          });
        }
        start = page.LastEvaluatedKey;
      } while (start);
    } catch (e) {
      if ((e as { name?: string }).name === 'ResourceNotFoundException') return [];
      throw e;
    }
    return out;
  }

  /** The journal records of a resource key (default: `HandlerTest/<logical ID>`), oldest first. */
  async journalRecords(logicalId = 'Resource'): Promise<JournalItem[]> {
    const key = logicalId.includes('/') ? logicalId : `HandlerTest/${logicalId}`;
    return (await this.journalItems()).filter((i) => i.pk === key).sort((a, b) => (a.sk < b.sk ? -1 : 1));
  }

  /**
   * Writes a claim into the current test's journal table as the handler would (creating the table first when needed):
   * resource `owner` (default `HandlerTest/Resource`) owns service record `kind`/`id`. For records the stack made before
   * the test's own events.
   */
  async seedClaim(kind: string, id: string, owner = 'HandlerTest/Resource'): Promise<void> {
    this.journalClient ??= new DynamoDBClient({
      endpoint: this.journal.endpoint, region: 'us-east-1', credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    });
    try {
      await this.journalClient.send(new CreateTableCommand({
        TableName: this.journalTable,
        BillingMode: 'PAY_PER_REQUEST',
        AttributeDefinitions: [{ AttributeName: 'pk', AttributeType: 'S' }, { AttributeName: 'sk', AttributeType: 'S' }],
        KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }, { AttributeName: 'sk', KeyType: 'RANGE' }],
      }));
    } catch (e) {
      if ((e as { name?: string }).name !== 'ResourceInUseException') throw e;
    }
    for (let i = 0; i < 100; i++) {
      const d = await this.journalClient.send(new DescribeTableCommand({ TableName: this.journalTable }));
      if (d.Table?.TableStatus === 'ACTIVE') break;
      await new Promise((r) => setTimeout(r, 20));
    }
    await this.journalClient.send(new PutItemCommand({
      TableName: this.journalTable,
      Item: { pk: { S: `claim#${kind}#${id}` }, sk: { S: 'claim' }, owner: { S: owner }, updatedAt: { S: new Date().toISOString() } },
    }));
  }

  /** The owner (resource key) of a claim of service record `kind`/`id` in the journal; undefined when unclaimed. */
  async journalOwner(kind: string, id: string): Promise<string | undefined> {
    return (await this.journalItems()).find((i) => i.pk === `claim#${kind}#${id}`)?.owner;
  }

  async stop(): Promise<void> {
    this.journalClient?.destroy();
    this.logSpy?.mockRestore();
    await this.emu.stop();
    await this.journal.stop();
  }

  /** Resets the emulator (unless kept) and starts a new, empty journal table. */
  async reset(opts: { keepEmulator?: boolean } = {}): Promise<void> {
    if (!opts.keepEmulator) await this.admin('POST', '/reset');
    this.journalTable = `dpi-journal-${++this.journalTables}`;
    this.clock = undefined;
    this.createsJournal = true;
  }

  get connection(): Record<string, string> {
    const u = this.emu.url;
    return {
      JournalTableName: this.journalTable,
      BaseUrl: u,
      SubscriptionsUrl: u,
      AccountUrl: u,
      UserUrl: u,
      RemoteIdentityUrl: u,
      AuthUrl: u,
      RefreshTokenSecretArn: SECRET_ARN,
    };
  }

  event(resourceType: string, requestType: CfnEvent['RequestType'], props: Record<string, unknown>,
    extra: Partial<CfnEvent> = {}): CfnEvent {
    return {
      RequestType: requestType,
      ServiceToken: 'arn:aws:lambda:us-east-1:123456789012:function:provider',
      ResponseURL: 'https://cloudformation-custom-resource-response.example/abc',
      StackId: STACK_ID,
      RequestId: randomUUID(),
      LogicalResourceId: 'Resource',
      ResourceType: resourceType,
      ResourceProperties: { ServiceToken: 'arn:aws:lambda:us-east-1:123456789012:function:provider', Connection: this.connection, ...props },
      ...extra,
    };
  }

  /** Calls onEvent; a failure is recorded (for the secret check) and rethrown. */
  async onEvent(event: CfnEvent, remainingMs = 600_000): Promise<OnEventResult> {
    try {
      return await onEvent(event, { getRemainingTimeInMillis: () => remainingMs });
    } catch (e) {
      this.failures.push((e as Error).message);
      throw e;
    }
  }

  async isComplete(event: CfnEvent): Promise<IsCompleteResult> {
    try {
      return await isComplete(event, { getRemainingTimeInMillis: () => 600_000 });
    } catch (e) {
      this.failures.push((e as Error).message);
      throw e;
    }
  }

  /** Calls onEvent expecting a failure; returns the reason. */
  async fails(event: CfnEvent): Promise<string> {
    let reason: string | undefined;
    try {
      await this.onEvent(event);
    } catch (e) {
      reason = (e as Error).message;
    }
    if (reason === undefined) throw new Error('expected onEvent to fail');
    return reason;
  }

  async admin(method: string, path: string, body?: unknown): Promise<any> {
    const res = await fetch(`${this.emu.url}/_emulator${path}`, {
      method,
      headers: body === undefined ? {} : { 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    if (res.status >= 400) throw new Error(`admin ${method} ${path}: ${res.status} ${text}`);
    return text ? JSON.parse(text) : undefined;
  }

  /** Calls the service directly as account 1001 (test setup only). */
  async api(method: string, path: string, body?: unknown): Promise<any> {
    const auth = await fetch(`${this.emu.url}/auth/api/ref`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ data: { type: 'APIAuth', attributes: { refresh_token: DEFAULT_REFRESH_TOKEN } } }),
    });
    const token = ((await auth.json()) as any).data.attributes.token as string;
    const res = await fetch(`${this.emu.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : undefined };
  }

  /** Creates an active subscription of account 1001 / user 2001 directly (test setup only); returns its ID. */
  async subscribe(product: number, remoteIdentity: number, params: Record<string, string>, extra: Record<string, unknown> = {}): Promise<string> {
    const r = await this.api('POST', '/v2/sub', {
      data: {
        type: 'Subscription',
        attributes: {
          account: 1001,
          user: 2001,
          product,
          status: 'active',
          date_start: '2026-01-01T00:00:00Z',
          remote_identity: remoteIdentity,
          product_parameters: params,
          ...extra,
        },
      },
    });
    return r.body.data.id;
  }

  state(): any {
    return this.emu.state();
  }

  async requests(): Promise<RequestLogEntry[]> {
    return (await this.admin('GET', '/requests')) as RequestLogEntry[];
  }

  async clearRequests(): Promise<void> {
    await this.admin('DELETE', '/requests');
  }

  /** Requests other than the token exchange and GETs. */
  async changingRequests(): Promise<string[]> {
    return (await this.requests()).filter((r) => r.method !== 'GET' && r.path !== '/auth/api/ref').map((r) => `${r.method} ${r.path} ${r.status}`);
  }

  /** Asserts that no captured log line or failure contains the refresh token, the secret string or a JWT. */
  assertNoSecrets(): void {
    const all = [...this.logs, ...this.failures].join('\n');
    expect(all).not.toContain(DEFAULT_REFRESH_TOKEN);
    expect(all).not.toContain(this.secretString);
    expect(all).not.toMatch(/eyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+/);
    expect(all.toLowerCase()).not.toContain('authorization');
  }
}

/** `YYYY-MM-DD` of `days` days before now (UTC). */
export function daysAgo(days: number): string {
  return new Date(Date.now() - days * 86_400_000).toISOString().slice(0, 10);
}

/**
 * The per-file lifecycle of the handler tests: starts a harness before all tests and hands it to `bind`; after
 * all tests, asserts that no secret was logged and stops it. With `resetEach`, the emulator is reset before each
 * test (before any `beforeEach` the file registers afterwards).
 */
export function useHandlerHarness(bind: (h: HandlerHarness) => void, opts: { resetEach?: boolean } = {}): void {
  let h: HandlerHarness;
  beforeAll(async () => {
    h = await HandlerHarness.start();
    bind(h);
  });
  afterAll(async () => {
    h.assertNoSecrets();
    await h.stop();
  });
  if (opts.resetEach) {
    beforeEach(async () => {
      await h.reset();
    });
  }
}
