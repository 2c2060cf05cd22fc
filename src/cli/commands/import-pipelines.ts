/**
 * `dpi import --pipeline-roles`: the account's unified notification pipelines (product 107) declared as one
 * `NotificationPipelineFleet` whose identities adopt them with `existingSubscriptionId`.
 *
 * What the reads show of a pipeline: its subscription (identity, name, storage group), the stored parameters of the
 * vendor's parameter reads (the upstream `subscriptions` map, whose keys are the types that subscribed, and the
 * result `meta`, whose identifiers carry the deployment region) and its identity's type (17 seller, 18 vendor) in the
 * vendor's identity listing. No read shows its roles: they come from the flag. A value no read shows is written as a
 * typed placeholder, `notShown<T>(...)`, that fails the synth naming it: never a guess.
 */
import { DEFAULT_PIPELINE_METADATA_KEYS } from '../../contract';
import { jsonObject } from '../../kinds/notification-pipeline/runtime/handler-stored';
import { NotificationDelivery, NotificationType } from '../../notifications/notification-type';
import { CliError } from '../errors';
import { commentText, idCode, tsString as lit } from './import-code';

/** The deployment regions the unified create and update accept. */
const ACCEPTED_REGIONS = ['us-east-1', 'us-east-2', 'us-west-1', 'us-west-2', 'af-south-1', 'ap-east-1'];
/** A notification type name (as `NotificationType.of` accepts it). */
const TYPE_NAME = /^[A-Z][A-Z0-9_]*$/;
/** An IAM role ARN. */
const ROLE_ARN = /^arn:aws[a-z-]*:iam::\d{12}:role\/[\w+=,.@/-]+$/;

/** The roles of `--pipeline-roles`: two role ARNs (management, event bus), or the construct path of a roles construct. */
export type PipelineRolesSpec =
  | { readonly managementRoleArn: string; readonly eventBusRoleArn?: string }
  | { readonly constructPath: string };

/** Parses `--pipeline-roles <management role ARN>[,<event-bus role ARN>]` or `--pipeline-roles <construct path>`. */
export function parsePipelineRoles(value: string): PipelineRolesSpec {
  const v = value.trim();
  if (v.startsWith('arn:')) {
    const arns = v.split(',').map((s) => s.trim());
    const bad = arns.filter((a) => !ROLE_ARN.test(a));
    if (arns.length > 2 || bad.length > 0) {
      throw new CliError(`--pipeline-roles '${value}' is not accepted: give the management role ARN and, for event-bus types, the event-bus `
        + 'role ARN, comma-separated (arn:aws:iam::<account>:role/<name>), or the construct path of an INotificationPipelineRoles construct');
    }
    return { managementRoleArn: arns[0], ...(arns[1] !== undefined ? { eventBusRoleArn: arns[1] } : {}) };
  }
  if (!/^[A-Za-z0-9][\w .:/-]*$/.test(v) || v.includes('//')) {
    throw new CliError(`--pipeline-roles '${value}' is neither role ARNs (arn:aws:iam::...) nor a construct path (e.g. Shared/PipelineRoles)`);
  }
  return { constructPath: v };
}

/** One unified pipeline the fleet adopts. Undefined fields are not shown by the reads (placeholders in the code). */
export interface ImportedPipeline {
  readonly subscriptionId: string;
  readonly remoteIdentityId: number;
  readonly accountType?: 'seller' | 'vendor';
  /** The types of the stored upstream `subscriptions` map (those that subscribed at the last create or update). */
  readonly notificationTypes?: string[];
  readonly deploymentRegion?: string;
  readonly name?: string;
  readonly storageGroupId?: number;
  readonly status: 'active' | 'paused';
}


/** A map of type names to upstream IDs (strings); undefined when `o` is not one. */
function typesMap(o: Record<string, unknown> | undefined): string[] | undefined {
  if (!o) return undefined;
  const keys = Object.keys(o);
  return keys.every((k) => TYPE_NAME.test(k) && typeof o[k] === 'string') ? keys : undefined;
}

/** The region of an ARN (`arn:partition:service:region:...`). */
const arnRegion = (arn: unknown): string | undefined => (typeof arn === 'string' ? arn.split(':')[3] || undefined : undefined);

/**
 * The types of a pipeline's stored parameters: the `subscriptions` key, else any stored JSON object that maps type
 * names to upstream IDs (a product-107 record may name its own keys); undefined when none is stored or it is empty.
 */
export function storedTypes(stored: Record<string, string> | undefined): string[] | undefined {
  if (!stored) return undefined;
  const candidates = [stored[DEFAULT_PIPELINE_METADATA_KEYS.subscriptions], ...Object.entries(stored)
    .filter(([k]) => k !== DEFAULT_PIPELINE_METADATA_KEYS.subscriptions).map(([, v]) => v)];
  for (const raw of candidates) {
    const types = typesMap(jsonObject(raw));
    if (types && types.length > 0) return [...types].sort();
  }
  return undefined;
}

/** The deployment region the stored result names (`aws_region`, or the region of its delivery ARNs); undefined if none. */
export function storedRegion(stored: Record<string, string> | undefined): string | undefined {
  if (!stored) return undefined;
  const metas = [jsonObject(stored[DEFAULT_PIPELINE_METADATA_KEYS.meta]), ...Object.values(stored).map(jsonObject),
    stored as Record<string, unknown>];
  for (const m of metas) {
    if (!m) continue;
    for (const r of [m.aws_region, arnRegion(m.firehose_arn), arnRegion(m.s3_notification_queue_arn), arnRegion(m.sqs_queue_arn)]) {
      if (typeof r === 'string' && ACCEPTED_REGIONS.includes(r)) return r;
    }
  }
  return undefined;
}

/** The pipeline of a product-107 subscription (with its identity), from what the reads show. */
export function importedPipeline(s: { id: string; status: string; remote_identity?: unknown; storage_group?: unknown; name?: unknown },
  stored: Record<string, string> | undefined, identityTypes: ReadonlyMap<string, number> | undefined): ImportedPipeline {
  const identity = Number(s.remote_identity);
  const type = identityTypes?.get(String(identity));
  const types = storedTypes(stored);
  const region = storedRegion(stored);
  return {
    subscriptionId: s.id,
    remoteIdentityId: identity,
    ...(type === 17 ? { accountType: 'seller' as const } : type === 18 ? { accountType: 'vendor' as const } : {}),
    ...(types ? { notificationTypes: types } : {}),
    ...(region ? { deploymentRegion: region } : {}),
    ...(typeof s.name === 'string' && s.name !== '' ? { name: s.name } : {}),
    ...(s.storage_group !== undefined && s.storage_group !== null && s.storage_group !== '' ? { storageGroupId: Number(s.storage_group) } : {}),
    status: s.status === 'paused' ? 'paused' : 'active',
  };
}

/** The placeholders (values no read shows) of the pipelines, one sentence each. */
export function pipelinePlaceholders(pipelines: readonly ImportedPipeline[]): string[] {
  const out: string[] = [];
  for (const p of pipelines) {
    const missing = [p.accountType ? '' : 'accountType', p.notificationTypes ? '' : 'notificationTypes', p.deploymentRegion ? '' : 'deploymentRegion']
      .filter((x) => x !== '');
    if (missing.length > 0) out.push(`pipeline ${p.subscriptionId} (remote identity ${p.remoteIdentityId}): ${missing.join(', ')}`);
  }
  return out;
}

/** The event-bus types among `names` (the catalogue's delivery path; a name outside it is event-bus, as `NotificationType.of`). */
const eventBusTypes = (names: readonly string[]): string[] => names.filter((n) => NotificationType.of(n).delivery === NotificationDelivery.EVENT_BUS);

/** Refuses ARN roles without an event-bus role when a pipeline has an event-bus type (the synth would refuse it). */
export function checkPipelineRoles(pipelines: readonly ImportedPipeline[], roles: PipelineRolesSpec): void {
  if (!('managementRoleArn' in roles) || roles.eventBusRoleArn) return;
  const needing = pipelines.filter((p) => eventBusTypes(p.notificationTypes ?? []).length > 0).map((p) => p.subscriptionId);
  if (needing.length > 0) {
    throw new CliError(`--pipeline-roles gives no event-bus role ARN, and the pipeline${needing.length > 1 ? 's' : ''} ${needing.slice(0, 10).join(', ')}`
      + `${needing.length > 10 ? ', ...' : ''} ha${needing.length > 1 ? 've' : 's'} event-bus types: give '<management role ARN>,<event-bus role ARN>'; nothing was written`);
  }
}

/** A type as code: the catalogue's member, or `NotificationType.of(...)`. */
const typeCode = (n: string): string => (NotificationType.all().some((t) => t.name === n) ? `NotificationType.${n}` : `NotificationType.of(${lit(n)})`);

/** The names the generated file imports for the pipelines. */
export function pipelineImports(roles: PipelineRolesSpec): string[] {
  return ['AccountType', 'NotificationPipelineFleet', 'NotificationType', 'constructPath' in roles ? 'INotificationPipelineRoles' : 'NotificationPipelineRoles'];
}

/** The header comment lines about the pipelines (what the first deploy does). */
export function pipelineHeader(pipelines: readonly ImportedPipeline[]): string[] {
  const placeholders = pipelinePlaceholders(pipelines);
  return [
    `// ${pipelines.length} unified notification pipeline${pipelines.length === 1 ? '' : 's'} (product 107): one NotificationPipelineFleet whose identities`,
    '// adopt them with existingSubscriptionId. Their types and region are what the service stores, so the first deploy takes',
    '// each over as the service stores it, with no changing call (its stored types, region and account are compared first;',
    '// a pipeline changed in between fails the deploy before any change, naming the difference). The types are the stored',
    '// upstream subscriptions map (those that subscribed at the last create or update; a type that failed then is not',
    '// listed). No read shows the roles: they come from --pipeline-roles and are used from the next change on. A later',
    '// change of types, roles or region sends the unified PATCH (the pipeline\'s upstream subscriptions are made anew; a',
    '// pipeline marked "no queue type" below has its delivery resources recreated). Adopted pipelines are RETAIN:',
    '// removing one (or the stack) releases it and leaves it running.',
    ...(placeholders.length > 0
      ? [`// ${placeholders.length} pipeline${placeholders.length === 1 ? ' has' : 's have'} values no read shows: notShown(...) placeholders fail the synth until you fill them in.`]
      : []),
  ];
}

/** The constructor lines that declare the roles and the fleet (indented for the constructor body). */
export function renderPipelineFleet(pipelines: readonly ImportedPipeline[], roles: PipelineRolesSpec): string[] {
  const out: string[] = [''];
  out.push('    // The unified notification pipelines, adopted (see the header: the first deploy sends one unified PATCH each).');
  if ('constructPath' in roles) {
    out.push(`    const pipelineRoles = rolesAt(this, ${lit(roles.constructPath)});`);
  } else {
    out.push('    const pipelineRoles = NotificationPipelineRoles.fromRoleArns(this, \'PipelineRoles\', {');
    out.push(`      managementRoleArn: ${lit(roles.managementRoleArn)},`);
    if (roles.eventBusRoleArn) out.push(`      eventBusRoleArn: ${lit(roles.eventBusRoleArn)},`);
    out.push('    });');
  }
  out.push('    new NotificationPipelineFleet(this, \'NotificationPipelines\', {');
  out.push('      connection,');
  out.push('      roles: pipelineRoles,');
  out.push('      identities: [');
  for (const p of [...pipelines].sort((a, b) => a.remoteIdentityId - b.remoteIdentityId)) {
    const id = idCode(p.subscriptionId, 'the subscription ID');
    const identity = idCode(p.remoteIdentityId, `the remote identity of pipeline ${id}`);
    const where = `pipeline ${id} (remote identity ${identity})`;
    const notes: string[] = [];
    if (p.status === 'paused') notes.push('its subscription is paused');
    if (p.notificationTypes && !p.notificationTypes.some((n) => NotificationType.of(n).delivery === NotificationDelivery.QUEUE)) {
      notes.push('no queue type: a later unified PATCH (a change of types, roles or region) cleans up and recreates its delivery resources');
    }
    out.push(`        {${notes.length > 0 ? ` // ${commentText(notes.join('; '))}` : ''}`);
    out.push(`          remoteIdentityId: ${identity},`);
    out.push(`          accountType: ${p.accountType ? `AccountType.${p.accountType.toUpperCase()}` : `notShown<AccountType>(${lit(`the account type of ${where}`)})`},`);
    out.push(`          notificationTypes: ${p.notificationTypes
      ? `[${p.notificationTypes.map(typeCode).join(', ')}]`
      : `notShown<NotificationType[]>(${lit(`the notification types of ${where}`)})`},`);
    if (p.name !== undefined) out.push(`          name: ${lit(p.name)},`);
    if (p.storageGroupId !== undefined) out.push(`          storageGroupId: ${idCode(p.storageGroupId, `the storage group of pipeline ${id}`)},`);
    out.push(`          deploymentRegion: ${p.deploymentRegion ? lit(p.deploymentRegion) : `notShown<string>(${lit(`the deployment region of ${where}`)})`},`);
    out.push(`          existingSubscriptionId: ${id},`);
    out.push('        },');
  }
  out.push('      ],');
  out.push('    });');
  return out;
}

/** The helper functions the pipeline code uses (after the class). */
export function pipelineHelpers(pipelines: readonly ImportedPipeline[], roles: PipelineRolesSpec): string[] {
  const out: string[] = [];
  if (pipelinePlaceholders(pipelines).length > 0) {
    out.push('');
    out.push('/** A value no read of the service shows: fails the synth naming it. Replace the call with the pipeline\'s value. */');
    out.push('function notShown<T>(what: string): T {');
    out.push('  throw new Error(`dpi import: ${what} is not shown by the service\'s reads; replace notShown(...) with the value the pipeline '
      + 'has (the first deploy sends it in the unified PATCH)`);');
    out.push('}');
  }
  if ('constructPath' in roles) {
    out.push('');
    out.push('/** The INotificationPipelineRoles construct at `path` (declared in the app before this stack). */');
    out.push('function rolesAt(scope: Construct, path: string): INotificationPipelineRoles {');
    out.push('  const found = scope.node.root.node.findAll().find((c) => c.node.path === path);');
    out.push('  if (!found || !(\'managementRoleArn\' in found) || !(\'managementRole\' in found)) {');
    out.push('    throw new Error(`${scope.node.path}: --pipeline-roles ${path} names no NotificationPipelineRoles construct of the app; declare the roles '
      + 'there before this stack, or import again with the role ARNs`);');
    out.push('  }');
    out.push('  return found as unknown as INotificationPipelineRoles;');
    out.push('}');
  }
  return out;
}
