/**
 * The subscription monitor (`index.monitor`): run on a schedule by `SubscriptionMonitor`, it reads each monitored
 * subscription's transaction records (every page of the service's three-day window), classified exactly as `dpi
 * status` does. Only when the event asks for it (`Source: 'HEALTHCHECKS'`, the construct's `source:
 * MonitorSource.HEALTHCHECKS`) it reads the account's healthchecks listing once per run instead (the latest status of
 * every subscription and payload, `monitor-healthchecks.ts`), falling back to transactions for a monitored
 * subscription without a healthcheck record and where the listing is not served (404) or fails. It publishes the
 * result as CloudWatch embedded-metric-format lines in its log: no PutMetricData call, no secret. A subscription that cannot be read is a metric and a log line, never a crash. What each metric
 * means per source: docs/constructs.md, "SubscriptionMonitor".
 */
import { TxRecord } from '../client';
import { ConnectionProperties } from '../contract';
import { messageOf } from './errors';
import { log } from './log';
import { healthFromChecks, readAccountHealthchecks } from './monitor-healthchecks';
import { invalidIdentitiesLine } from './monitor-identities';
import { PayloadHealth, SubscriptionHealth } from './monitor-types';
import { loopbackHttpAllowed, runtimeFor, scheduledEnvironment } from './runtime';
import { refuseUnboundRun } from './scheduled-binding';
import { LambdaContextLike } from './types';
import { summarise, StatusSummary, TxClass } from '../client/classify';

/** Default namespace of the metrics. */
export const MONITOR_NAMESPACE = 'DataPipelineIntegration';
/** The service keeps transaction records for three days. */
export const MONITOR_WINDOW_DAYS = 3;

/** The event the schedule sends (the rule's input). */
export interface MonitorEvent {
  readonly Connection: ConnectionProperties;
  readonly Subscriptions: ReadonlyArray<{ readonly id: string; readonly label?: string }>;
  readonly Namespace?: string;
  /**
   * Where to read the health from: `HEALTHCHECKS` (the account's listing, with the fallback above); anything else,
   * or none (the input of every monitor synthesized before the choice existed), the transactions.
   */
  readonly Source?: string;
  /** The app's remote identity IDs whose health the run counts (`InvalidIdentities`); none: no identity read. */
  readonly Identities?: ReadonlyArray<string>;
  /** The `Monitor` dimension of `InvalidIdentities` (the monitor's construct path). */
  readonly Monitor?: string;
}

/** True when the event asks for the healthchecks listing. */
export function wantsHealthchecks(event: Pick<MonitorEvent, 'Source'>): boolean {
  return typeof event.Source === 'string' && event.Source.trim().toUpperCase() === 'HEALTHCHECKS';
}

export type { HealthSource, PayloadHealth, SubscriptionHealth } from './monitor-types';

const IN_PROGRESS: readonly TxClass[] = ['in-progress', 'retrying'];

/** Hours from the end of attribution date `date` (YYYY-MM-DD...) to `now` (epoch ms), at least 0. */
function hoursSince(date: string, nowMs: number): number | undefined {
  const day = Date.parse(`${date.slice(0, 10)}T00:00:00Z`);
  if (Number.isNaN(day)) return undefined;
  return Math.max(0, Math.round(((nowMs - (day + 86_400_000)) / 3_600_000) * 10) / 10);
}

/** Health of a subscription from its status summary (the same cells `dpi status` shows). */
export function healthOf(subscriptionId: string, s: StatusSummary, nowMs: number, calls: number, label?: string): SubscriptionHealth {
  const window = MONITOR_WINDOW_DAYS * 24;
  const byPayload = new Map<string, { errors: number; progress: number; fresh?: number }>();
  for (const c of s.cells) {
    const p = byPayload.get(c.payload_name) ?? { errors: 0, progress: 0 };
    p.errors += c.counts.error ?? 0;
    p.progress += IN_PROGRESS.reduce((n, k) => n + (c.counts[k] ?? 0), 0);
    if ((c.counts.loaded ?? 0) > 0) {
      const h = hoursSince(c.attribution_date, nowMs);
      if (h !== undefined) p.fresh = p.fresh === undefined ? h : Math.min(p.fresh, h);
    }
    byPayload.set(c.payload_name, p);
  }
  const payloads: PayloadHealth[] = [...byPayload.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([payload, p]) => ({
    payload, errorRecords: p.errors, inProgressRecords: p.progress, freshnessHours: p.fresh ?? window,
  }));
  return {
    subscriptionId,
    label,
    ok: true,
    source: 'transactions',
    calls,
    payloads,
    errorRecords: payloads.reduce((n, p) => n + p.errorRecords, 0),
    inProgressRecords: payloads.reduce((n, p) => n + (p.inProgressRecords ?? 0), 0),
    freshnessHours: payloads.length === 0 ? window : Math.min(...payloads.map((p) => p.freshnessHours)),
  };
}

/** The embedded-metric-format lines of one subscription's health (one per payload, one for the subscription). */
export function emfLines(h: SubscriptionHealth, namespace: string, timestampMs: number): string[] {
  // InProgressRecords is known from transactions only: it is left out of the lines of the healthchecks source.
  const progress = (n: number | undefined): Record<string, [number, string]> => (n === undefined ? {} : { InProgressRecords: [n, 'Count'] });
  const line = (dimensions: Record<string, string>, metrics: Record<string, [number, string]>): string => JSON.stringify({
    _aws: {
      Timestamp: timestampMs,
      CloudWatchMetrics: [{
        Namespace: namespace,
        Dimensions: [Object.keys(dimensions)],
        Metrics: Object.entries(metrics).map(([Name, [, Unit]]) => ({ Name, Unit })),
      }],
    },
    ...dimensions,
    Source: h.source,
    ...Object.fromEntries(Object.entries(metrics).map(([k, [v]]) => [k, v])),
  });
  if (!h.ok) return [line({ SubscriptionId: h.subscriptionId }, { MonitorFailed: [1, 'Count'], MonitorCalls: [h.calls, 'Count'] })];
  return [
    ...h.payloads.map((p) => line({ SubscriptionId: h.subscriptionId, Payload: p.payload }, {
      ErrorRecords: [p.errorRecords, 'Count'], ...progress(p.inProgressRecords), FreshnessHours: [p.freshnessHours, 'None'],
    })),
    line({ SubscriptionId: h.subscriptionId }, {
      ErrorRecords: [h.errorRecords, 'Count'],
      ...progress(h.inProgressRecords),
      FreshnessHours: [h.freshnessHours, 'None'],
      MonitorFailed: [0, 'Count'],
      MonitorCalls: [h.calls, 'Count'],
    }),
  ];
}

/** Where the metric lines go (stdout: one raw JSON line each, which CloudWatch Logs turns into metrics). */
let sink: (line: string) => void = (l) => {
  process.stdout.write(`${l}\n`);
};

/** Writes one metric line to the sink (the drift check's lines go the same way). */
export function emitMetricLine(line: string): void {
  sink(line);
}

/** Replaces the sink of the metric lines (tests). Returns the previous one. */
export function setMetricSink(next: (line: string) => void): (line: string) => void {
  const prev = sink;
  sink = next;
  return prev;
}

/** The health of a subscription whose records could not be read. */
function failedRead(subscriptionId: string, label: string | undefined, calls: number, error: string): SubscriptionHealth {
  return { subscriptionId, label, ok: false, error, source: 'transactions', calls, payloads: [], errorRecords: 0, inProgressRecords: 0, freshnessHours: 0 };
}

/** Reads one subscription's records (every page of the window) and classifies them. */
async function read(rt: ReturnType<typeof runtimeFor>, id: string, nowMs: number, label?: string): Promise<SubscriptionHealth> {
  let calls = 0;
  try {
    const records: TxRecord[] = [];
    const since = Math.floor(nowMs / 1000) - MONITOR_WINDOW_DAYS * 86_400;
    for await (const page of rt.client.tx.pages({ subscription_id: id, timestamp_from: since, limit: 200 })) {
      calls++;
      records.push(...page.records);
    }
    return healthOf(id, summarise(records), nowMs, calls, label);
  } catch (e) {
    const error = messageOf(e);
    log({ level: 'ERROR', msg: 'the monitor could not read the subscription\'s transactions', subscriptionId: id, error });
    return failedRead(id, label, Math.max(calls, 1), error);
  }
}

/** Handles one scheduled run. */
export async function monitor(event: MonitorEvent, context?: LambdaContextLike): Promise<{ subscriptions: number; failed: number; calls: number }> {
  // Before anything is read or published: the run must be the one its rule sends (src/handler/scheduled-binding.ts).
  refuseUnboundRun('monitor', event, scheduledEnvironment(), loopbackHttpAllowed());
  const namespace = event.Namespace || MONITOR_NAMESPACE;
  const subs = Array.isArray(event.Subscriptions) ? event.Subscriptions : [];
  let rt: ReturnType<typeof runtimeFor> | undefined;
  try {
    rt = runtimeFor(event.Connection, context, scheduledEnvironment());
  } catch (e) {
    log({ level: 'ERROR', msg: 'the monitor has no usable connection', error: messageOf(e) });
  }
  const nowMs = Date.now();
  let failed = 0;
  let calls = 0;
  // Asked for: the account's healthchecks listing, once per run (calls: its pages); a subscription it has no record of,
  // or every subscription where it is not served or fails, is read from its transactions. Not asked: transactions only.
  const checks = rt && subs.length > 0 && wantsHealthchecks(event)
    ? await readAccountHealthchecks(rt.client, connectionAccountId(event.Connection)) : undefined;
  if (checks) calls += checks.calls;
  const window = MONITOR_WINDOW_DAYS * 24;
  let fromChecks = 0;
  for (const s of subs) {
    const id = String(s.id);
    const records = checks?.served ? checks.bySubscription.get(id) : undefined;
    let h: SubscriptionHealth;
    if (!rt) h = failedRead(id, s.label, 0, 'no usable connection');
    else if (records && records.length > 0) h = healthFromChecks(id, records, nowMs, window, s.label);
    else h = await read(rt, id, nowMs, s.label);
    if (h.source === 'healthchecks') fromChecks++;
    if (!h.ok) failed++;
    calls += h.calls;
    for (const l of emfLines(h, namespace, nowMs)) sink(l);
  }
  if (rt && Array.isArray(event.Identities) && event.Identities.length > 0) {
    const line = await invalidIdentitiesLine(rt, event.Identities.map(String), String(event.Monitor ?? ''), namespace, nowMs);
    calls += 1;
    if (line) sink(line);
  }
  const healthchecks = !wantsHealthchecks(event) ? 'not asked'
    : checks === undefined ? 'not read' : checks.served ? 'served' : checks.reason;
  log({ msg: 'monitor run', subscriptions: subs.length, failed, calls, healthchecks, fromHealthchecks: fromChecks, fromTransactions: subs.length - fromChecks });
  return { subscriptions: subs.length, failed, calls };
}

/** The connection's account ID, when it names one (the listing's account when the token carries no claim). */
function connectionAccountId(c: ConnectionProperties): string | undefined {
  const v = c && typeof c === 'object' ? c.AccountId : undefined;
  return v !== undefined && v !== null && String(v) !== '' ? String(v) : undefined;
}
