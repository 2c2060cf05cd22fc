/** The unified notification pipeline's setup: what the service validates and the cloud resources it makes. */
import { ApiError, Ctx, envelopeAttributes, errorsBody, fail, parseIntStrict, Principal, queryOne } from '../core';
import { checkTypes } from '../domain';
import { RemoteIdentityFixture } from '../fixtures';
import { accountTypeOfIdentityType, AccountType, deliveryPathOf, DeliveryPath, notificationTypesFor } from '../notification-types';
import { CloudResource, PipelineRecord, SubscriptionRecord } from '../state';

export const ACCEPTED_REGIONS = ['us-east-1', 'us-east-2', 'us-west-1', 'us-west-2', 'af-south-1', 'ap-east-1'];
export const FIREHOSE_ROLE_NAME = 'service-spapi-firehose-role';
/**
 * Name prefix of every resource a unified pipeline provisions in the customer account (queues, delivery stream,
 * pipe, rule, target, notification configuration, the shared bucket and, after the service's log-group paths,
 * the log groups). It is the default `resourceNamePrefix` (and shared bucket prefix) of `NotificationPipelineRoles`,
 * whose least-privilege management policy covers only names with this prefix.
 */
export const NAME_PREFIX = 'spapi-';
/**
 * Name of the permissions boundary that the service attaches to every pipe execution role it creates, by
 * convention `<prefix>pipe-role-boundary` (created by `NotificationPipelineRoles`).
 */
export const PIPE_ROLE_BOUNDARY_NAME = `${NAME_PREFIX}pipe-role-boundary`;
/**
 * IAM path under which the service creates the pipe execution roles, by convention `/<prefix>pipe-roles/` (the only
 * path under which `NotificationPipelineRoles` lets it create, change and pass roles).
 */
export const PIPE_ROLE_PATH = `/${NAME_PREFIX}pipe-roles/`;
const ROLE_ARN = /^arn:aws[a-z-]*:iam::(\d{12}):role\/[\w+=,.@/-]{1,512}$/;
export const QUEUE_ARN = /^arn:aws[a-z-]*:sqs:[a-z0-9-]+:\d{12}:[\w-]{1,80}$/;

interface SetupInput {
  types: string[];
  roleArn: string;
  ebRoleArn?: string;
  region: string;
  awsAccount: string;
  accountType: AccountType;
}

interface SetupResult {
  subscriptions: Record<string, string>;
  failed: Record<string, { code: string; message: string }>;
  meta: Record<string, string>;
}

export function listTypes(req: { query: unknown }): unknown {
  const t = queryOne(req.query, 'account_type');
  if (t !== 'seller' && t !== 'vendor') fail(400, "account_type is required and must be 'seller' or 'vendor'");
  return { data: { type: 'SPAPINotifications', attributes: { notification_types: notificationTypesFor(t) } } };
}

/** Validates a unified create/update body (400) and the customer roles (403). */
export function validateUnified(ctx: Ctx, identity: RemoteIdentityFixture, body: unknown): SetupInput {
  const { attrs } = envelopeAttributes(body, 'Service');
  if (attrs.queue_arn !== undefined) fail(400, 'queue_arn is not a unified attribute; the delivery destination is chosen automatically');
  const types = checkTypes(attrs.notification_types, identity);
  if (typeof attrs.role_arn !== 'string' || attrs.role_arn === '') fail(400, 'role_arn is required');
  const m = ROLE_ARN.exec(attrs.role_arn);
  if (!m) fail(400, 'role_arn must be an IAM role ARN');
  if (typeof attrs.aws_region !== 'string' || !ACCEPTED_REGIONS.includes(attrs.aws_region)) {
    fail(400, `aws_region must be one of ${ACCEPTED_REGIONS.join(', ')}`);
  }
  const awsAccount = m[1];
  const needsEb = types.some((t) => deliveryPathOf(t) === 'eventbridge');
  let ebRoleArn: string | undefined;
  if (needsEb) {
    if (typeof attrs.eb_to_fh_role_arn !== 'string' || attrs.eb_to_fh_role_arn === '') {
      fail(400, 'eb_to_fh_role_arn is required when event-bus notification types are selected');
    }
    if (!ROLE_ARN.test(attrs.eb_to_fh_role_arn)) fail(400, 'eb_to_fh_role_arn must be an IAM role ARN');
    ebRoleArn = attrs.eb_to_fh_role_arn;
  } else if (attrs.eb_to_fh_role_arn !== undefined && typeof attrs.eb_to_fh_role_arn !== 'string') {
    fail(400, 'eb_to_fh_role_arn must be a string');
  }
  const legacy = ctx.s.subscriptions.find((x) => x.product === 86 && x.status === 'active' && x.account === identity.account
    && (x.remote_identity === identity.id || x.product_parameters.remote_identity_id === String(identity.id)));
  if (legacy) {
    fail(400, `remote identity ${identity.id} has an active legacy queue notification pipeline (product 86, subscription ${legacy.id}); delete it before creating a unified pipeline`);
  }
  const role = ctx.s.cloudRoles.find((r) => r.roleArn === attrs.role_arn && r.accountId === awsAccount);
  if (!role || !role.trustsService) fail(403, `cannot assume role ${attrs.role_arn as string}: the role does not exist or does not trust the service`);
  if (ebRoleArn && !ctx.s.cloudRoles.some((r) => r.roleArn === ebRoleArn)) {
    fail(403, `role ${ebRoleArn} (eb_to_fh_role_arn) was not found in the customer account`);
  }
  return {
    types,
    roleArn: attrs.role_arn as string,
    ebRoleArn,
    region: attrs.aws_region as string,
    awsAccount,
    accountType: accountTypeOfIdentityType(identity.remote_identity_type_id),
  };
}

function addResource(ctx: Ctx, r: CloudResource): CloudResource {
  const existing = ctx.s.cloud.find((x) => x.kind === r.kind && x.id === r.id && x.accountId === r.accountId && x.region === r.region);
  if (existing) return existing;
  ctx.s.cloud.push(r);
  return r;
}

export function removePipelineResources(ctx: Ctx, pipelineId: string, path?: DeliveryPath): void {
  ctx.s.cloud = ctx.s.cloud.filter((r) => !(r.pipelineId === pipelineId && !r.shared && (path === undefined || r.details?.path === path)));
  if (path === undefined || path === 'sqs') ctx.s.destinations = ctx.s.destinations.filter((d) => !(d.pipelineId === pipelineId && !d.shared));
}

/** Provisions (or reuses) the pipeline of `input`. `keep` = an existing pipeline whose queue path is reused. */
export function setup(ctx: Ctx, who: Principal, identity: RemoteIdentityFixture, input: SetupInput, keep?: PipelineRecord): SetupResult {
  const s = ctx.s;
  const { awsAccount: acct, region } = input;
  const queueTypes = input.types.filter((t) => deliveryPathOf(t) === 'sqs');
  const ebTypes = input.types.filter((t) => deliveryPathOf(t) === 'eventbridge');
  const sharedEbDest = s.destinations.find((d) => d.kind === 'eventbridge' && d.shared && d.accountId === acct && d.region === region);
  const keptSqsDest = keep?.meta.sqs_destination_id;

  // Destination conflicts (checked before anything is provisioned).
  for (const t of input.types) {
    const expected = deliveryPathOf(t) === 'sqs' ? keptSqsDest : sharedEbDest?.id;
    const other = s.upstreamSubscriptions.find((u) => u.remoteIdentityId === identity.id && u.notificationType === t && u.enabled
      && u.destinationId !== expected);
    if (other) {
      fail(400, `notification type ${t} already has an upstream subscription (${other.id}) at a different destination (${other.destinationId}); delete it first`);
    }
  }
  const firehoseRoleArn = `arn:aws:iam::${acct}:role/${FIREHOSE_ROLE_NAME}`;
  const hasFirehoseRole = s.cloudRoles.some((r) => r.roleArn === firehoseRoleArn);

  const created: CloudResource[] = [];
  const add = (r: CloudResource): CloudResource => {
    const before = s.cloud.length;
    const out = addResource(ctx, r);
    if (s.cloud.length > before) created.push(out);
    return out;
  };
  const pipelineId = keep?.id ?? `pl-${++s.counters.pipeline}`;
  const bucket = `${NAME_PREFIX}notifications-${acct}-${region}`;
  const sharedPipelineId = `shared-${acct}-${region}`;
  add({ kind: 's3-bucket', id: bucket, arn: `arn:aws:s3:::${bucket}`, accountId: acct, region, shared: true });
  const prefix = keep?.prefix ?? `notifications/${identity.id}/${pipelineId}/`;
  const objQueue = `${NAME_PREFIX}${pipelineId}-objects`;
  const objQueueArn = `arn:aws:sqs:${region}:${acct}:${objQueue}`;
  const configId = `${NAME_PREFIX}${pipelineId}-object-created`;
  const stream = `${NAME_PREFIX}${pipelineId}`;
  const firehoseArn = `arn:aws:firehose:${region}:${acct}:deliverystream/${stream}`;
  add({ kind: 'sqs-queue', id: objQueue, arn: objQueueArn, accountId: acct, region, pipelineId, shared: false, details: { purpose: 'object-notifications' } });
  add({ kind: 's3-notification-configuration', id: configId, accountId: acct, region, pipelineId, shared: false, details: { bucket, prefix, queue: objQueueArn } });
  add({ kind: 'firehose-delivery-stream', id: stream, arn: firehoseArn, accountId: acct, region, pipelineId, shared: false, details: { bucket, prefix, role: firehoseRoleArn } });
  add({ kind: 'log-group', id: `/aws/kinesisfirehose/${NAME_PREFIX}${pipelineId}`, accountId: acct, region, pipelineId, shared: false });

  const meta: Record<string, string> = {
    shared_pipeline_id: sharedPipelineId,
    s3_bucket_name: bucket,
    s3_notification_prefix: prefix,
    s3_notification_queue_arn: objQueueArn,
    s3_notification_configuration_id: configId,
    firehose_arn: firehoseArn,
    aws_account_id: acct,
    aws_region: region,
    pipeline_id: pipelineId,
  };
  const failed: SetupResult['failed'] = {};
  const subscriptions: Record<string, string> = {};
  let sqsDestId: string | undefined;
  let ebDestId: string | undefined;

  if (queueTypes.length > 0) {
    if (keep && keep.meta.sqs_queue_arn && keptSqsDest) {
      for (const k of Object.keys(keep.meta).filter((x) => x.startsWith('sqs_') || x === 'eventbridge_pipe_arn')) meta[k] = keep.meta[k];
      sqsDestId = keptSqsDest;
    } else {
      const src = `${NAME_PREFIX}${pipelineId}-source`;
      const pipe = `${NAME_PREFIX}${pipelineId}`;
      const pipeLogGroup = `/aws/vendedlogs/pipes/${NAME_PREFIX}${pipelineId}`;
      const srcArn = `arn:aws:sqs:${region}:${acct}:${src}`;
      const pipeArn = `arn:aws:pipes:${region}:${acct}:pipe/${pipe}`;
      add({ kind: 'sqs-queue', id: src, arn: srcArn, accountId: acct, region, pipelineId, shared: false, details: { path: 'sqs', purpose: 'upstream-source' } });
      add({ kind: 'log-group', id: pipeLogGroup, accountId: acct, region, pipelineId, shared: false, details: { path: 'sqs' } });
      // The pipe's execution role (trusted by pipes.amazonaws.com; reads the source queue, puts records into the
      // delivery stream, writes the pipe log group), created by the service under the pipe role path and the prefix
      // with the permissions boundary `<prefix>pipe-role-boundary` of NotificationPipelineRoles.
      const pipeRole = `${NAME_PREFIX}${pipelineId}-pipe`;
      const pipeRoleArn = `arn:aws:iam::${acct}:role${PIPE_ROLE_PATH}${pipeRole}`;
      const permissionsBoundary = `arn:aws:iam::${acct}:policy/${PIPE_ROLE_BOUNDARY_NAME}`;
      const pipeRoleDetails = { path: 'sqs', trustedBy: 'pipes.amazonaws.com', permissionsBoundary, source: srcArn, target: firehoseArn, logGroup: pipeLogGroup };
      add({ kind: 'iam-role', id: pipeRole, arn: pipeRoleArn, accountId: acct, region, pipelineId, shared: false, details: pipeRoleDetails });
      add({ kind: 'pipe', id: pipe, arn: pipeArn, accountId: acct, region, pipelineId, shared: false, details: { path: 'sqs', source: srcArn, target: firehoseArn, role: pipeRoleArn } });
      sqsDestId = `sqs-dest-${++s.counters.destination}`;
      s.destinations.push({ id: sqsDestId, kind: 'sqs', arn: srcArn, accountId: acct, region, shared: false, pipelineId });
      Object.assign(meta, {
        sqs_queue_arn: srcArn,
        sqs_queue_url: `https://sqs.${region}.amazonaws.com/${acct}/${src}`,
        sqs_pipe_role_arn: pipeRoleArn,
        sqs_log_group_name: pipeLogGroup,
        eventbridge_pipe_arn: pipeArn,
      });
    }
    meta.sqs_destination_id = sqsDestId;
  }
  if (ebTypes.length > 0 && hasFirehoseRole) {
    const busName = `aws.partner/sellingpartnerapi.amazon/${acct}`;
    add({ kind: 'event-bus', id: busName, arn: `arn:aws:events:${region}:${acct}:event-bus/${busName}`, accountId: acct, region, shared: true });
    if (!sharedEbDest) {
      ebDestId = `eb-dest-${++s.counters.destination}`;
      s.destinations.push({ id: ebDestId, kind: 'eventbridge', arn: `arn:aws:events:${region}:${acct}:event-bus/${busName}`, accountId: acct, region, shared: true });
    } else {
      ebDestId = sharedEbDest.id;
    }
    const rule = `${NAME_PREFIX}${pipelineId}-rule`;
    const target = `${NAME_PREFIX}${pipelineId}-target`;
    add({ kind: 'eventbridge-rule', id: rule, accountId: acct, region, pipelineId, shared: false, details: { path: 'eventbridge', bus: busName } });
    add({ kind: 'eventbridge-target', id: target, accountId: acct, region, pipelineId, shared: false, details: { path: 'eventbridge', rule, target: firehoseArn, role: input.ebRoleArn ?? '' } });
    Object.assign(meta, {
      eventbridge_pipeline_id: pipelineId,
      event_bus_name: busName,
      eventbridge_rule_id: rule,
      eventbridge_target_id: target,
      eventbridge_destination_id: ebDestId,
    });
  }

  const createdUpstream: string[] = [];
  for (const t of input.types) {
    const path = deliveryPathOf(t);
    const dest = path === 'sqs' ? sqsDestId : ebDestId;
    if (path === 'eventbridge' && !hasFirehoseRole) {
      failed[t] = { code: 'InvalidInput', message: `delivery role ${FIREHOSE_ROLE_NAME} not found in account ${acct}` };
      continue;
    }
    if (s.failingNotificationTypes.includes(t) || dest === undefined) {
      failed[t] = { code: 'InternalFailure', message: `upstream subscription for ${t} failed (emulated)` };
      continue;
    }
    const existing = s.upstreamSubscriptions.find((u) => u.remoteIdentityId === identity.id && u.notificationType === t
      && u.destinationId === dest);
    if (existing) {
      existing.enabled = true;
      existing.pipelineId = pipelineId;
      subscriptions[t] = existing.id;
    } else {
      const id = `upstream-${++s.counters.upstream}`;
      s.upstreamSubscriptions.push({
        id, remoteIdentityId: identity.id, notificationType: t, destinationId: dest, enabled: true, createdAt: ctx.now(), pipelineId,
      });
      createdUpstream.push(id);
      subscriptions[t] = id;
    }
  }
  // A requested delivery path with no subscribed type fails the setup.
  const pathFailed = (types: string[]): boolean => types.length > 0 && types.every((t) => failed[t] !== undefined);
  if (pathFailed(queueTypes) || pathFailed(ebTypes)) {
    s.upstreamSubscriptions = s.upstreamSubscriptions.filter((u) => !createdUpstream.includes(u.id));
    s.cloud = s.cloud.filter((r) => !created.includes(r) || r.shared);
    if (!keep) s.destinations = s.destinations.filter((d) => !(d.pipelineId === pipelineId && !d.shared));
    const detail = Object.entries(failed).map(([t, f]) => `${t}: ${f.message}`).join('; ');
    throw new ApiError(400, { ...errorsBody(400, `notification setup failed: ${detail}`), failed });
  }
  add({
    kind: 's3-object',
    id: `${bucket}/${prefix}_setup-check.json`,
    accountId: acct,
    region,
    shared: true,
    details: { bucket, key: `${prefix}_setup-check.json` },
  });
  const rec: PipelineRecord = {
    id: pipelineId,
    account: who.account,
    remoteIdentityId: identity.id,
    awsAccountId: acct,
    region,
    prefix,
    notificationTypes: Object.keys(subscriptions),
    meta,
  };
  s.pipelines = s.pipelines.filter((p) => p.id !== pipelineId);
  s.pipelines.push(rec);
  return { subscriptions, failed, meta };
}

export function result207(r: SetupResult): unknown {
  return { data: { type: 'SPAPINotifications', attributes: { subscriptions: r.subscriptions, failed: r.failed, meta: r.meta } } };
}

/** Ownership checks of unified/legacy PATCH and DELETE. */
export function ownedPipelineSubscription(ctx: Ctx, who: Principal, rawRid: unknown, rawSid: unknown, product: number): SubscriptionRecord {
  const sid = parseIntStrict(rawSid);
  const sub = sid === undefined ? undefined : ctx.s.subscriptions.find((x) => x.id === sid);
  if (!sub) fail(404, `subscription ${String(rawSid)} not found`);
  if (sub.account !== who.account) fail(403, `subscription ${sub.id} belongs to a different account`);
  if (sub.product !== product) fail(403, `subscription ${sub.id} is not a product ${product} subscription`);
  const rid = String(rawRid);
  if (String(sub.remote_identity) !== rid && sub.product_parameters.remote_identity_id !== rid) {
    fail(403, `subscription ${sub.id} belongs to a different remote identity`);
  }
  return sub;
}
