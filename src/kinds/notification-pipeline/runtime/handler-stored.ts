/**
 * What the service shows of an existing unified pipeline, and whether a declaration matches it (the adoption's
 * comparison, shared by the handler and `dpi plan`).
 *
 * The service offers no read of a pipeline itself. Its product-107 subscription stores the unified result (spec:
 * "the caller must keep `subscriptions` and the full `meta` because update and delete rely on stored subscription
 * metadata"), and the vendor's parameter read (`GET /v2/spp`, an assumption: not in the spec) shows those stored
 * values: the `subscriptions` map (type -> upstream ID; its keys are the types that subscribed) and `meta`, whose AWS
 * ARNs (`s3_notification_queue_arn`, `firehose_arn`, ...: `arn:partition:service:region:account:...`) name the
 * deployment region and the AWS account the pipeline was made in. No read shows the roles.
 */
import { accountOfArn } from '../../../handler/props';
import { NotificationDelivery, NotificationType } from '../../../notifications/notification-type';

/** Whether a type uses the queue path (the construct's catalogue; a name outside it counts as event-bus). */
export function isQueueType(name: string): boolean {
  try {
    return NotificationType.of(name).delivery === NotificationDelivery.QUEUE;
  } catch {
    return false;
  }
}

/**
 * The `meta` keys the spec lists for every pipeline (the shared bucket, its prefix, the object-notification queue and
 * configuration), for one with a queue type (its destination and delivery stream) and for one with an event-bus type
 * (its bus, rule, target and destination): what later updates, deletes and the attributes rely on.
 */
const META_ALWAYS = ['shared_pipeline_id', 's3_bucket_name', 's3_notification_prefix', 's3_notification_queue_arn', 's3_notification_configuration_id'];
const META_QUEUE = ['sqs_destination_id', 'firehose_arn'];
const META_EVENT_BUS = ['event_bus_name', 'eventbridge_rule_id', 'eventbridge_target_id', 'eventbridge_destination_id'];

/** The `meta` keys a result of these types must hold that `meta` lacks (or holds empty). */
export function missingMeta(types: readonly string[], meta: Record<string, unknown>): string[] {
  const want = [...META_ALWAYS, ...(types.some(isQueueType) ? META_QUEUE : []), ...(types.some((t) => !isQueueType(t)) ? META_EVENT_BUS : [])];
  return want.filter((k) => typeof meta[k] !== 'string' || meta[k] === '');
}

/** A pipeline as its stored parameters show it. */
export interface StoredPipeline {
  /** The unified result's `subscriptions` map: type -> upstream subscription ID. */
  readonly subscriptions: Record<string, string>;
  /** The unified result's `meta`. */
  readonly meta: Record<string, unknown>;
  /** The region every regional ARN of `meta` names; undefined when none names one or they disagree. */
  readonly region?: string;
  /** The AWS account every ARN of `meta` names; undefined when none names one or they disagree. */
  readonly account?: string;
}

/** A notification type name. */
const TYPE_NAME = /^[A-Z][A-Z0-9_]*$/;

/** The longest stored `meta` read (a result holds a few dozen identifiers: about 2 KB). */
export const MAX_META_CHARS = 16_384;
/** An AWS ARN: service, region (may be empty), account (may be empty), resource. */
const ARN = /^arn:aws[a-z-]*:([a-z0-9-]+):([a-z0-9-]*):(\d{12}|):[A-Za-z0-9_./:@+=,-]+$/;
/** The services of the ARN-valued keys the attributes and the construct's grants use. */
const ARN_SERVICE: Record<string, string> = { s3_notification_queue_arn: 'sqs', sqs_queue_arn: 'sqs', firehose_arn: 'firehose' };
/** An S3 bucket name (no wildcard). */
const BUCKET = /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/;
/** A key prefix: not empty, no wildcard. */
const PREFIX = /^[A-Za-z0-9][A-Za-z0-9_.!'()/-]*$/;
/** An identifier or name (event bus, rule, destination, pipeline, queue URL path). */
const SAFE_ID = /^[A-Za-z0-9_./:@+=,-]{1,512}$/;

/** Whether a `meta` value has the shape the service writes under its key. */
function metaValueOk(key: string, v: string): boolean {
  if (key === 's3_bucket_name') return BUCKET.test(v);
  if (key === 's3_notification_prefix') return PREFIX.test(v);
  const arn = ARN.exec(v);
  if (ARN_SERVICE[key] !== undefined) return arn !== null && arn[1] === ARN_SERVICE[key] && arn[2] !== '' && arn[3] !== '';
  if (key.endsWith('_arn')) return arn !== null;
  return SAFE_ID.test(v);
}

/** A JSON object of a stored value; undefined when it is not one. */
export function jsonObject(raw: string | undefined): Record<string, unknown> | undefined {
  if (raw === undefined) return undefined;
  try {
    const v = JSON.parse(raw) as unknown;
    return v !== null && typeof v === 'object' && !Array.isArray(v) ? v as Record<string, unknown> : undefined;
  } catch {
    return undefined;
  }
}

/** The single value of a set, or undefined when it is empty or holds more than one. */
const single = (s: Set<string>): string | undefined => (s.size === 1 ? [...s][0] : undefined);

/**
 * The pipeline its stored parameters show, under the product-107 keys the connection uses (`metadataKeys`);
 * undefined when they are not shown (no parameter read, or no readable `subscriptions` and `meta`).
 */
export function storedPipeline(stored: Record<string, string> | undefined,
  keys: { readonly subscriptions: string; readonly meta: string }): StoredPipeline | undefined {
  const rawMeta = stored?.[keys.meta];
  // Anyone who holds the service account can write these values: a size no honest result reaches is not read.
  if (rawMeta === undefined || rawMeta.length > MAX_META_CHARS) return undefined;
  const subs = jsonObject(stored?.[keys.subscriptions]);
  const meta = jsonObject(rawMeta);
  if (!subs || !meta) return undefined;
  const entries = Object.entries(subs);
  if (entries.length === 0 || entries.some(([k, v]) => !TYPE_NAME.test(k) || typeof v !== 'string' || !SAFE_ID.test(v))) return undefined;
  // Every value must be what the service writes there: a string of its shape (an ARN of the right service, a bucket
  // name, a prefix, an identifier). Anything else (a list that prints as an ARN, a wildcard bucket) is not taken.
  if (Object.entries(meta).some(([k, v]) => typeof v !== 'string' || !metaValueOk(k, v))) return undefined;
  const regions = new Set<string>();
  const accounts = new Set<string>();
  for (const v of Object.values(meta) as string[]) {
    const arn = ARN.exec(v);
    if (!arn) continue;
    if (arn[2]) regions.add(arn[2]);
    if (arn[3]) accounts.add(arn[3]);
  }
  const region = single(regions);
  const account = single(accounts);
  return { subscriptions: subs as Record<string, string>, meta, ...(region ? { region } : {}), ...(account ? { account } : {}) };
}

/** What an adoption compares: the declared selection. */
export interface DeclaredSelection {
  readonly types: readonly string[];
  readonly roleArn: string;
  readonly ebRoleArn?: string;
  readonly region: string;
}

/** How a declaration compares with a pipeline the service shows. */
export interface AdoptionComparison {
  /** What the reads do not show (the unified PATCH would be sent blind): empty when everything is shown. */
  readonly notShown: string[];
  /** Where the declaration differs from what the service stores, one phrase each. */
  readonly differs: string[];
  /** Why the stored result cannot be taken as the pipeline's (incomplete; another witness disagrees), one phrase each. */
  readonly doubts: string[];
}

/** Whether the comparison lets the adoption take the pipeline as it is. */
export const matches = (c: AdoptionComparison): boolean => c.notShown.length === 0 && c.differs.length === 0 && c.doubts.length === 0;

/** Why an adoption cannot take the pipeline as it is, in one sentence (empty when it can). */
export function whyNot(c: AdoptionComparison): string {
  return [
    c.differs.length > 0 ? `the pipeline the service stores differs from the declaration (${c.differs.join('; ')})` : '',
    c.notShown.length > 0 ? `the service's reads do not show the pipeline's ${c.notShown.join(', ')}` : '',
    c.doubts.length > 0 ? `its stored result cannot be taken as the pipeline's (${c.doubts.join('; ')})` : '',
  ].filter((x) => x).join('; ');
}

/**
 * Compares a declaration with what the stored parameters show. The roles are not compared: the management role is
 * the one the service assumes while it configures (its account is compared, through the ARNs of `meta`), and the
 * event-bus delivery role is the account's `service-spapi-firehose-role` (spec), whose account is compared too.
 */
export function compareAdoption(d: DeclaredSelection, shown: StoredPipeline | undefined): AdoptionComparison {
  if (!shown) return { notShown: ['notificationTypes', 'deploymentRegion', 'AWS account'], differs: [], doubts: [] };
  const notShown: string[] = [];
  const doubts: string[] = [];
  // A partial result (a record that only looks like a pipeline's, or metadata cut short) is not taken as the pipeline:
  // later updates, deletes and the attributes would act on what it lacks.
  const missing = missingMeta(Object.keys(shown.subscriptions), shown.meta);
  if (missing.length > 0) doubts.push(`its meta lacks ${missing.join(', ')}`);
  const differs: string[] = [];
  const declared = [...new Set(d.types)].sort();
  const stored = Object.keys(shown.subscriptions).sort();
  if (declared.join(',') !== stored.join(',')) {
    differs.push(`notificationTypes: the service stores [${stored.join(', ')}], the declaration has [${declared.join(', ')}]`);
  }
  if (shown.region === undefined) notShown.push('deploymentRegion');
  else if (shown.region !== d.region) differs.push(`deploymentRegion: the service's pipeline is in ${shown.region}, the declaration has ${d.region}`);
  if (shown.account === undefined) {
    notShown.push('AWS account');
  } else {
    const roles = [d.roleArn, d.ebRoleArn].filter((a): a is string => a !== undefined);
    const accounts = [...new Set(roles.map((a) => accountOfArn(a) ?? '(none)'))];
    if (accounts.some((a) => a !== shown.account)) {
      differs.push(`AWS account: the service's pipeline is in ${shown.account}, the roles in ${accounts.join(', ')}`);
    }
  }
  return { notShown, differs, doubts };
}
