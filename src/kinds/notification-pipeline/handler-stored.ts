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
import { accountOfArn } from '../../handler/props';

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

function jsonObject(raw: string | undefined): Record<string, unknown> | undefined {
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
  const subs = jsonObject(stored?.[keys.subscriptions]);
  const meta = jsonObject(stored?.[keys.meta]);
  if (!subs || !meta) return undefined;
  const entries = Object.entries(subs);
  if (entries.some(([k, v]) => !TYPE_NAME.test(k) || typeof v !== 'string')) return undefined;
  const regions = new Set<string>();
  const accounts = new Set<string>();
  for (const v of Object.values(meta)) {
    if (typeof v !== 'string' || !v.startsWith('arn:')) continue;
    const [, , , region, account] = v.split(':');
    if (region) regions.add(region);
    if (account && /^\d{12}$/.test(account)) accounts.add(account);
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
}

/**
 * Compares a declaration with what the stored parameters show. The roles are not compared: the management role is
 * the one the service assumes while it configures (its account is compared, through the ARNs of `meta`), and the
 * event-bus delivery role is the account's `service-spapi-firehose-role` (spec), whose account is compared too.
 */
export function compareAdoption(d: DeclaredSelection, shown: StoredPipeline | undefined): AdoptionComparison {
  if (!shown) return { notShown: ['notificationTypes', 'deploymentRegion', 'AWS account'], differs: [] };
  const notShown: string[] = [];
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
  return { notShown, differs };
}
