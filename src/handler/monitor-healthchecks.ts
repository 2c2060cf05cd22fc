/**
 * The subscription monitor's opt-in source (`MonitorSource.HEALTHCHECKS`, the event's `Source: 'HEALTHCHECKS'`): the
 * account's healthchecks listing (vendor docs; one call per 100 records for the whole account), read once per run. It
 * is cheaper than transactions but measures something else (the latest run of each payload, not every record):
 * docs/constructs.md, "SubscriptionMonitor". A subscription without a healthcheck record, or every
 * subscription where the listing is not served (404) or fails, is read from its transactions instead (`monitor.ts`).
 */
import { messageOf } from './errors';
import { log } from './log';
import { PayloadHealth, SubscriptionHealth } from './monitor-types';
import { DpiClient, HealthcheckRecord } from '../client';
import { healthcheckTimeMs, latestPerPayload } from '../client/healthchecks';

export { vendorTimeMs } from '../client/healthchecks';

/** The listing of one run: the records per subscription ID, or why there are none. */
export type AccountHealthchecks =
  | { readonly served: true; readonly bySubscription: ReadonlyMap<string, HealthcheckRecord[]>; readonly calls: number }
  | { readonly served: false; readonly calls: number; readonly reason: string };

/** Reads the account's healthchecks listing once (every page). Never throws. */
export async function readAccountHealthchecks(client: DpiClient, accountId: string | undefined): Promise<AccountHealthchecks> {
  let calls = 0;
  try {
    const records = await client.healthchecks.list({ accountId, onPage: () => { calls++; } });
    if (records === undefined) return { served: false, calls: Math.max(calls, 1), reason: 'not served (404)' };
    const bySubscription = new Map<string, HealthcheckRecord[]>();
    for (const r of records) {
      const list = bySubscription.get(r.subscription_id) ?? [];
      list.push(r);
      bySubscription.set(r.subscription_id, list);
    }
    return { served: true, bySubscription, calls };
  } catch (e) {
    const reason = messageOf(e);
    log({ level: 'WARN', msg: 'the monitor could not read the healthchecks listing; reading transactions instead', error: reason });
    return { served: false, calls: Math.max(calls, 1), reason };
  }
}

/**
 * Health of a subscription from its healthcheck records (the latest per payload): `ErrorRecords` = payloads whose
 * latest status is ERROR; `FreshnessHours` = hours since the payload's latest OK healthcheck (the window when its
 * latest is not OK); in-progress work is not known (not published).
 */
export function healthFromChecks(subscriptionId: string, records: readonly HealthcheckRecord[], nowMs: number, windowHours: number,
  label?: string): SubscriptionHealth {
  const byPayload = new Map<string, { error: boolean; fresh?: number }>();
  // One record per payload is expected; if the service sends more (a history of checks), the newest counts.
  for (const r of latestPerPayload(records)) {
    const at = healthcheckTimeMs(r);
    const fresh = r.status === 'OK' && at > 0 ? Math.max(0, Math.round(((nowMs - at) / 3_600_000) * 10) / 10) : undefined;
    byPayload.set(r.payload_name || '-', { error: r.status === 'ERROR', fresh });
  }
  const payloads: PayloadHealth[] = [...byPayload.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([payload, p]) => ({
    payload, errorRecords: p.error ? 1 : 0, freshnessHours: p.fresh ?? windowHours,
  }));
  return {
    subscriptionId,
    label,
    ok: true,
    source: 'healthchecks',
    calls: 0,
    payloads,
    errorRecords: payloads.reduce((n, p) => n + p.errorRecords, 0),
    freshnessHours: payloads.length === 0 ? windowHours : Math.min(...payloads.map((p) => p.freshnessHours)),
  };
}
