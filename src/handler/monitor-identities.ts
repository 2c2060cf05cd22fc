/**
 * The monitor's identity health: one `GET /sri` per run counts the app's remote identities the service marks invalid
 * (`invalid_identity` 1: the seller revoked access or its token expired) as one fleet-level metric, `InvalidIdentities`
 * (dimension `Monitor`). The field is a vendor read field: where the reads lack it (minimal reads) nothing is published
 * (the alarm sees missing data, not a count) and the run logs why; a failed read is logged and publishes nothing.
 */
import { messageOf } from './errors';
import { log } from './log';
import { runtimeFor } from './runtime';

/** The metric's name. */
export const INVALID_IDENTITIES_METRIC = 'InvalidIdentities';

/** Reads the account's identities and returns the metric line, or undefined when the health is unknown. */
export async function invalidIdentitiesLine(rt: ReturnType<typeof runtimeFor>, ids: string[], monitor: string, namespace: string,
  timestampMs: number): Promise<string | undefined> {
  let all;
  try {
    all = await rt.client.remoteIdentities.list();
  } catch (e) {
    log({ level: 'ERROR', msg: 'the monitor could not read the remote identities: InvalidIdentities is not published', error: messageOf(e) });
    return undefined;
  }
  const wanted = new Set(ids);
  const mine = all.filter((r) => wanted.has(String(r.id)));
  if (!mine.some((r) => r.invalid_identity !== undefined && r.invalid_identity !== null)) {
    log({
      level: 'WARNING',
      msg: 'the service\'s identity reads carry no invalid_identity (minimal reads): identity health is unknown, InvalidIdentities is not published',
      identities: ids.length,
      seen: mine.length,
    });
    return undefined;
  }
  const invalid = mine.filter((r) => Number(r.invalid_identity) === 1);
  if (invalid.length > 0) {
    log({
      level: 'WARNING',
      msg: 'remote identities the service marks invalid: the seller must re-authorize them',
      invalid: invalid.map((r) => ({ id: r.id, invalidatedAt: r.invalidated_at ?? null })),
    });
  }
  return JSON.stringify({
    _aws: {
      Timestamp: timestampMs,
      CloudWatchMetrics: [{ Namespace: namespace, Dimensions: [['Monitor']], Metrics: [{ Name: INVALID_IDENTITIES_METRIC, Unit: 'Count' }] }],
    },
    Monitor: monitor,
    [INVALID_IDENTITIES_METRIC]: invalid.length,
  });
}
