import { scrub } from './errors';
import { CfnEvent } from './types';

/** Writes one JSON log line (scrubbed of secrets). */
export function log(fields: Record<string, unknown>): void {
  // eslint-disable-next-line no-console
  console.log(scrub(JSON.stringify({ time: new Date().toISOString(), ...fields })));
}

/** Origin of a URL without credentials, path or query. */
function originOf(url: unknown): string {
  if (typeof url !== 'string') return '';
  try {
    const u = new URL(url);
    return `${u.protocol}//${u.host}`;
  } catch {
    return '<invalid URL>';
  }
}

/** A short, redacted summary of resource properties (no secret ARN contents, lists by count, long strings cut). */
export function summarizeProperties(props: Record<string, unknown> | undefined): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(props ?? {})) {
    if (k === 'ServiceToken') continue;
    if (k === 'Connection' && v && typeof v === 'object') {
      const c = v as Record<string, unknown>;
      out.Connection = {
        BaseUrl: originOf(c.BaseUrl),
        AccountId: c.AccountId,
        UserId: c.UserId,
        RefreshTokenSecret: c.RefreshTokenSecretArn ? 'set' : 'missing',
      };
    } else if (Array.isArray(v)) {
      out[k] = v.length <= 5 ? v : `${v.length} items`;
    } else if (v && typeof v === 'object') {
      out[k] = `{${Object.keys(v).slice(0, 20).join(',')}}`;
    } else if (typeof v === 'string' && v.length > 200) {
      out[k] = `${v.slice(0, 200)}...`;
    } else {
      out[k] = v;
    }
  }
  return out;
}

/** Logs the arrival of an event. */
export function logEvent(handler: 'onEvent' | 'isComplete', event: CfnEvent): void {
  log({
    msg: handler,
    RequestType: event.RequestType,
    ResourceType: event.ResourceType,
    LogicalResourceId: event.LogicalResourceId,
    PhysicalResourceId: event.PhysicalResourceId,
    properties: summarizeProperties(event.ResourceProperties),
  });
}
