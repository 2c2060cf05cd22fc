/**
 * What the fault matrix reads after a scenario: the service's live state without generated IDs (compared with the
 * clean run's), and the secrets found in the scenario's files and outputs.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { EmulatorStateSnapshot } from '../../src/emulator';

/** Records left out of `liveSummary` by ID (the bystanders: they are compared with their own state instead). */
export interface Excluded {
  readonly subscriptions: ReadonlySet<number>;
  readonly pipelines: ReadonlySet<string>;
}

/**
 * Everything that is live in the service, without generated IDs (what a deploy or destroy must converge to), except
 * the fixtures' subscriptions and the `excluded` records (a bystander pipeline's upstream subscriptions, destinations
 * and delivery resources too).
 */
export function liveSummary(s: EmulatorStateSnapshot, fixtureSubscriptions: ReadonlySet<number>, excluded?: Excluded): string[] {
  const out: string[] = [];
  const skipSub = (id: number): boolean => fixtureSubscriptions.has(id) || excluded?.subscriptions.has(id) === true;
  const skipPipeline = (id: string | undefined): boolean => id !== undefined && excluded?.pipelines.has(id) === true;
  for (const x of s.subscriptions) {
    if (x.status === 'invalid' || skipSub(x.id)) continue;
    const params = x.product === 107
      ? Object.keys(x.product_parameters).sort().join('+')
      : Object.entries(x.product_parameters).sort(([a], [b]) => a.localeCompare(b)).map(([k, v]) => `${k}=${v}`).join('&');
    out.push(`subscription product=${x.product} name=${x.name} status=${x.status} identity=${x.remote_identity} storage=${x.storage_group} ${params}`);
  }
  for (const p of s.pipelines) if (!skipPipeline(p.id)) out.push(`pipeline identity=${p.remoteIdentityId} region=${p.region} types=${[...p.notificationTypes].sort().join(',')}`);
  for (const l of s.legacyPipelines) out.push(`legacy-pipeline identity=${l.remoteIdentityId} queue=${l.queueArn}`);
  for (const u of s.upstreamSubscriptions) {
    if (u.enabled && !skipPipeline(u.pipelineId)) out.push(`upstream identity=${u.remoteIdentityId} type=${u.notificationType} ${u.pipelineId ? 'unified' : `legacy=${u.legacySubscriptionId ?? '-'}`}`);
  }
  for (const d of s.destinations) if (!d.shared && !skipPipeline(d.pipelineId)) out.push(`destination ${d.kind} ${d.pipelineId ? 'pipeline' : `legacy=${d.legacySubscriptionId ?? '-'}`}`);
  for (const c of s.cloud) if (!c.shared && !skipPipeline(c.pipelineId)) out.push(`cloud ${c.kind} ${c.region}`);
  const subName = (id: number): string => s.subscriptions.find((x) => x.id === id)?.name ?? String(id);
  for (const h of s.history) {
    if (h.status === 'cancelled' || h.status === 'canceled' || excluded?.subscriptions.has(h.subscription_id)) continue;
    out.push(`history ${subName(h.subscription_id)} ${h.start_date}..${h.end_date} stage=${h.stage_id} ${h.status === 'error' ? 'error' : 'live'}`);
  }
  // Order-level jobs cannot be removed: what matters is that every order ID went out exactly once under each live
  // subscription (the jobs of a subscription that a rollback ended are moot).
  const orderIds = new Map<string, number>();
  const live = new Set(s.subscriptions.filter((x) => x.status !== 'invalid' && !excluded?.subscriptions.has(x.id)).map((x) => x.id));
  for (const j of s.jobs) {
    if (j.is_primary || !j.extra_context || !live.has(j.subscription_id)) continue;
    const ids = (JSON.parse(j.extra_context) as { order_ids?: string[] }).order_ids ?? [];
    for (const id of ids) orderIds.set(`${subName(j.subscription_id)}/${id}`, (orderIds.get(`${subName(j.subscription_id)}/${id}`) ?? 0) + 1);
  }
  const counts = [...orderIds.values()];
  out.push(`order-ids distinct=${orderIds.size} submitted=${counts.reduce((a, b) => a + b, 0)}`);
  return out.sort();
}

export function diff(expected: string[], actual: string[]): string {
  const missing = expected.filter((x) => !actual.includes(x));
  const extra = actual.filter((x) => !expected.includes(x));
  return [...missing.map((m) => `missing: ${m}`), ...extra.map((e) => `extra: ${e}`)].join('; ');
}

/** Where `secrets` appear: the runs' results, or the scenario's files (state, journal, handler log; the second journal's too). */
export function secretsIn(dir: string, results: readonly unknown[], secrets: readonly string[]): string[] {
  const texts: Array<[string, string]> = results.map((r, i) => [`run ${i + 1} output`, JSON.stringify(r)]);
  const walk = (d: string, rel: string): void => {
    for (const f of existsSync(d) ? readdirSync(d) : []) {
      if (statSync(join(d, f)).isDirectory()) walk(join(d, f), `${rel}${f}/`);
      else texts.push([`${rel}${f}`, readFileSync(join(d, f), 'utf8')]);
    }
  };
  walk(dir, '');
  return texts.filter(([, text]) => secrets.some((s) => text.includes(s))).map(([where]) => where);
}
