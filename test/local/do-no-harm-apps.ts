/**
 * Helpers of test/local/do-no-harm.test.ts: apps synthesized in-process with the real constructs, records made the way
 * the web UI makes them (the service's own endpoints, a bearer token), snapshots of those bystander records, the local
 * journal as the runner saved it, and one scene (emulator + state folder) per test.
 */
import { join } from 'node:path';
import { App, Stack } from 'aws-cdk-lib';
import { connectedStack } from './apps';
import {
  LegacyNotificationPipeline, LegacyNotificationPipelineProps, NotificationType, ServiceConnection, Subscription, SubscriptionProps,
} from '../../src';
import { runDpi } from '../../src/cli/program';
import { DEFAULT_CLOUD_ACCOUNT, DEFAULT_REFRESH_TOKEN, ReadMode, RunningEmulator } from '../../src/emulator';
import { LocalDeployResult, readJournalState, runLocalDeploy } from '../../src/local';

/** The read mode of the run (`npm test` runs the local suites in both; see test/handler/helpers.ts). */
export const READS: ReadMode = process.env.DPI_EMULATOR_READS === 'vendor' ? 'vendor' : 'minimal';

/** Synthesizes one stack (account 123456789012, the shared connection) declared by `declare`; returns the assembly dir. */
export function synthApp(outdir: string, stackName: string, declare: (stack: Stack, connection: ServiceConnection) => void): string {
  const app = new App({ outdir });
  const { stack, connection } = connectedStack(app, stackName);
  declare(stack, connection);
  app.synth();
  return outdir;
}

/** A product-3001 subscription of identity 362 (storage 501, marketplace US) with `props` over it. */
export function orders(stack: Stack, connection: ServiceConnection, id: string, props: Partial<SubscriptionProps> = {}): Subscription {
  return new Subscription(stack, id, {
    connection,
    productId: 3001,
    storageGroupId: 501,
    remoteIdentityId: 362,
    productParameters: { marketplace_id: 'ATVPDKIKX0DER' },
    ...props,
  });
}

/** The emulator's fixture legacy pipeline (subscription 8601, identity 364), declared exactly as it is (adopting changes nothing). */
export function legacy(stack: Stack, connection: ServiceConnection,
  props: Partial<LegacyNotificationPipelineProps> = {}): LegacyNotificationPipeline {
  return new LegacyNotificationPipeline(stack, 'Legacy', {
    connection,
    subscriptionId: 8601,
    remoteIdentityId: 364,
    queueArn: `arn:aws:sqs:us-east-1:${DEFAULT_CLOUD_ACCOUNT}:legacy-notifications`,
    notificationTypes: [NotificationType.ORDER_CHANGE, NotificationType.FEED_PROCESSING_FINISHED],
    ...props,
  });
}

/** A record of the journal as the runner saved it (`journal.json`), `doc` parsed. */
export interface JournalItem {
  pk: string;
  sk: string;
  state?: string;
  physicalId?: string;
  owner?: string;
  doc?: any;
}

/** The fields a bystander must keep. */
export interface Kept {
  id: number;
  product: number;
  status: string;
  name: string;
  product_parameters: Record<string, string>;
  storage_group: number | null;
  remote_identity: number | null;
  date_start: string;
}

/** A running emulator and one test's state folder. */
export class Scene {
  readonly lines: string[] = [];
  constructor(readonly emu: RunningEmulator, readonly dir: string) {}

  get stateFile(): string {
    return join(this.dir, 'local-state.json');
  }

  /**
   * `dpi local-deploy` in process against the emulator (`app` undefined with `destroy`); with `embedded`, against the
   * run's own embedded emulator (state in `emulator-state.json` beside the state file, the last run's port when it is free).
   */
  deploy(app: string | undefined, o: { destroy?: boolean; concurrency?: number; embedded?: boolean } = {}): Promise<LocalDeployResult> {
    return runLocalDeploy({
      app,
      destroy: o.destroy,
      concurrency: o.concurrency,
      emulatorUrl: o.embedded ? undefined : this.emu.url,
      reads: READS,
      stateFile: this.stateFile,
      refreshToken: DEFAULT_REFRESH_TOKEN,
      pollIntervalMs: 20,
      progress: (l) => this.lines.push(l),
      output: (l) => this.lines.push(l),
    });
  }

  /** `dpi ...` in process (service: the emulator), output captured. */
  async dpi(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
    let stdout = '';
    let stderr = '';
    const code = await runDpi(args, {
      isTTY: false,
      env: { DPI_BASE_URL: this.emu.url, DPI_REFRESH_TOKEN: DEFAULT_REFRESH_TOKEN },
      stdout: { write: (s: string) => { stdout += s; } },
      stderr: { write: (s: string) => { stderr += s; } },
    });
    return { code, stdout, stderr };
  }

  async admin(method: string, path: string, body?: unknown): Promise<any> {
    const res = await fetch(`${this.emu.url}/_emulator${path}`, {
      method, headers: body === undefined ? {} : { 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    if (res.status >= 400) throw new Error(`admin ${method} ${path}: ${res.status} ${text}`);
    return text ? JSON.parse(text) : undefined;
  }

  /** Requests of the log other than the token exchange, as `METHOD path status`. */
  async requests(filter: (r: { method: string; path: string }) => boolean = () => true): Promise<string[]> {
    const log = (await this.admin('GET', '/requests')) as Array<{ method: string; path: string; status: number }>;
    return log.filter((r) => r.path !== '/auth/api/ref' && filter(r)).map((r) => `${r.method} ${r.path} ${r.status}`);
  }

  /** Changing requests (not GET) of the log. */
  changing(): Promise<string[]> {
    return this.requests((r) => r.method !== 'GET');
  }

  /** A call of the service as the web UI makes it (account 1001's token); fails on an error status. */
  async ui(method: string, path: string, body?: unknown): Promise<any> {
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
    if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${text}`);
    return text ? JSON.parse(text) : undefined;
  }

  /** A subscription made in the web UI (POST /v2/sub); returns its ID. */
  async uiSubscribe(attrs: Record<string, unknown>): Promise<number> {
    const r = await this.ui('POST', '/v2/sub', {
      data: { type: 'Subscription', attributes: { account: 1001, user: 2001, status: 'active', date_start: '2026-01-01T00:00:00Z', ...attrs } },
    });
    return Number(r.data.id);
  }

  /**
   * The bystanders every test starts with: a product-3001 subscription of identity 362 (the product the apps use),
   * a paused one, an advertising one with stage IDs and a storage one; with the fixtures' legacy subscription 8601.
   */
  async uiBystanders(): Promise<{ orders: number; paused: number; ads: number; storage: number }> {
    const o = await this.uiSubscribe({
      product: 3001, remote_identity: 362, storage_group: 501, name: 'orders by hand', product_parameters: { marketplace_id: 'ATVPDKIKX0DER' },
    });
    const paused = await this.uiSubscribe({
      product: 3001, remote_identity: 362, storage_group: 501, name: 'paused by hand', product_parameters: { marketplace_id: 'A2EUQ1WTGCTBG2' },
    });
    await this.ui('PATCH', `/v2/sub/${paused}`, { data: { type: 'Subscription', id: String(paused), attributes: { status: 'paused' } } });
    const ads = await this.uiSubscribe({
      product: 3002, remote_identity: 365, storage_group: 501, name: 'ads by hand', product_parameters: { profile_id: 'p-1', stage_ids: '[1001]' },
    });
    const storage = await this.uiSubscribe({ product: 4001, name: 'storage by hand' });
    return { orders: o, paused, ads, storage };
  }

  /** What the service stores of these subscriptions (the admin view shows every field in both read modes). */
  kept(ids: number[]): Kept[] {
    return this.emu.state().subscriptions.filter((s) => ids.includes(s.id)).map((s) => ({
      id: s.id,
      product: s.product,
      status: s.status,
      name: s.name,
      product_parameters: s.product_parameters,
      storage_group: s.storage_group,
      remote_identity: s.remote_identity,
      date_start: s.date_start,
    })).sort((a, b) => a.id - b.id);
  }

  /** The fixture legacy pipeline(s) as the service holds them. */
  legacyPipelines(): unknown[] {
    return this.emu.state().legacyPipelines;
  }

  /** Every item of the local journal (`journal.json` beside the state), `doc` parsed. */
  journal(): JournalItem[] {
    const s = readJournalState(join(this.dir, 'journal.json'));
    const str = (v: unknown): string | undefined => (v as { S?: string } | undefined)?.S;
    return s.tables.flatMap((t) => t.Items).map((i) => ({
      pk: str(i.pk)!,
      sk: str(i.sk)!,
      state: str(i.state),
      physicalId: str(i.physicalId),
      owner: str(i.owner),
      doc: str(i.doc) !== undefined ? JSON.parse(str(i.doc)!) : undefined,
    }));
  }

  /** The journal records (not claims) of a physical ID. */
  records(physicalId: number | string): JournalItem[] {
    return this.journal().filter((i) => !i.pk.startsWith('claim#') && !i.pk.startsWith('inflight#') && i.physicalId === String(physicalId));
  }
}

/** The last status of the stack itself in a run. */
export function stackStatus(r: LocalDeployResult, stack: string): string | undefined {
  return r.events.filter((e) => e.type === 'AWS::CloudFormation::Stack' && e.logicalId === stack).map((e) => e.status).pop();
}

/** The physical ID of the resource whose logical ID starts with `prefix` (after a run). */
export function physical(r: LocalDeployResult, prefix: string): string {
  const row = r.resources.find((x) => x.logicalId.startsWith(prefix));
  if (!row) throw new Error(`no deployed resource ${prefix}* (${r.resources.map((x) => x.logicalId).join(', ')})`);
  return row.physicalId;
}

/** The reasons of the failed events of a run (for failure messages). */
export function failures(r: LocalDeployResult): string[] {
  return r.events.filter((e) => /FAILED/.test(e.status)).map((e) => `${e.status} ${e.logicalId}: ${e.reason ?? ''}`);
}
