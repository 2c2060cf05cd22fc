/**
 * `dpi orphans` and "do no harm": records the stack did not make (adopted, legacy pipelines) or that the user keeps
 * (removal policy RETAIN) are listed apart as retained and only released by --fix (no service call); released records
 * are never listed; a record the service refuses to show (403) is never taken as gone and never touched; a record the
 * stack made whose subscription is 404 or `invalid` is gone, as before. The journal is written by hand (a local
 * DynamoDB-compatible server), every stack is gone (a fake CloudFormation), the service is the emulator.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fakeCloudFormation } from './fake-cloudformation';
import { clearRequests, dpi, DpiRun, requests, testNoSecretsPrinted } from './helpers';
import { awsFailure } from '../../src/cli/commands/journal-access';
import { orphansSeams } from '../../src/cli/commands/orphans';
import { renderTable } from '../../src/cli/format';
import { DpiClient, endpointsFromBase } from '../../src/client';
import { DEFAULT_JOURNAL_TABLE } from '../../src/contract';
import { DEFAULT_REFRESH_TOKEN, RunningEmulator, startEmulator } from '../../src/emulator';
import { dynamoJournal, Journal, JournalRecord } from '../../src/handler/journal';
import { ResourceTypes } from '../../src/kinds';
import { CustomResourceEvent, HandlerModule } from '../../src/local/handler';
import { JournalServer, startJournalServer } from '../../src/local/journal-server';

jest.setTimeout(120_000);

let emu: RunningEmulator;
let server: JournalServer;
let journal: Journal;
let work: string;
let n = 0;
const client = (): DpiClient => new DpiClient({ endpoints: endpointsFromBase(emu.url), refreshToken: DEFAULT_REFRESH_TOKEN });

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), 'dpi-orphans-retained-'));
  emu = await startEmulator({ host: '127.0.0.1', port: 0 });
});
afterAll(async () => {
  await emu.stop();
  rmSync(work, { recursive: true, force: true });
});
beforeEach(async () => {
  await fetch(`${emu.url}/_emulator/reset`, { method: 'POST' });
  server = await startJournalServer({ stateFile: join(work, `journal-${++n}.json`) });
  journal = dynamoJournal({ create: true, table: 'dpi-lifecycle-journal', endpoint: server.endpoint, sleep: (ms) => new Promise((r) => setTimeout(r, ms)) });
  // Every stack of the journal is gone.
  orphansSeams.cloudFormation = fakeCloudFormation([]);
  orphansSeams.stdinIsTTY = () => false;
  orphansSeams.handler = undefined;
});
afterEach(async () => {
  orphansSeams.cloudFormation = undefined;
  orphansSeams.handler = undefined;
  await server.stop();
});

const orphans = (...extra: string[]): Promise<DpiRun> =>
  dpi(['orphans', '--endpoint', server.endpoint, '--region', 'us-east-1', '--table', DEFAULT_JOURNAL_TABLE, ...extra],
    { env: { DPI_BASE_URL: emu.url, DPI_REFRESH_TOKEN: DEFAULT_REFRESH_TOKEN } });

test('outside --local, --fix without --table is refused before anything is read or changed (the stacks\' table is not known)', async () => {
  await clearRequests(emu);
  const r = await dpi(['orphans', '--endpoint', server.endpoint, '--region', 'us-east-1', '--fix', '--yes'],
    { env: { DPI_BASE_URL: emu.url, DPI_REFRESH_TOKEN: DEFAULT_REFRESH_TOKEN } });
  expect(r.code).not.toBe(0);
  expect(r.stderr).toContain('dpi orphans --fix needs --table NAME outside --local');
  expect(await requests(emu)).toEqual([]);
});

/** A live product-3001 subscription of the default account (1001). */
async function subscription(name: string): Promise<string> {
  const s = await client().subscriptions.create({
    account: 1001,
    user: 2001,
    product: 3001,
    status: 'active',
    date_start: '2026-11-01T00:00:00Z',
    remote_identity: 362,
    storage_group: 501,
    name,
    product_parameters: { marketplace_id: 'ATVPDKIKX0DER', remote_identity_id: '362' },
  });
  return String(s.id);
}

/** A subscription record as the handler leaves it (`active`, its physical ID the subscription ID). */
async function subRecord(key: string, id: string, extra: Record<string, unknown> = {}, state = 'active'): Promise<JournalRecord<unknown>> {
  return journal.create(key, state, { product: 3001, identity: '362', subscriptionId: id, ...extra }, id);
}

interface Fixture {
  released: string;
  kept: string;
  adopted: string;
  adoptedDestroy: string;
  ended: string;
}

/**
 * The journal of a deleted stack `Gone`: a released record (never listed); a RETAIN record, an adopted one and a legacy
 * pipeline (retained); an adopted one with an explicit DESTROY, one whose subscription is `invalid`, one whose
 * subscription is unknown (404) (orphans); another account's subscription (refused).
 */
async function goneStack(): Promise<Fixture> {
  const f: Fixture = {
    released: await subscription('released'),
    kept: await subscription('kept'),
    adopted: await subscription('adopted'),
    adoptedDestroy: await subscription('adopted, destroy'),
    ended: await subscription('ended'),
  };
  await client().subscriptions.update(f.ended, { status: 'invalid' });
  await subRecord('Gone/Released', f.released, { removalPolicy: 'retain' }, 'released');
  await journal.claim('sub', f.released, 'Gone/Released');
  await subRecord('Gone/Kept', f.kept, { removalPolicy: 'retain' });
  await subRecord('Gone/Adopted', f.adopted, { adopted: true });
  await journal.create('Gone/Legacy', 'active', { identity: '364', applied: { queueArn: 'arn:aws:sqs:us-east-1:123456789012:legacy', types: ['ORDER_CHANGE'] } }, '8601');
  await subRecord('Gone/AdoptedDestroy', f.adoptedDestroy, { adopted: true, removalPolicy: 'destroy' });
  await subRecord('Gone/Ended', f.ended);
  await subRecord('Gone/Missing', '999999');
  // 8701 belongs to account 1002: the connection's account (1001) is refused (403).
  await subRecord('Gone/Foreign', '8701');
  return f;
}

interface Listed { key: string; verdict: string; holds: string; kept?: string; refused?: string; state: string }
interface Report { orphans: Listed[]; retained: Listed[]; refused: Listed[]; looseClaims: unknown[]; fixed?: Array<{ key: string; result: string }> }

const statesOf = async (): Promise<Record<string, string>> =>
  Object.fromEntries((await journal.scan()).records.map((r) => [r.key, r.state]));
const statusOf = (id: string | number): string | undefined => emu.state().subscriptions.find((s) => String(s.id) === String(id))?.status;
/** The emulator's requests other than reads and the token exchange. */
const changes = async (): Promise<string[]> =>
  (await requests(emu)).filter((r) => r.method !== 'GET' && r.path !== '/auth/api/ref').map((r) => `${r.method} ${r.path}`);

test('released records are not listed; retained (RETAIN, adopted, legacy) apart and not counted; 403 is refused; 404 / invalid are gone', async () => {
  const f = await goneStack();
  await clearRequests(emu);
  const r = await orphans();
  // The orphans (and the refused record) count; the retained ones do not.
  expect(r.code).toBe(1);
  expect(await changes()).toEqual([]);
  const journalAt = `table dpi-lifecycle-journal at ${server.endpoint}`;
  const head = ['KEY', 'TYPE', 'SERVICE IDS', 'HOLDS', 'STATE', 'WHY'];
  const refusedAt = r.stdout.indexOf('1 refused record');
  expect(r.stdout.slice(0, refusedAt)).toBe(`3 orphans in ${journalAt} (checked against CloudFormation (us-east-1)):\n`
    + renderTable(head, [
      ['Gone/AdoptedDestroy', 'Subscription', `sub ${f.adoptedDestroy}`, 'subscription (product 3001) active', 'active', 'stack gone'],
      ['Gone/Ended', 'Subscription', `sub ${f.ended}`, 'nothing live (subscription invalid)', 'active', 'stack gone'],
      ['Gone/Missing', 'Subscription', 'sub 999999', 'nothing live (subscription gone)', 'active', 'stack gone'],
    ])
    + '3 retained records (kept in the service: the user\'s to keep, not orphans; --fix releases them in the journal and ends nothing):\n'
    + renderTable([...head, 'KEPT'], [
      ['Gone/Adopted', 'Subscription', `sub ${f.adopted}`, 'subscription (product 3001) active', 'active', 'stack gone', 'adopted (it existed before the stack)'],
      ['Gone/Kept', 'Subscription', `sub ${f.kept}`, 'subscription (product 3001) active', 'active', 'stack gone', 'removal policy RETAIN'],
      ['Gone/Legacy', 'LegacyNotificationPipeline', 'sub 8601', 'legacy pipeline subscription active', 'active', 'stack gone',
        'adopted (it existed before the stack)'],
    ]));
  const refusedLines = r.stdout.slice(refusedAt).split('\n');
  expect(refusedLines[0]).toBe('1 refused record (the connection\'s account cannot read it: another account\'s record or a rotated secret; nothing '
    + 'done, --fix skips them):');
  expect(refusedLines[1]).toMatch(/^KEY +TYPE +SERVICE IDS +HOLDS +STATE +WHY +REFUSED *$/);
  expect(refusedLines[2]).toMatch(/^Gone\/Foreign +Subscription +sub 8701 +unknown: the service refused to show subscription 8701 +active +stack gone +subscription 8701: 403 /);
  expect(refusedLines.slice(3)).toEqual(['']);
  // A released record's claim is no loose claim although its subscription is live: it was handed back on purpose.
  expect(r.stdout).not.toContain('claim whose owner holds nothing');

  const json = JSON.parse((await orphans('--json')).stdout) as Report;
  expect(json.orphans.map((o) => [o.key, o.verdict])).toEqual([['Gone/AdoptedDestroy', 'orphan'], ['Gone/Ended', 'orphan'], ['Gone/Missing', 'orphan']]);
  expect(json.retained.map((o) => [o.key, o.verdict])).toEqual([['Gone/Adopted', 'retained'], ['Gone/Kept', 'retained'], ['Gone/Legacy', 'retained']]);
  expect(json.refused.map((o) => [o.key, o.verdict, o.holds])).toEqual([['Gone/Foreign', 'refused', 'unknown: the service refused to show subscription 8701']]);
  expect(json.looseClaims).toEqual([]);

  // Only retained records: exit 0.
  const only = await orphans('--prefix', 'Gone/Kept');
  expect(only.code).toBe(0);
  expect(only.stdout).toMatch(/^no orphans in /);
  expect(only.stdout).toContain('1 retained record (kept in the service');
});

test('--fix (the Delete events): retained records are released with RemovalPolicy retain, orphans ended with destroy, refused ones never sent', async () => {
  const f = await goneStack();
  const events: CustomResourceEvent[] = [];
  // A handler that does nothing: --fix closes the records itself (released / deleted).
  const fake: HandlerModule = {
    configureLocalRuntime: () => undefined,
    onEvent: async (event) => {
      events.push(event);
      return { PhysicalResourceId: event.PhysicalResourceId };
    },
  };
  orphansSeams.handler = fake;
  const refused = await orphans('--fix');
  expect(refused.code).toBe(2);
  expect(refused.stderr).toContain('refusing to remove 3 orphan(s) and release 3 retained record(s) without a confirmation: stdin is not a terminal; pass --yes');
  orphansSeams.stdinIsTTY = () => true;
  const asked: string[] = [];
  orphansSeams.ask = async (q) => { asked.push(q); return 'n'; };
  expect((await orphans('--fix')).code).toBe(2);
  expect(asked).toEqual(['Remove 3 orphan(s) the way a Delete would and release 3 retained record(s) (kept in the service; the journal only lets '
    + 'go of them)? [y/N] ']);
  expect(events).toEqual([]);

  await clearRequests(emu);
  const r = await orphans('--fix', '--yes', '--json');
  // The refused record is skipped: exit 1.
  expect(r.code).toBe(1);
  expect(await changes()).toEqual([]);
  const shape = events.map((e) => [e.RequestType, e.ResourceType, e.PhysicalResourceId, e.LogicalResourceId, e.ResourceProperties.RemovalPolicy,
    e.ResourceProperties.JournalKey]);
  // History requests and jobs first, then pipelines (legacy), then subscriptions.
  expect(shape).toEqual([
    ['Delete', ResourceTypes.LEGACY_NOTIFICATION_PIPELINE, '8601', 'Legacy', 'retain', 'Gone/Legacy'],
    ['Delete', ResourceTypes.SUBSCRIPTION, f.adopted, 'Adopted', 'retain', 'Gone/Adopted'],
    ['Delete', ResourceTypes.SUBSCRIPTION, f.adoptedDestroy, 'AdoptedDestroy', 'destroy', 'Gone/AdoptedDestroy'],
    ['Delete', ResourceTypes.SUBSCRIPTION, f.ended, 'Ended', 'destroy', 'Gone/Ended'],
    ['Delete', ResourceTypes.SUBSCRIPTION, f.kept, 'Kept', 'retain', 'Gone/Kept'],
    ['Delete', ResourceTypes.SUBSCRIPTION, '999999', 'Missing', 'destroy', 'Gone/Missing'],
  ]);
  const legacy = events[0];
  expect(legacy.StackId).toBe('arn:aws:cloudformation:local:000000000000:stack/Gone/dpi-orphans');
  expect(legacy.ResourceProperties).toMatchObject({
    SubscriptionId: '8601',
    RemoteIdentityId: '364',
    QueueArn: 'arn:aws:sqs:us-east-1:123456789012:legacy',
    NotificationTypes: ['ORDER_CHANGE'],
    Retired: 'false',
    RemovalPolicy: 'retain',
    JournalKey: 'Gone/Legacy',
    Connection: expect.objectContaining({ BaseUrl: emu.url }),
  });
  const report = JSON.parse(r.stdout) as Report;
  expect(Object.fromEntries(report.fixed!.map((x) => [x.key, x.result]))).toEqual({
    'Gone/Legacy': 'released',
    'Gone/Adopted': 'released',
    'Gone/Kept': 'released',
    'Gone/AdoptedDestroy': 'removed',
    'Gone/Ended': 'removed',
    'Gone/Missing': 'removed',
    'Gone/Foreign': 'skipped',
  });
  expect(await statesOf()).toEqual({
    'Gone/Adopted': 'released',
    'Gone/AdoptedDestroy': 'deleted',
    'Gone/Ended': 'deleted',
    'Gone/Foreign': 'active',
    'Gone/Kept': 'released',
    'Gone/Legacy': 'released',
    'Gone/Missing': 'deleted',
    'Gone/Released': 'released',
  });
  // Afterwards only the refused record is listed.
  const after = JSON.parse((await orphans('--json')).stdout) as Report;
  expect([after.orphans.length, after.retained.length, after.refused.map((o) => o.key)]).toEqual([0, 0, ['Gone/Foreign']]);
});

test('a retained record without a physical ID, or of a type without a removal policy, is released in the journal alone', async () => {
  const sub = await subscription('orders');
  await journal.create('Gone/AdoptedHistory', 'active', { request: '[]', subscriptionId: sub, adopted: true }, 'h-missing');
  await journal.create('Gone/Adopting', 'adopting', { product: 3001, identity: '362', adopted: true });
  orphansSeams.handler = {
    configureLocalRuntime: () => undefined,
    onEvent: async () => {
      throw new Error('no Delete is sent');
    },
  };
  const r = await orphans('--fix', '--yes');
  expect(r.code).toBe(0);
  expect(r.stdout).toMatch(/^released  Gone\/AdoptedHistory \([^)]+\): kept in the service$/m);
  expect(r.stdout).toMatch(/^released  Gone\/Adopting \([^)]+\): kept in the service$/m);
  expect(await statesOf()).toEqual({ 'Gone/AdoptedHistory': 'released', 'Gone/Adopting': 'released' });
  expect(statusOf(sub)).toBe('active');
});

test('a handler that ends a retained record instead of releasing it (an older bundle) is reported as a failure', async () => {
  const sub = await subscription('kept');
  await subRecord('Gone/Kept', sub, { removalPolicy: 'retain' });
  orphansSeams.handler = {
    configureLocalRuntime: () => undefined,
    onEvent: async (event) => {
      const [rec] = await journal.records(String(event.ResourceProperties.JournalKey));
      await journal.save(rec, 'deleted', rec.doc);
      return { PhysicalResourceId: event.PhysicalResourceId };
    },
  };
  const r = await orphans('--fix', '--yes');
  expect(r.code).toBe(2);
  expect(r.stderr).toContain('1 record(s) could not be removed or released: Gone/Kept: the handler\'s Delete with RemovalPolicy retain ended the record '
    + 'instead of releasing it');
});

test('--fix with the bundled handler: retained records are released without a service call; orphans are ended; refused untouched', async () => {
  const f = await goneStack();
  await clearRequests(emu);
  const r = await orphans('--fix', '--yes');
  expect(r.stderr).not.toContain('ended the record instead of releasing it');
  expect(r.code).toBe(1);
  expect(r.stdout).toMatch(/^skipped  Gone\/Foreign \([^)]+\): refused \(subscription 8701: 403 .*\): the connection's account cannot read it; nothing done$/m);
  // The only changing call: the adopted subscription whose removal policy is an explicit DESTROY is ended.
  expect(await changes()).toEqual([`PATCH /v2/sub/${f.adoptedDestroy}`]);
  expect([f.kept, f.adopted, f.released, '8601', '8701'].map(statusOf)).toEqual(['active', 'active', 'active', 'active', 'active']);
  expect(statusOf(f.adoptedDestroy)).toBe('invalid');
  expect(await statesOf()).toEqual({
    'Gone/Adopted': 'released',
    'Gone/AdoptedDestroy': 'deleted',
    'Gone/Ended': 'deleted',
    'Gone/Foreign': 'active',
    'Gone/Kept': 'released',
    'Gone/Legacy': 'released',
    'Gone/Missing': 'deleted',
    'Gone/Released': 'released',
  });
});

test('without AWS credentials it says so (not "the provider role"), for the journal table and for CloudFormation', async () => {
  const saved = { ...process.env };
  for (const k of Object.keys(process.env)) {
    if (/^AWS_(ACCESS_KEY_ID|SECRET_ACCESS_KEY|SESSION_TOKEN|PROFILE|DEFAULT_PROFILE|CONTAINER_|WEB_IDENTITY|ROLE_ARN|CREDENTIAL)/.test(k)) delete process.env[k];
  }
  process.env.AWS_EC2_METADATA_DISABLED = 'true';
  process.env.AWS_SHARED_CREDENTIALS_FILE = join(work, 'no-credentials');
  process.env.AWS_CONFIG_FILE = join(work, 'no-config');
  try {
    const env = { DPI_BASE_URL: emu.url, DPI_REFRESH_TOKEN: DEFAULT_REFRESH_TOKEN };
    const table = await dpi(['orphans', '--region', 'us-east-1', '--table', 'dpi-orphans-no-credentials'], { env });
    expect(table.code).toBe(2);
    expect(table.stderr).toContain('dpi orphans has no AWS credentials to read the lifecycle journal (DynamoDB table dpi-orphans-no-credentials (us-east-1)): '
      + 'the AWS SDK\'s credential chain found none (AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, AWS_PROFILE or --profile');
    expect(table.stderr).toContain('--local (the dpi local-deploy journal) and --endpoint URL (a DynamoDB-compatible journal) need no AWS credentials');
    expect(table.stderr).not.toContain('provider role');

    // The journal at an endpoint, the stacks from CloudFormation (the SDK's client): no credentials either.
    orphansSeams.cloudFormation = undefined;
    await subRecord('Gone/Kept', await subscription('kept'), { removalPolicy: 'retain' });
    const stacks = await orphans();
    expect(stacks.code).toBe(2);
    expect(stacks.stderr).toContain('dpi orphans has no AWS credentials to read the stacks (CloudFormation)');
  } finally {
    process.env = saved;
  }
});

test.each([
  ['CredentialsProviderError: Could not load credentials from any providers', 'dpi orphans has no AWS credentials to read the table: '],
  ['Error: Region is missing', 'dpi orphans has no AWS region to read the table: pass --region or set AWS_REGION'],
  ['ExpiredTokenException: The security token included in the request is expired', 'the AWS credentials of dpi orphans were rejected'],
  ['AccessDeniedException: User x is not authorized to perform: dynamodb:Scan', 'the AWS credentials of dpi orphans may not read the table'],
  ['Error: getaddrinfo ENOTFOUND dynamodb.xx-nowhere-1.amazonaws.com', 'dpi orphans cannot reach AWS to read the table (dynamodb.xx-nowhere-1.amazonaws.com is not '
    + 'found): check --region'],
  ['InternalServerError: the service is unavailable', 'dpi orphans read it with the AWS SDK\'s credential chain: check the network'],
])('an AWS failure of the command (%s) is said for the CLI, never as the provider role\'s', (cause, said) => {
  // As the journal reports it to the handler.
  const e = new Error(`the lifecycle journal (DynamoDB table t) failed: ${cause}; check that the provider role may use the table, then deploy again`);
  const m = awsFailure(e, 'the table', 'dpi orphans').message;
  expect(m).toContain(said);
  expect(m).not.toContain('provider role');
});

testNoSecretsPrinted();

describe('--fix when the service\'s rate limit gives a Delete its turn after the run\'s deadline (no waiter in front of the handler)', () => {
  const late = 'Delete of Ended failed: PATCH /v2/sub/1 failed: deadline reached before the request was sent: the request budget shared by the '
    + 'clients of the service address gives it its turn in 700 s';

  test('the same Delete runs again and goes on from what it did', async () => {
    const sub = await subscription('ended');
    await subRecord('Gone/Ended', sub, { removalPolicy: 'destroy' });
    const requestIds: string[] = [];
    orphansSeams.handler = {
      configureLocalRuntime: () => undefined,
      onEvent: async (event) => {
        requestIds.push(event.RequestId);
        if (requestIds.length === 1) throw new Error(late);
        return { PhysicalResourceId: event.PhysicalResourceId };
      },
    };
    const r = await orphans('--fix', '--yes');
    expect(r.code).toBe(0);
    expect(r.stderr).toContain('Gone/Ended: the service\'s rate limit gives the Delete\'s next call its turn after this run\'s 10 minutes: running it again (2 of 3');
    expect(requestIds).toHaveLength(2);
    expect(new Set(requestIds).size).toBe(1); // the same event: the handler's duplicate-delivery path
    expect(await statesOf()).toEqual({ 'Gone/Ended': 'deleted' });
  });

  test('still no turn after three runs: fails saying why and what to run, without a stack trace, the record left as the handler left it', async () => {
    const sub = await subscription('ended');
    await subRecord('Gone/Ended', sub, { removalPolicy: 'destroy' });
    let runs = 0;
    orphansSeams.handler = {
      configureLocalRuntime: () => undefined,
      onEvent: async () => {
        runs++;
        throw new Error(late);
      },
    };
    const r = await orphans('--fix', '--yes');
    expect(runs).toBe(3);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('Gone/Ended: the service\'s rate limit did not give its Delete a turn within 3 runs of 10 minutes');
    expect(r.stderr).toContain('nothing is half-ended: what it did is in the lifecycle journal');
    expect(r.stderr).toContain('Run \'dpi orphans --fix\' again once the deploys and tools that share the account\'s rate limit have finished');
    expect(r.stderr).not.toMatch(/^\s+at /m);
    expect(await statesOf()).toEqual({ 'Gone/Ended': 'active' });
    expect(statusOf(sub)).toBe('active');
  });

  test('any other failure of the Delete is not run again', async () => {
    const sub = await subscription('ended');
    await subRecord('Gone/Ended', sub, { removalPolicy: 'destroy' });
    let runs = 0;
    orphansSeams.handler = {
      configureLocalRuntime: () => undefined,
      onEvent: async () => {
        runs++;
        throw new Error('Delete of Ended failed: the service refused it');
      },
    };
    expect((await orphans('--fix', '--yes')).code).toBe(2);
    expect(runs).toBe(1);
  });
});
