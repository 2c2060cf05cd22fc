/**
 * What a notification pipeline stores in its subscription's `product_parameters`: the keys that the product's
 * own record names (`required_meta_fields` of `GET /v2/product/{id}`), filled from the service's result, plus
 * the parts the record names no key for under the connection's default mapping. Every value is a string
 * (JSON-encoded where structured). Nothing else is written (the journal keeps the library's own state).
 */
import { HandlerError } from './errors';

/** Filled by the service from the top-level `remote_identity` (spec: "copied into the stored parameters"). */
export const SERVICE_FILLED_KEYS = new Set(['remote_identity_id']);

/** The `meta` fields of a unified result that the spec names (plus every `sqs_*` queue-path identifier). */
export const RESULT_META_FIELDS = new Set([
  'shared_pipeline_id', 's3_bucket_name', 's3_notification_prefix', 's3_notification_queue_arn', 's3_notification_configuration_id',
  'sqs_destination_id', 'eventbridge_destination_id', 'eventbridge_pipe_arn', 'firehose_arn', 'eventbridge_pipeline_id',
  'event_bus_name', 'eventbridge_rule_id', 'eventbridge_target_id',
]);

/** True when `key` names a field a unified result's `meta` can carry. */
export function isResultMetaField(key: string): boolean {
  return RESULT_META_FIELDS.has(key) || key.startsWith('sqs_');
}

/** How the parts of a result map to stored keys. */
export interface MetadataPlan {
  /** Candidate values by key (everything the result can fill). */
  readonly parts: Record<string, string>;
  /** Parts stored under the default mapping when the product's record names no key for them. */
  readonly defaults: Record<string, string>;
}

/**
 * The `product_parameters` to store: every required key (except those the service fills), and the default parts.
 * Fails with one sentence naming every required key the result cannot fill.
 */
export function storedParameters(product: number, required: readonly string[], plan: MetadataPlan): Record<string, string> {
  const out: Record<string, string> = { ...plan.defaults };
  const missing: string[] = [];
  for (const k of required) {
    if (SERVICE_FILLED_KEYS.has(k)) continue;
    const v = plan.parts[k];
    if (v === undefined || v === '') missing.push(k);
    else out[k] = v;
  }
  if (missing.length > 0) {
    throw new HandlerError(`product ${product} requires the stored parameter${missing.length > 1 ? 's' : ''} ${missing.join(', ')}, `
      + `which the service's result does not fill (it has ${Object.keys(plan.parts).sort().join(', ') || 'nothing'}); `
      + 'map them with the connection\'s pipelineMetadataKeys or report the product record to the service');
  }
  return out;
}

/** A string form of a meta value (numbers as text; objects as JSON). */
export function metaString(v: unknown): string | undefined {
  if (v === undefined || v === null) return undefined;
  return typeof v === 'string' ? v : typeof v === 'object' ? JSON.stringify(v) : String(v);
}
