/**
 * Bystanders: records in the customer's account that the example app did not make, present in every scenario of the
 * fault matrix (made right after each `/_emulator/reset`). The library must leave them exactly as they were:
 *
 * - `ui-<product>`:        for every product the app subscribes to, an active subscription of the same product,
 *                          identity, storage group and parameters, made in the web UI (`POST /v2/sub`)
 * - `ui-107-364`:          a product-107 subscription of another seller identity (364) than the app's pipelines use
 * - `ui-pipeline-364`:     a unified notification pipeline of identity 364 made in the web UI (its legacy pipeline
 *                          retired first, as the service requires), with the product-107 subscription storing it
 * - `other-journal-3001`:  a product-3001 subscription of identity 362 made by another app (another stack, another
 *                          region: another lifecycle journal), deployed with `dpi local-deploy` and its own state file
 *
 * The UI records are made through the service's public endpoints with a token from the refresh token exchange (as the
 * handler authenticates), never through the emulator's admin routes. Their state is read from the emulator's admin
 * view (`emulator.state()`) right after they were made and compared after every phase: any change is `harmed`.
 */
import { mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { App, Stack } from 'aws-cdk-lib';
import * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import { ServiceConnection, Subscription } from '../../src';
import { DEFAULT_CLOUD_ACCOUNT, DEFAULT_REFRESH_TOKEN, EmulatorStateSnapshot } from '../../src/emulator';
import { runLocalDeploy } from '../../src/local';

/** Another seller identity of the default fixtures' account 1001 (the app's pipelines use 362 and 363). */
export const OTHER_SELLER_IDENTITY = 364;
/** The fixtures' legacy (product 86) pipeline of identity 364, retired in the UI before its unified pipeline is made. */
const LEGACY_SUBSCRIPTION_364 = 8601;
const UI_DATE_START = '2026-01-02T03:04:05';

/** One bystander: a subscription (by ID) or a unified pipeline (by the emulator's pipeline ID). */
export interface Bystander {
  readonly name: string;
  readonly kind: 'subscription' | 'pipeline';
  readonly id: string;
}

/** The bystanders of one scenario, and their state right after they were made. */
export interface BystanderSet {
  readonly records: readonly Bystander[];
  /** By `<kind> <id>`. */
  readonly baseline: ReadonlyMap<string, Record<string, unknown>>;
  /** IDs excluded from the comparison with the clean run (see `liveSummary`). */
  readonly subscriptions: ReadonlySet<number>;
  readonly pipelines: ReadonlySet<string>;
  /** Milliseconds spent making them: the UI's records, and the second journal's app (a `dpi local-deploy` run). */
  readonly ms: { readonly ui: number; readonly secondJournal: number };
}

/** A subscription the app declares (from its synthesized templates): the UI makes one just like it. */
export interface DeclaredSubscription {
  readonly product: number;
  readonly identity?: number;
  readonly storageGroup?: number;
  readonly params: Record<string, string>;
}

/** Every `Custom::DpiSubscription` of the cloud assembly in `dir`. */
export function declaredSubscriptions(dir: string): DeclaredSubscription[] {
  const out: DeclaredSubscription[] = [];
  for (const f of readdirSync(dir).filter((x) => x.endsWith('.template.json'))) {
    const t = JSON.parse(readFileSync(join(dir, f), 'utf8')) as { Resources?: Record<string, { Type: string; Properties?: Record<string, unknown> }> };
    for (const r of Object.values(t.Resources ?? {})) {
      if (r.Type !== 'Custom::DpiSubscription' || !r.Properties) continue;
      const p = r.Properties;
      out.push({
        product: Number(p.ProductId),
        identity: p.RemoteIdentityId === undefined ? undefined : Number(p.RemoteIdentityId),
        storageGroup: p.StorageGroupId === undefined ? undefined : Number(p.StorageGroupId),
        params: Object.fromEntries(Object.entries((p.ProductParameters ?? {}) as Record<string, unknown>).map(([k, v]) => [k, String(v)])),
      });
    }
  }
  return out;
}

/** The second app: one `Subscription` of product 3001, identity 362, in a stack of another name and region. */
export function synthSecondJournalApp(outdir: string): string {
  const app = new App({ outdir });
  const stack = new Stack(app, 'OtherRegionOrders', { env: { account: DEFAULT_CLOUD_ACCOUNT, region: 'us-west-2' } });
  const connection = new ServiceConnection(stack, 'Dpi', {
    singleOriginUrl: 'https://api.example-dpi.com',
    refreshToken: secretsmanager.Secret.fromSecretNameV2(stack, 'Token', 'dpi/refresh-token'),
    journalTableName: 'dpi-lifecycle-journal',
  });
  new Subscription(stack, 'Orders', {
    connection,
    productId: 3001,
    remoteIdentityId: 362,
    storageGroupId: 501,
    productParameters: { marketplace_id: 'ATVPDKIKX0DER' },
    name: 'other-journal-3001',
  });
  app.synth();
  return outdir;
}

/** A web UI session: the refresh token exchanged for a bearer token, then the public endpoints. */
class UiSession {
  static async login(url: string): Promise<UiSession> {
    const s = new UiSession(url, '');
    const r = await s.call<{ data: { attributes: { token: string } } }>('POST', '/auth/api/ref',
      { data: { type: 'APIAuth', attributes: { refresh_token: DEFAULT_REFRESH_TOKEN } } });
    return new UiSession(url, r.data.attributes.token);
  }

  private constructor(private readonly url: string, private readonly token: string) {}

  async call<T>(method: string, path: string, body?: unknown): Promise<T> {
    const headers: Record<string, string> = body === undefined ? {} : { 'content-type': 'application/json' };
    if (this.token) headers.authorization = `Bearer ${this.token}`;
    const res = await fetch(`${this.url}${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
    // Never the body of the token exchange: it holds the bearer token.
    if (!res.ok) throw new Error(`the UI's ${method} ${path} failed: HTTP ${res.status}${path.startsWith('/auth') ? '' : ` ${await res.text()}`}`);
    return (res.status === 204 ? undefined : await res.json()) as T;
  }

  /** The account and user IDs (the spec's first two setup steps). */
  async ids(): Promise<{ account: number; user: number }> {
    const idOf = (b: { data: { id: string } | Array<{ id: string }> }): number => Number(Array.isArray(b.data) ? b.data[0].id : b.data.id);
    return { account: idOf(await this.call('GET', '/account')), user: idOf(await this.call('GET', '/user')) };
  }

  async createSubscription(attributes: Record<string, unknown>): Promise<string> {
    const r = await this.call<{ data: { id: string } }>('POST', '/v2/sub', { data: { type: 'Subscription', attributes } });
    return String(r.data.id);
  }
}

/** Makes every bystander (right after a reset) and records its state as the admin view shows it. */
export async function makeBystanders(url: string, state: () => EmulatorStateSnapshot, declared: readonly DeclaredSubscription[],
  secondApp: { app: string; stateFile: string; handlerPath?: string }): Promise<BystanderSet> {
  const t0 = Date.now();
  const ui = await UiSession.login(url);
  const { account, user } = await ui.ids();
  const records: Bystander[] = [];
  const sub = async (name: string, product: number, identity: number | undefined, storageGroup: number | undefined,
    params: Record<string, string>): Promise<void> => {
    const id = await ui.createSubscription({
      account,
      user,
      product,
      status: 'active',
      date_start: UI_DATE_START,
      name,
      product_parameters: params,
      ...(identity !== undefined ? { remote_identity: identity } : {}),
      ...(storageGroup !== undefined ? { storage_group: storageGroup } : {}),
    });
    records.push({ name, kind: 'subscription', id });
  };

  // 1. The UI's twin of every subscription the app declares (`ui-<product>`, `-<identity>` when a product has several).
  const twins = [...new Map(declared.map((d) => [`${d.product}/${d.identity ?? '-'}`, d])).values()];
  for (const d of twins) {
    const several = twins.filter((x) => x.product === d.product).length > 1;
    await sub(`ui-${d.product}${several ? `-${d.identity ?? 'none'}` : ''}`, d.product, d.identity, d.storageGroup, d.params);
  }

  // 2. A product-107 subscription of another seller identity.
  const other = OTHER_SELLER_IDENTITY;
  await sub(`ui-107-${other}`, 107, other, undefined, {
    subscriptions: JSON.stringify({ ORDER_CHANGE: 'none' }),
    meta: JSON.stringify({ created_in: 'web-ui' }),
  });

  // 3. A unified pipeline of identity 364, made in the UI: its legacy pipeline retired first (the service refuses a
  //    unified pipeline next to an active legacy one), then the unified POST and the product-107 subscription storing
  //    the result under the product's stored keys (as the handler's `post` and `recordSubscription` do).
  await ui.call('DELETE', `/service/sp/notifications/${other}/${LEGACY_SUBSCRIPTION_364}`);
  await ui.call('PATCH', `/v2/sub/${LEGACY_SUBSCRIPTION_364}`, { data: { type: 'Subscription', id: String(LEGACY_SUBSCRIPTION_364), attributes: { status: 'invalid' } } });
  const created = await ui.call<{ data: { attributes: { subscriptions: Record<string, string>; meta: Record<string, string> } } }>(
    'POST', `/service/sp/notifications-unified/${other}`, {
      data: {
        type: 'Service',
        attributes: {
          notification_types: ['ORDER_CHANGE', 'FEED_PROCESSING_FINISHED'],
          role_arn: `arn:aws:iam::${DEFAULT_CLOUD_ACCOUNT}:role/dpi-management`,
          eb_to_fh_role_arn: `arn:aws:iam::${DEFAULT_CLOUD_ACCOUNT}:role/dpi-eventbus-to-firehose`,
          aws_region: 'us-east-1',
        },
      },
    });
  const result = created.data.attributes;
  records.push({ name: `ui-pipeline-${other}`, kind: 'pipeline', id: result.meta.pipeline_id });
  await sub(`ui-pipeline-${other}`, 107, other, undefined, { subscriptions: JSON.stringify(result.subscriptions), meta: JSON.stringify(result.meta) });

  // 4. Another journal's subscription: the second app deployed with its own state file (its own journal).
  const t1 = Date.now();
  const before = new Set(state().subscriptions.map((s) => s.id));
  mkdirSync(join(secondApp.stateFile, '..'), { recursive: true });
  const r = await runLocalDeploy({
    app: secondApp.app,
    emulatorUrl: url,
    stateFile: secondApp.stateFile,
    refreshToken: DEFAULT_REFRESH_TOKEN,
    handlerPath: secondApp.handlerPath,
    pollIntervalMs: 20,
    concurrency: 1,
    progress: () => undefined,
    output: () => undefined,
  });
  const made = state().subscriptions.filter((s) => !before.has(s.id));
  if (!r.success || made.length !== 1) {
    throw new Error(`the second journal's app did not make one subscription (${made.length}): ${r.error ?? JSON.stringify(r.events.filter((e) => e.reason))}`);
  }
  records.push({ name: 'other-journal-3001', kind: 'subscription', id: String(made[0].id) });

  const t2 = Date.now();
  const s = state();
  const baseline = new Map(records.map((b) => [keyOf(b), describe(s, b)]));
  return {
    records,
    subscriptions: new Set(records.filter((b) => b.kind === 'subscription').map((b) => Number(b.id))),
    pipelines: new Set(records.filter((b) => b.kind === 'pipeline').map((b) => b.id)),
    baseline,
    ms: { ui: t1 - t0, secondJournal: t2 - t1 },
  };
}

/** What a bystander is, as the admin view shows it (no generated timestamps). */
export function describe(s: EmulatorStateSnapshot, b: Bystander): Record<string, unknown> {
  if (b.kind === 'subscription') {
    const x = s.subscriptions.find((y) => String(y.id) === b.id);
    if (!x) return { exists: false };
    return {
      status: x.status,
      name: x.name,
      product: x.product,
      identity: x.remote_identity,
      storage_group: x.storage_group,
      date_start: x.date_start,
      date_end: x.date_end,
      product_parameters: x.product_parameters,
      // A backfill or an order job the app made under the bystander changes it too.
      history: s.history.filter((h) => h.subscription_id === x.id).map((h) => `${h.id}:${h.start_date}..${h.end_date}`),
      jobs: s.jobs.filter((j) => j.subscription_id === x.id).map((j) => j.id),
    };
  }
  const p = s.pipelines.find((y) => y.id === b.id);
  if (!p) return { exists: false };
  const upstream = s.upstreamSubscriptions.filter((u) => u.pipelineId === p.id || u.remoteIdentityId === p.remoteIdentityId);
  const destIds = new Set([...upstream.map((u) => u.destinationId)]);
  return {
    identity: p.remoteIdentityId,
    region: p.region,
    account: p.awsAccountId,
    prefix: p.prefix,
    types: [...p.notificationTypes].sort(),
    upstream: upstream.map((u) => `${u.notificationType}=${u.id}@${u.destinationId}${u.enabled ? '' : ' (disabled)'}${u.pipelineId === p.id ? '' : ` pipeline=${u.pipelineId ?? '-'}`}`).sort(),
    destinations: s.destinations.filter((d) => d.pipelineId === p.id || destIds.has(d.id)).map((d) => `${d.id} ${d.kind} ${d.arn}`).sort(),
    resources: s.cloud.filter((c) => c.pipelineId === p.id).map((c) => `${c.kind} ${c.id}`).sort(),
    meta: p.meta,
  };
}

/** What changed in each bystander since it was made; empty when none changed. */
export function harmedBystanders(s: EmulatorStateSnapshot, set: BystanderSet): string[] {
  const out: string[] = [];
  for (const b of set.records) {
    const was = set.baseline.get(keyOf(b))!;
    const now = describe(s, b);
    const changes = changesOf(was, now);
    if (changes.length > 0) out.push(`${b.name} (${b.kind} ${b.id}): ${changes.join(', ')}`);
  }
  return out;
}

function keyOf(b: Bystander): string {
  return `${b.kind} ${b.id}`;
}

function changesOf(was: Record<string, unknown>, now: Record<string, unknown>, prefix = ''): string[] {
  const out: string[] = [];
  for (const k of [...new Set([...Object.keys(was), ...Object.keys(now)])]) {
    const a = was[k];
    const b = now[k];
    if (JSON.stringify(a) === JSON.stringify(b)) continue;
    if (isRecord(a) && isRecord(b)) out.push(...changesOf(a, b, `${prefix}${k}.`));
    else out.push(`${prefix}${k} ${short(a)} -> ${short(b)}`);
  }
  return out;
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function short(v: unknown): string {
  const t = v === undefined ? '(none)' : JSON.stringify(v);
  return t.length > 120 ? `${t.slice(0, 117)}...` : t;
}
