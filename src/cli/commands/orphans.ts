/**
 * `dpi orphans`: the lifecycle journal's records that still hold something in the service while their stack or
 * logical resource no longer exists (CloudFormation says so, or the `dpi local-deploy` state with --local), with what
 * each still holds; `--fix` removes them the way a Delete would, by running the handler's own Delete in process.
 * See docs/cli.md ("dpi orphans") and docs/handler.md ("Recovery paths and residual cases").
 */
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { DpiClient } from '../../client';
import { ResourceTypes } from '../../contract';
import { DEFAULT_REFRESH_TOKEN } from '../../emulator/fixtures';
import { Journal, JournalClaim, JournalRecord } from '../../handler/journal';
import { defaultHandlerPath, HandlerModule, invokeWithContext, loadHandler } from '../../local/handler';
import { LocalState, lockState, readState, ResourceState, writeState } from '../../local/state';
import { ConnectionFlags, connect, resolveEndpoints } from '../connection';
import { RunContext } from '../context';
import { CloudFormationSender, cloudFormationClient, deployedResources, DeployedStack, journalKeyOf, resourcesByJournalKey } from '../deployed';
import { CliError, EXIT, toCliError } from '../errors';
import { renderTable } from '../format';
import { loadPart } from '../lazy';
import { JournalFlags, openJournal } from './journal';

export interface OrphansFlags extends ConnectionFlags, JournalFlags {
  prefix?: string;
  fix?: boolean;
  yes?: boolean;
  handlerLogs?: boolean;
}

/**
 * Test seams: a CloudFormation client instead of the SDK's, and the interactive confirmation (default: stdin is a
 * terminal, and a `y` answer on it).
 */
export const orphansSeams: {
  cloudFormation?: CloudFormationSender;
  stdinIsTTY: () => boolean;
  ask: (question: string) => Promise<string>;
} = {
  stdinIsTTY: () => process.stdin.isTTY === true,
  ask: (question) => new Promise((resolve) => {
    // Required here: readline is loaded only when a confirmation is asked (not at the start-up of every command).
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const { createInterface } = require('node:readline') as typeof import('node:readline');
    const rl = createInterface({ input: process.stdin, output: process.stderr });
    rl.question(question, (answer) => {
      rl.close();
      resolve(answer);
    });
  }),
};

/** States in which a record holds nothing. */
const DONE = new Set(['deleted', 'abandoned']);
const SHORT_TYPE: Record<string, string> = {
  [ResourceTypes.NOTIFICATION_PIPELINE]: 'NotificationPipeline',
  [ResourceTypes.LEGACY_NOTIFICATION_PIPELINE]: 'LegacyNotificationPipeline',
  [ResourceTypes.SUBSCRIPTION]: 'Subscription',
  [ResourceTypes.HISTORY_REQUEST]: 'HistoryRequest',
  [ResourceTypes.PRODUCT_ORDER_JOBS]: 'ProductOrderJobs',
};
/** Removal order: what hangs off a subscription first, subscriptions last. */
const FIX_ORDER = [
  ResourceTypes.HISTORY_REQUEST, ResourceTypes.PRODUCT_ORDER_JOBS, ResourceTypes.NOTIFICATION_PIPELINE,
  ResourceTypes.LEGACY_NOTIFICATION_PIPELINE, ResourceTypes.SUBSCRIPTION,
] as string[];
const HISTORY_FINAL = new Set(['cancelled', 'canceled', 'failed', 'completed']);
const HISTORY_OPEN = new Set(['pending', 'processing']);

type Doc = Record<string, unknown>;
type Rec = JournalRecord<Doc>;

/** The resource type of a record, from the local state when known, else from the shape of its document. */
export function recordType(doc: Doc, known?: string): string {
  if (known && SHORT_TYPE[known]) return known;
  if (doc.selection !== undefined) return ResourceTypes.NOTIFICATION_PIPELINE;
  if (typeof doc.request === 'string') return ResourceTypes.HISTORY_REQUEST;
  if (doc.primaryJobId !== undefined) return ResourceTypes.PRODUCT_ORDER_JOBS;
  if (doc.product !== undefined) return ResourceTypes.SUBSCRIPTION;
  if (doc.identity !== undefined && doc.applied !== undefined) return ResourceTypes.LEGACY_NOTIFICATION_PIPELINE;
  return 'unknown';
}

/** What is deployed, as the orphan check sees it (CloudFormation or the local state). */
interface DeployedView {
  readonly source: string;
  /** 'gone': the stack does not exist; 'busy': an operation is in progress (its records are not judged). */
  stack(name: string): 'live' | 'gone' | 'busy';
  /** The current resource of a key, when it exists. */
  resource(key: string): { physicalId?: string; type?: string; properties?: Record<string, unknown> } | undefined;
  /** A physical resource the local state keeps for a clean-up (an old replacement, a failed removal). */
  pendingCleanup(key: string, physicalId: string | undefined): ResourceState | undefined;
}

function localView(state: LocalState, file: string): DeployedView {
  // By journal key: a fleet's pipelines (in nested stacks) carry their key in the JournalKey property.
  const byKey = new Map<string, ResourceState>();
  for (const r of Object.values(state.resources)) byKey.set(journalKeyOf(r.stack, r.logicalId, r.properties), r);
  return {
    source: `local state ${file}`,
    stack: (name) => (state.stacks.some((s) => s.stackName === name) ? 'live' : 'gone'),
    resource: (key) => {
      const r = byKey.get(key);
      return r ? { physicalId: r.physicalId, type: r.type, properties: r.properties } : undefined;
    },
    pendingCleanup: (key, physicalId) => state.orphans.find((o) => o.physicalId === physicalId
      && journalKeyOf(o.stack, o.logicalId, o.properties) === key),
  };
}

function cloudView(stacks: Map<string, DeployedStack | undefined>, region: string | undefined): DeployedView {
  const byKey = resourcesByJournalKey(stacks);
  return {
    source: `CloudFormation${region ? ` (${region})` : ''}`,
    stack: (name) => {
      const s = stacks.get(name);
      if (!s) return 'gone';
      // A nested stack's operation runs within its parent's: either one in progress leaves the records unjudged.
      const busy = [...stacks.values()].some((x) => x !== undefined && x.status.endsWith('_IN_PROGRESS') && (x === s || rootOf(stacks, x) === name));
      return busy ? 'busy' : 'live';
    },
    resource: (key) => {
      const r = byKey.get(key);
      return r ? { physicalId: r.physicalId, type: r.type } : undefined;
    },
    pendingCleanup: () => undefined,
  };
}

/** The top-level stack that holds a (nested) stack. */
function rootOf(stacks: Map<string, DeployedStack | undefined>, s: DeployedStack): string {
  let cur = s;
  for (let i = 0; i < 20 && cur.parentStack !== undefined; i++) {
    const p = stacks.get(cur.parentStack);
    if (!p) return cur.parentStack;
    cur = p;
  }
  return cur.stackName;
}

/** One orphaned journal record and what it still holds. */
export interface Orphan {
  readonly key: string;
  readonly type: string;
  readonly record: string;
  readonly state: string;
  readonly physicalId?: string;
  /** Why it is an orphan. */
  readonly why: string;
  /** Service IDs it refers to (e.g. `sub 1234`, `history 55`, `identity 362`). */
  serviceIds: string[];
  /** What it still holds, read from the service. */
  holds: string;
  /** Set when the library cannot remove it: the step that clears it. */
  unresolved?: string;
  /** The history request an unconfirmed attempt made (found by the lookup), removed by --fix. */
  madeHistory?: string;
  /** Holds nothing that a Delete could remove (order jobs of an ended subscription): not reported. */
  moot?: boolean;
  /** Properties of the resource as the local state recorded them (--local). */
  readonly properties?: Record<string, unknown>;
}

/** A claim whose owner has no record in the journal, and whether the service still shows it live. */
export interface LooseClaim extends JournalClaim {
  status?: string;
  live: boolean;
  /** The owner's records: none at all, or all closed (`deleted` / `abandoned`). */
  ownerRecords: 'none' | 'closed';
}

/** Judges every holding record against what is deployed. */
export function findOrphans(records: Rec[], view: DeployedView, skipped: Set<string>): Array<Omit<Orphan, 'serviceIds' | 'holds'>> {
  const out: Array<Omit<Orphan, 'serviceIds' | 'holds'>> = [];
  for (const r of records) {
    if (DONE.has(r.state)) continue;
    const [stack] = r.key.split('/');
    const s = view.stack(stack);
    if (s === 'busy') {
      skipped.add(stack);
      continue;
    }
    const current = s === 'live' ? view.resource(r.key) : undefined;
    const pending = view.pendingCleanup(r.key, r.physicalId);
    let why: string | undefined;
    if (s === 'gone') {why = 'stack gone';} else if (!current) {why = 'resource gone';} else if (pending) {why = `${pending.replaced ? 'replaced' : 'removal failed'}: the clean-up did not remove it (current ${current.physicalId ?? '-'})`;} else if (r.physicalId !== current.physicalId) {
      why = r.physicalId === undefined ? `unfinished attempt (current ${current.physicalId ?? '-'})` : `replaced (current ${current.physicalId ?? '-'})`;
    }
    if (!why) continue;
    const properties = pending?.properties ?? (r.physicalId === undefined || r.physicalId === current?.physicalId ? current?.properties : undefined);
    out.push({
      key: r.key,
      type: recordType(r.doc, pending?.type ?? current?.type),
      record: r.id,
      state: r.state,
      physicalId: r.physicalId,
      why,
      properties,
    });
  }
  return out;
}

const str = (v: unknown): string => (v === undefined || v === null ? '' : String(v));
const isNumeric = (v: unknown): boolean => /^[1-9]\d{0,15}$/.test(str(v));

function statusOf(e: unknown): number | undefined {
  return (e as { status?: number }).status;
}

/**
 * Subscription statuses of a run: one listing of the account's subscriptions (`id` and `status`, all pages) answers
 * most of them, so thousands of orphans cost a few requests, not one per record; an ID the listing does not show is
 * read on its own (404/403: gone).
 */
const statusListings = new WeakMap<DpiClient, Promise<Map<string, string>>>();

async function subscriptionStatus(client: DpiClient, id: string): Promise<string> {
  let all = statusListings.get(client);
  if (!all) {
    all = client.subscriptions.list().then((subs) => new Map(subs.map((x) => [String(x.id), str(x.status)])));
    all.catch(() => undefined);
    statusListings.set(client, all);
  }
  const known = await all.catch(() => new Map<string, string>());
  const hit = known.get(id);
  if (hit) return hit;
  try {
    return str((await client.subscriptions.get(id)).status) || 'unknown';
  } catch (e) {
    if (statusOf(e) === 404 || statusOf(e) === 403) return 'gone';
    throw e;
  }
}

/** The one open, unclaimed history request an unconfirmed attempt made (its `known` list is what was there before). */
async function historyMadeBy(client: DpiClient, journal: Journal, rec: Rec): Promise<{ found?: string; candidates: string[] }> {
  const sub = str(rec.doc.subscriptionId);
  if (!Array.isArray(rec.doc.known) || sub === '') return { candidates: [] };
  const before = new Set((rec.doc.known as unknown[]).map(String));
  const fresh = (await client.history.statusBySubscription(sub)).filter((h) => !before.has(String(h.id)) && !HISTORY_FINAL.has(str(h.status)));
  const owners = await journal.owners('history', fresh.map((h) => String(h.id)));
  const mine = fresh.filter((h) => !owners.has(String(h.id)) || owners.get(String(h.id)) === rec.key).map((h) => String(h.id));
  return { found: mine.length === 1 ? mine[0] : undefined, candidates: mine };
}

/** Reads what a record still holds (minimal reads: subscription and history `status`, job listings). */
async function describeHolding(client: DpiClient, journal: Journal, o: Omit<Orphan, 'serviceIds' | 'holds'>, rec: Rec): Promise<Orphan> {
  const d = rec.doc;
  const out: Orphan = { ...o, serviceIds: [], holds: '' };
  switch (o.type) {
    case ResourceTypes.NOTIFICATION_PIPELINE: {
      const sel = (d.applied ?? d.selection ?? {}) as { types?: string[]; region?: string };
      const result = d.result as { subscriptions?: Record<string, string> } | undefined;
      const types = result?.subscriptions && Object.keys(result.subscriptions).length > 0 ? Object.keys(result.subscriptions) : sel.types ?? [];
      out.serviceIds.push(`identity ${str(d.identity)}`);
      const what = `${types.join(',')} in ${str(sel.region) || '?'}`;
      if (rec.state === 'posting') {
        out.holds = `maybe a pipeline (the create got no answer): ${what}`;
        out.unresolved = `only the service can remove what it made; once removed (or confirmed never made) run 'dpi journal resolve ${o.key}'`;
      } else if (d.subscriptionId === undefined) {
        out.holds = `pipeline without its subscription: ${what}`;
      } else {
        const sub = str(d.subscriptionId);
        out.serviceIds.push(`sub ${sub}`);
        const status = await subscriptionStatus(client, sub);
        out.holds = status === 'gone' || status === 'invalid' ? `nothing live (subscription ${status})` : `active pipeline: ${what} (subscription ${status})`;
      }
      break;
    }
    case ResourceTypes.LEGACY_NOTIFICATION_PIPELINE:
    case ResourceTypes.SUBSCRIPTION: {
      const sub = str(o.physicalId ?? d.subscriptionId);
      if (!isNumeric(sub)) {
        out.serviceIds.push(`product ${str(d.product)}`);
        out.holds = 'subscription create without a confirmed outcome (looked up among unclaimed subscriptions on --fix)';
        break;
      }
      out.serviceIds.push(`sub ${sub}`);
      const status = await subscriptionStatus(client, sub);
      let open = 0;
      if (status !== 'gone' && status !== 'invalid') {
        open = (await client.history.statusBySubscription(sub)).filter((h) => HISTORY_OPEN.has(str(h.status))).length;
      }
      const kind = o.type === ResourceTypes.SUBSCRIPTION ? `subscription (product ${str(d.product)})` : 'legacy pipeline subscription';
      out.holds = status === 'gone' || status === 'invalid' ? `nothing live (subscription ${status})`
        : `${kind} ${status}${open > 0 ? `, ${open} open history request${open === 1 ? '' : 's'}` : ''}`;
      break;
    }
    case ResourceTypes.HISTORY_REQUEST: {
      const sub = str(d.subscriptionId);
      if (o.physicalId === undefined) {
        out.serviceIds.push(`sub ${sub}`);
        const { found, candidates } = await historyMadeBy(client, journal, rec);
        if (found) {
          out.serviceIds.push(`history ${found}`);
          out.madeHistory = found;
          out.holds = `open history request ${found} (made by an attempt without a confirmed outcome)`;
        } else if (candidates.length > 1) {
          out.holds = `an attempt without a confirmed outcome; ${candidates.length} open requests could be it (${candidates.join(', ')})`;
          out.unresolved = `cancel the requests that are not ${o.key}'s, then run dpi orphans --fix again`;
        } else {
          out.holds = 'nothing (the attempt made no request the service lists)';
        }
        break;
      }
      out.serviceIds.push(`history ${o.physicalId}`, `sub ${sub}`);
      let status = 'gone';
      try {
        status = str((await client.history.get(o.physicalId)).status) || 'unknown';
      } catch (e) {
        if (statusOf(e) !== 404 && statusOf(e) !== 403) throw e;
      }
      out.holds = HISTORY_OPEN.has(status) ? `open history request (${status})` : `nothing open (history ${status})`;
      break;
    }
    case ResourceTypes.PRODUCT_ORDER_JOBS: {
      const sub = str(d.subscriptionId);
      const jobIds = Array.isArray(d.jobIds) ? (d.jobIds as unknown[]).map(String) : [];
      const submitted = Array.isArray(d.submitted) ? d.submitted.length : 0;
      out.serviceIds.push(`job ${str(d.primaryJobId ?? o.physicalId)}`, `sub ${sub}`);
      // Jobs have no delete: once their subscription has ended they hold nothing (a destroy leaves the record as it is).
      const status = await subscriptionStatus(client, sub);
      if (['gone', 'invalid', 'cancelled'].includes(status)) {
        out.holds = `nothing live (subscription ${status})`;
        out.moot = true;
        break;
      }
      let listed = 0;
      try {
        const jobs = await client.jobs.list({ subscriptionIds: [sub] });
        const ids = new Set(jobs.map((j) => String(j.id)));
        listed = jobIds.filter((j) => ids.has(j)).length;
      } catch (e) {
        if (statusOf(e) !== 404 && statusOf(e) !== 403 && statusOf(e) !== 400) throw e;
      }
      out.holds = `${submitted} order IDs in ${listed} listed job${listed === 1 ? '' : 's'} (jobs have no delete: they end with the subscription)`;
      break;
    }
    default:
      out.holds = 'unknown record type (nothing is removed)';
      out.unresolved = `inspect it with 'dpi journal show ${o.key}'`;
  }
  return out;
}

/**
 * Claims whose owner holds nothing: no record at all (the record was lost: the subscription's or history request's
 * status is read), or only closed records while the claimed subscription is still live (set active again outside
 * the library). Claims of closed owners are otherwise what a Delete leaves, and not listed.
 */
async function looseClaims(client: DpiClient, claims: JournalClaim[], records: Rec[]): Promise<LooseClaim[]> {
  const keys = new Set(records.map((r) => r.key));
  const holding = new Set(records.filter((r) => !DONE.has(r.state)).map((r) => r.key));
  const out: LooseClaim[] = [];
  for (const c of claims) {
    if (holding.has(c.owner)) continue;
    const lost = !keys.has(c.owner);
    let status: string | undefined;
    if (c.kind === 'sub') status = await subscriptionStatus(client, c.id);
    if (c.kind === 'history' && lost) {
      try {
        status = str((await client.history.get(c.id)).status);
      } catch (e) {
        if (statusOf(e) !== 404 && statusOf(e) !== 403) throw e;
        status = 'gone';
      }
    }
    const live = status !== undefined && (c.kind === 'sub' ? !['gone', 'invalid', 'cancelled'].includes(status) : HISTORY_OPEN.has(status));
    if (lost || live) out.push({ ...c, status, live, ownerRecords: lost ? 'none' : 'closed' });
  }
  return out;
}

function shortType(t: string): string {
  return SHORT_TYPE[t] ?? t;
}

/** The table of `dpi orphans`. */
export function renderOrphans(orphans: Orphan[]): string {
  return renderTable(['KEY', 'TYPE', 'SERVICE IDS', 'HOLDS', 'STATE', 'WHY'],
    orphans.map((o) => [o.key, shortType(o.type), o.serviceIds.join(', ') || '-', o.holds, o.state, o.why]));
}


/** Whether the command line or the environment names a service address. */
function hasAddress(flags: ConnectionFlags, env: Record<string, string | undefined>): boolean {
  const f = flags as Record<string, unknown>;
  return ['baseUrl', 'subscriptionsUrl', 'accountUrl', 'userUrl', 'remoteIdentityUrl', 'authUrl'].some((k) => f[k] !== undefined)
    || Object.keys(env).some((k) => /^DPI_[A-Z_]*URL$/.test(k) && (env[k] ?? '').trim() !== '');
}

/** The service connection: the connection options, or with --local and no address the embedded emulator of the state. */
/** The service side of a run. */
interface Service {
  readonly client: DpiClient;
  readonly urls: Record<string, string>;
  readonly token: string;
  readonly origins: string[];
  stop(): Promise<void>;
}

async function serviceFor(ctx: RunContext, flags: OrphansFlags): Promise<Service> {
  if (flags.local && !hasAddress(flags, ctx.io.env)) {
    const stateFile = join(dirname(flags.state), 'emulator-state.json');
    if (!existsSync(stateFile)) {
      throw new CliError(`no service address: set DPI_BASE_URL or pass --base-url URL (the emulator dpi local-deploy used); ${stateFile} `
        + 'does not exist, so the state was not deployed to an embedded emulator');
    }
    const { startEmulator } = loadPart<typeof import('../../emulator/server')>('emulator/server', '../emulator/server');
    const emu = await startEmulator({ port: 0, stateFile });
    ctx.secrets.add(DEFAULT_REFRESH_TOKEN);
    ctx.io.stderr.write(`No service address: using the embedded emulator of ${stateFile} at ${emu.url} (as dpi local-deploy does)\n`);
    const base = { baseUrl: emu.url };
    const c = connect(base, { ...ctx.io, env: { DPI_REFRESH_TOKEN: DEFAULT_REFRESH_TOKEN } });
    const urls = resolveEndpoints(base, {}) as unknown as Record<string, string>;
    return { client: c.client, urls, token: DEFAULT_REFRESH_TOKEN, origins: c.origins, stop: () => emu.stop() };
  }
  const c = connect(flags, ctx.io);
  for (const s of c.secrets) ctx.secrets.add(s);
  const urls = c.endpoints as unknown as Record<string, string>;
  return { client: c.client, urls, token: c.secrets[0], origins: c.origins, stop: async () => undefined };
}

/** The `Connection` property of the Delete events: the CLI's addresses and token (through the handler's secret seam). */
function connectionProperty(urls: Record<string, string>, table: string, recorded: unknown): Record<string, unknown> {
  const prev = recorded && typeof recorded === 'object' ? recorded as Record<string, unknown> : {};
  const keep = Object.fromEntries(['AccountId', 'UserId', 'PipelineSubscriptionsKey', 'PipelineMetaKey']
    .filter((k) => typeof prev[k] === 'string' && prev[k] !== '').map((k) => [k, prev[k]]));
  return {
    ...keep,
    BaseUrl: urls.baseUrl,
    SubscriptionsUrl: urls.subscriptionsUrl,
    AccountUrl: urls.accountUrl,
    UserUrl: urls.userUrl,
    RemoteIdentityUrl: urls.remoteIdentityUrl,
    AuthUrl: urls.authUrl,
    RefreshTokenSecretArn: 'arn:aws:secretsmanager:local:000000000000:secret:dpi-orphans',
    JournalTableName: typeof prev.JournalTableName === 'string' && prev.JournalTableName !== '' ? prev.JournalTableName : table,
  };
}

/** The properties a Delete of the record needs (the recorded ones when the local state has them, else from the journal). */
function deleteProperties(o: Orphan, rec: Rec): Record<string, unknown> {
  if (o.properties) return { ...o.properties };
  const d = rec.doc;
  switch (o.type) {
    case ResourceTypes.NOTIFICATION_PIPELINE: {
      const sel = (d.selection ?? {}) as { types?: string[]; roleArn?: string; ebRoleArn?: string; region?: string; accountType?: string };
      return {
        RemoteIdentityId: str(d.identity),
        AccountType: str(sel.accountType),
        NotificationTypes: sel.types ?? [],
        RoleArn: str(sel.roleArn),
        ...(sel.ebRoleArn ? { EbToFhRoleArn: sel.ebRoleArn } : {}),
        DeploymentRegion: str(sel.region),
      };
    }
    case ResourceTypes.SUBSCRIPTION: {
      const applied = (d.applied ?? {}) as { storageGroupId?: number };
      return {
        ProductId: str(d.product),
        ...(d.identity !== undefined ? { RemoteIdentityId: str(d.identity) } : {}),
        ...(applied.storageGroupId !== undefined ? { StorageGroupId: str(applied.storageGroupId) } : {}),
      };
    }
    case ResourceTypes.HISTORY_REQUEST:
    case ResourceTypes.PRODUCT_ORDER_JOBS:
      return { SubscriptionId: str(d.subscriptionId) };
    default:
      return {};
  }
}

interface FixOutcome {
  key: string;
  record: string;
  result: 'removed' | 'skipped' | 'failed';
  detail?: string;
}

/** Runs the handler's Delete for every orphan (grouped per resource key and physical ID), then marks the records. */
async function fix(ctx: RunContext, opts: {
  orphans: Orphan[];
  records: Map<string, Rec>;
  journal: Journal;
  journalEndpoint?: string;
  urls: Record<string, string>;
  token: string;
  table: string;
  handlerLog?: string;
  echo: boolean;
}): Promise<FixOutcome[]> {
  const outcomes: FixOutcome[] = [];
  const todo: Orphan[] = [];
  for (const o of opts.orphans) {
    if (o.unresolved) outcomes.push({ key: o.key, record: o.record, result: 'skipped', detail: o.unresolved });
    else todo.push(o);
  }
  if (todo.length === 0) return outcomes;
  const handler: HandlerModule = loadHandler(defaultHandlerPath());
  if (typeof handler.configureLocalRuntime !== 'function') {
    throw new CliError('the handler bundle does not export configureLocalRuntime: rebuild it with \'npx projen bundle\'');
  }
  const token = opts.token;
  handler.configureLocalRuntime({
    readSecret: async () => token,
    callerAccountId: async () => {
      throw new Error('dpi orphans --fix runs Deletes only (no AWS account is read)');
    },
    journalEndpoint: opts.journalEndpoint,
  });
  // One Delete per resource key and physical ID (a placeholder for a key's attempts without one).
  const groups = new Map<string, { physicalId: string; orphans: Orphan[] }>();
  const order = (t: string): number => (FIX_ORDER.includes(t) ? FIX_ORDER.indexOf(t) : FIX_ORDER.length);
  for (const o of [...todo].sort((a, b) => order(a.type) - order(b.type))) {
    const physical = o.madeHistory ?? o.physicalId ?? `dpi-orphans:${o.record}`;
    const gk = `${o.key}|${o.physicalId === undefined && !o.madeHistory ? '(attempts)' : physical}`;
    const g = groups.get(gk) ?? { physicalId: physical, orphans: [] };
    g.orphans.push(o);
    groups.set(gk, g);
  }
  for (const { physicalId, orphans } of groups.values()) {
    const o = orphans[0];
    const rec = opts.records.get(`${o.key}#${o.record}`)!;
    const [stack, ...rest] = o.key.split('/');
    const logicalId = rest.join('/');
    const props = deleteProperties(o, rec);
    const event = {
      RequestType: 'Delete' as const,
      ServiceToken: 'arn:aws:lambda:local:000000000000:function:dpi-orphans',
      ResponseURL: 'local',
      StackId: `arn:aws:cloudformation:local:000000000000:stack/${stack}/dpi-orphans`,
      RequestId: `dpi-orphans-${o.record}`,
      LogicalResourceId: logicalId,
      ResourceType: o.type,
      PhysicalResourceId: physicalId,
      ResourceProperties: { ...props, JournalKey: o.key, Connection: connectionProperty(opts.urls, opts.table, props.Connection) },
    };
    ctx.io.stderr.write(`removing ${o.key} (${shortType(o.type)}, ${physicalId})...\n`);
    try {
      await invokeWithContext(`${stack}-dpi-orphans`, event.ServiceToken, 600_000,
        { file: opts.handlerLog, echo: opts.echo, redact: [token] }, (c) => handler.onEvent(event, c));
    } catch (e) {
      for (const x of orphans) outcomes.push({ key: x.key, record: x.record, result: 'failed', detail: (e as Error).message });
      continue;
    }
    // What a Delete leaves: the records it removed are `deleted` (order jobs have no service delete: marked here too).
    const now = (await opts.journal.records<Doc>(o.key));
    for (const x of orphans) {
      const cur = now.find((r) => r.id === x.record);
      if (cur && !DONE.has(cur.state)) {
        await opts.journal.save(cur, 'deleted', { ...cur.doc, removedBy: 'dpi orphans --fix', removedAt: new Date().toISOString() });
      }
      outcomes.push({ key: x.key, record: x.record, result: 'removed' });
    }
  }
  return outcomes;
}

/** Runs `dpi orphans` (the command's definition is in orphans-command.ts; this part is loaded only when it runs). */
export async function runOrphans(ctx: RunContext, flags: OrphansFlags): Promise<void> {
  const io = ctx.io;
  if (flags.yes && !flags.fix) throw new CliError('--yes is only meaningful with --fix');
  if (flags.profile) process.env.AWS_PROFILE = flags.profile;
  if (flags.region) process.env.AWS_REGION = flags.region;
  const unlock = flags.local ? lockOrFail(flags.state) : undefined;
  let j: Awaited<ReturnType<typeof openJournal>> | undefined;
  let svc: Service | undefined;
  try {
    svc = await serviceFor(ctx, flags);
    j = await openJournal(flags);
    const scan = await j.journal.scan(flags.prefix);
    const records = scan.records as Rec[];
    const claims = scan.claims.filter((c) => !flags.prefix || c.owner.startsWith(flags.prefix));
    let view: DeployedView;
    let state: LocalState | undefined;
    if (flags.local) {
      try {
        state = readState(flags.state);
      } catch (e) {
        throw new CliError((e as Error).message);
      }
      view = localView(state, flags.state);
    } else {
      const cfn = orphansSeams.cloudFormation ?? cloudFormationClient({ region: flags.region, profile: flags.profile });
      const stacks = await deployedResources(records.filter((r) => !DONE.has(r.state)).map((r) => r.key.split('/')[0]), cfn, { nested: true });
      view = cloudView(stacks, flags.region);
    }
    const busy = new Set<string>();
    const found = findOrphans(records, view, busy);
    for (const s of busy) io.stderr.write(`${s}: an operation is in progress; its records are not judged (run dpi orphans again when it ends)\n`);
    const byId = new Map(records.map((r) => [`${r.key}#${r.id}`, r]));
    const orphans: Orphan[] = [];
    for (const o of found) {
      const described = await describeHolding(svc.client, j.journal, o, byId.get(`${o.key}#${o.record}`)!);
      if (!described.moot) orphans.push(described);
    }
    const loose = await looseClaims(svc.client, claims, records);
    const liveLoose = loose.filter((c) => c.live);
    const report = { journal: j.where, deployed: view.source, orphans, looseClaims: loose };

    if (!flags.fix) {
      if (flags.json) io.stdout.write(`${JSON.stringify(report, undefined, 2)}\n`);
      else printReport(ctx, orphans, loose, j.where, view.source);
      if (orphans.length + liveLoose.length > 0) throw new CliError('', EXIT.DATA_ERROR);
      return;
    }
    if (!flags.json) printReport(ctx, orphans, loose, j.where, view.source);
    const removable = orphans.filter((o) => !o.unresolved);
    if (removable.length > 0 && !flags.yes) {
      if (!orphansSeams.stdinIsTTY()) {
        throw new CliError(`refusing to remove ${removable.length} orphan(s) without a confirmation: stdin is not a terminal; pass --yes`);
      }
      const answer = await orphansSeams.ask(`Remove ${removable.length} orphan(s) the way a Delete would? [y/N] `);
      if (!/^y(es)?$/i.test(answer.trim())) throw new CliError('nothing was removed (not confirmed)');
    }
    const outcomes = await fix(ctx, {
      orphans,
      records: byId,
      journal: j.journal,
      journalEndpoint: j.endpoint,
      urls: svc.urls,
      token: svc.token,
      table: flags.table,
      handlerLog: flags.local ? join(dirname(flags.state), 'handler.log') : undefined,
      echo: flags.handlerLogs === true,
    });
    if (state) dropFixedCleanups(flags.state, state, orphans, outcomes, [svc.token]);
    if (flags.json) {
      io.stdout.write(`${JSON.stringify({ ...report, fixed: outcomes }, undefined, 2)}\n`);
    } else {
      for (const x of outcomes) {
        io.stdout.write(`${x.result.padEnd(7)}  ${x.key} (${x.record})${x.detail ? `: ${x.detail}` : ''}\n`);
      }
    }
    const failed = outcomes.filter((x) => x.result === 'failed');
    if (failed.length > 0) {
      throw new CliError(`${failed.length} orphan(s) could not be removed: ${failed.map((x) => `${x.key}: ${x.detail}`).join('; ')}`);
    }
    if (outcomes.some((x) => x.result === 'skipped') || liveLoose.length > 0) throw new CliError('', EXIT.DATA_ERROR);
  } catch (e) {
    throw toCliError(e, { origins: svc?.origins });
  } finally {
    await j?.close();
    await svc?.stop();
    unlock?.();
  }
}

function lockOrFail(stateFile: string): () => void {
  try {
    return lockState(stateFile);
  } catch (e) {
    throw new CliError((e as Error).message);
  }
}

/** The local state's clean-up list no longer names the physical resources --fix removed. */
function dropFixedCleanups(file: string, state: LocalState, orphans: Orphan[], outcomes: FixOutcome[], forbidden: string[]): void {
  const removed = new Set(outcomes.filter((x) => x.result === 'removed').map((x) => `${x.key}#${x.record}`));
  const gone = new Set(orphans.filter((o) => removed.has(`${o.key}#${o.record}`) && o.physicalId !== undefined).map((o) => `${o.key}|${o.physicalId}`));
  const kept = state.orphans.filter((o) => !gone.has(`${journalKeyOf(o.stack, o.logicalId, o.properties)}|${o.physicalId}`));
  if (kept.length === state.orphans.length) return;
  writeState(file, { ...state, orphans: kept }, forbidden);
}

function printReport(ctx: RunContext, orphans: Orphan[], loose: LooseClaim[], journal: string, deployed: string): void {
  const io = ctx.io;
  if (orphans.length === 0) {
    io.stdout.write(`no orphans: every record of ${journal} that holds something belongs to a resource of ${deployed}\n`);
  } else {
    io.stdout.write(`${orphans.length} orphan${orphans.length === 1 ? '' : 's'} in ${journal} (checked against ${deployed}):\n`);
    io.stdout.write(renderOrphans(orphans));
    for (const o of orphans.filter((x) => x.unresolved)) io.stdout.write(`unresolved: ${o.key} (${o.record}): ${o.unresolved}; --fix skips it\n`);
  }
  for (const c of loose) {
    io.stdout.write(`claim whose owner holds nothing: ${c.kind} ${c.id} owned by ${c.owner} (${c.ownerRecords === 'none' ? 'no record' : 'records closed'}`
      + `${c.status ? `; service: ${c.status}` : ''})`
      + `${c.live ? ': still live, check it by hand' : ''}\n`);
  }
}
