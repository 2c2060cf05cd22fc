// fastify is bundled into the dpi CLI by esbuild, so a devDependency is enough.
// eslint-disable-next-line import/no-extraneous-dependencies
import { FastifyInstance } from 'fastify';
import { Ctx, envelopeAttributes, fail, isObj, Principal, principal } from '../core';
import { checkTypes, ownedIdentity, removeLegacyPipeline, seedLegacyPipeline, spIdentity } from '../domain';
import { RemoteIdentityFixture } from '../fixtures';
import { deliveryPathOf, DeliveryPath, isValidNotificationType } from '../notification-types';
import { PipelineRecord, SubscriptionRecord } from '../state';
import { listTypes, ownedPipelineSubscription, QUEUE_ARN, removePipelineResources, result207, setup, validateUnified } from './notification-setup';

/** Every field name of the `meta` object of a unified result (a stored key of one of these names holds that value). */
export const RESULT_META_FIELDS = [
  'shared_pipeline_id', 's3_bucket_name', 's3_notification_prefix', 's3_notification_queue_arn', 's3_notification_configuration_id',
  'firehose_arn', 'aws_account_id', 'aws_region', 'pipeline_id',
  'sqs_queue_arn', 'sqs_queue_url', 'sqs_pipe_role_arn', 'sqs_log_group_name', 'eventbridge_pipe_arn', 'sqs_destination_id',
  'eventbridge_pipeline_id', 'event_bus_name', 'eventbridge_rule_id', 'eventbridge_target_id', 'eventbridge_destination_id',
] as const;
/** Meta fields that identify a pipeline (a JSON object holding one of them is a full meta object). */
const PIPELINE_IDENTIFIERS = ['pipeline_id', 's3_notification_prefix', 'shared_pipeline_id', 'sqs_destination_id', 'eventbridge_pipeline_id', 'firehose_arn'];
const UNIFIED_PRODUCT = 107;

interface StoredPipeline {
  /** Upstream subscriptions map (notification type -> upstream subscription ID); empty when none is stored. */
  subscriptions: Record<string, string>;
  /** The pipeline the stored identifiers name. */
  pipeline: PipelineRecord;
}

/**
 * Reads the stored metadata of a product-107 subscription under the keys that the emulator's own product-107
 * record names in `required_meta_fields`, and locates the pipeline from it (400 when a key is missing, empty or
 * cannot be interpreted, or when the identifiers name no pipeline of this account and identity). Rule
 * (docs/emulator.md): `remote_identity_id` is the identity; a key named like a result meta field holds that value
 * as a plain string; a JSON object holding pipeline identifiers is the full meta; a JSON object mapping notification
 * type names to strings is the upstream subscriptions map.
 */
function storedPipeline(ctx: Ctx, who: Principal, sub: SubscriptionRecord, identity: RemoteIdentityFixture): StoredPipeline {
  const product = ctx.s.products.find((p) => p.id === UNIFIED_PRODUCT);
  const keys = product?.required_meta_fields ?? [];
  const bad = (key: string): never => fail(400, `missing or invalid stored metadata (${key}) of subscription ${sub.id}`);
  const meta: Record<string, string> = {};
  const subscriptions: Record<string, string> = {};
  for (const key of keys) {
    const raw = sub.product_parameters[key];
    if (typeof raw !== 'string' || raw.trim() === '') bad(key);
    if (key === 'remote_identity_id') {
      if (raw !== String(identity.id)) bad(key);
      continue;
    }
    if ((RESULT_META_FIELDS as readonly string[]).includes(key)) {
      meta[key] = raw;
      continue;
    }
    let v: unknown;
    try {
      v = JSON.parse(raw);
    } catch {
      bad(key);
    }
    if (!isObj(v) || Object.keys(v).length === 0 || Object.values(v).some((x) => typeof x !== 'string' || x === '')) bad(key);
    const obj = v as Record<string, string>;
    if (Object.keys(obj).some((k) => PIPELINE_IDENTIFIERS.includes(k))) Object.assign(meta, obj);
    else if (Object.keys(obj).every((k) => isValidNotificationType(k, 'seller') || isValidNotificationType(k, 'vendor'))) Object.assign(subscriptions, obj);
    else bad(key);
  }
  const upstreamPipelines = new Set<string>();
  for (const id of Object.values(subscriptions)) {
    const u = ctx.s.upstreamSubscriptions.find((x) => x.id === id);
    if (u && u.remoteIdentityId !== identity.id) fail(400, `stored upstream subscription ${id} belongs to a different remote identity`);
    if (u?.pipelineId) upstreamPipelines.add(u.pipelineId);
  }
  const matches = ctx.s.pipelines.filter((p) => p.account === who.account && p.remoteIdentityId === identity.id
    && Object.entries(meta).every(([k, v]) => (k === 'pipeline_id' ? p.id === v : k === 's3_notification_prefix' ? p.prefix === v
      : !PIPELINE_IDENTIFIERS.includes(k) || p.meta[k] === v))
    && [...upstreamPipelines].every((id) => id === p.id));
  const identifying = Object.keys(meta).some((k) => PIPELINE_IDENTIFIERS.includes(k)) || upstreamPipelines.size > 0;
  if (!identifying || matches.length !== 1) {
    fail(400, `the stored metadata of subscription ${sub.id} (${keys.join(', ')}) does not identify ${matches.length > 1 ? 'exactly one' : 'a'} notification pipeline of account ${who.account} and remote identity ${identity.id}`);
  }
  return { subscriptions, pipeline: matches[0] };
}

export function registerNotificationRoutes(app: FastifyInstance, ctx: Ctx): void {
  app.get('/service/sp/notifications-unified/list-notification-types', async (req) => {
    principal(req);
    return listTypes(req);
  });
  app.get('/service/sp/notifications/list-notification-types', async (req) => {
    principal(req);
    return listTypes(req);
  });

  app.post('/service/sp/notifications-unified/:rid', async (req, reply) => {
    const who = principal(req);
    const identity = spIdentity(ctx.s, who, (req.params as Record<string, string>).rid);
    const input = validateUnified(ctx, identity, req.body);
    const r = setup(ctx, who, identity, input);
    return reply.status(207).send(result207(r));
  });

  app.patch('/service/sp/notifications-unified/:rid/:sid', async (req, reply) => {
    const who = principal(req);
    const p = req.params as Record<string, string>;
    const sub = ownedPipelineSubscription(ctx, who, p.rid, p.sid, 107);
    const identity = spIdentity(ctx.s, who, p.rid);
    const input = validateUnified(ctx, identity, req.body);
    const stored = storedPipeline(ctx, who, sub, identity);
    if (ctx.s.failingCleanupSubscriptions.includes(sub.id)) {
      fail(400, `cleanup of the existing pipeline of subscription ${sub.id} failed (emulated); creation not attempted`);
    }
    // Disable the old upstream subscriptions first.
    const old: PipelineRecord | undefined = stored.pipeline;
    const oldIds = new Set(Object.values(stored.subscriptions));
    for (const u of ctx.s.upstreamSubscriptions) {
      if (oldIds.has(u.id) || (old && u.pipelineId === old.id)) {
        u.enabled = false;
        oldIds.add(u.id);
      }
    }
    const keep = old && old.awsAccountId === input.awsAccount && old.region === input.region && old.meta.sqs_queue_arn !== undefined
      && input.types.some((t) => deliveryPathOf(t) === 'sqs') ? old : undefined;
    if (old) {
      if (keep) {removePipelineResources(ctx, old.id, 'eventbridge');} else {
        removePipelineResources(ctx, old.id);
        ctx.s.pipelines = ctx.s.pipelines.filter((x) => x.id !== old.id);
      }
    }
    const r = setup(ctx, who, identity, input, keep);
    const reused = new Set(Object.values(r.subscriptions));
    ctx.s.upstreamSubscriptions = ctx.s.upstreamSubscriptions.filter((u) => !(oldIds.has(u.id) && !reused.has(u.id)));
    return reply.status(207).send(result207(r));
  });

  app.delete('/service/sp/notifications-unified/:rid/:sid', async (req, reply) => {
    const who = principal(req);
    const p = req.params as Record<string, string>;
    const sub = ownedPipelineSubscription(ctx, who, p.rid, p.sid, 107);
    const identity = spIdentity(ctx.s, who, p.rid);
    const stored = storedPipeline(ctx, who, sub, identity);
    if (ctx.s.failingCleanupSubscriptions.includes(sub.id)) fail(400, `cleanup of the pipeline of subscription ${sub.id} failed (emulated)`);
    const pipe: PipelineRecord | undefined = stored.pipeline;
    const ids = new Set(Object.values(stored.subscriptions));
    ctx.s.upstreamSubscriptions = ctx.s.upstreamSubscriptions.filter((u) => !(ids.has(u.id) || (pipe && u.pipelineId === pipe.id)));
    if (pipe) {
      removePipelineResources(ctx, pipe.id);
      ctx.s.pipelines = ctx.s.pipelines.filter((x) => x.id !== pipe.id);
    }
    return reply.status(204).send();
  });

  // Legacy (product 86): modify or delete only.
  app.patch('/service/sp/notifications/:rid/:sid', async (req) => {
    const who = principal(req);
    const p = req.params as Record<string, string>;
    const sub = ownedPipelineSubscription(ctx, who, p.rid, p.sid, 86);
    const identity = ownedIdentity(ctx.s, who, p.rid);
    const { attrs } = envelopeAttributes(req.body, 'Service');
    if (typeof attrs.queue_arn !== 'string' || attrs.queue_arn === '') fail(400, 'queue_arn is required');
    if (!QUEUE_ARN.test(attrs.queue_arn)) fail(400, 'queue_arn must be an SQS queue ARN');
    const types = checkTypes(attrs.notification_types, identity);
    const bad = types.find((t) => ctx.s.failingNotificationTypes.includes(t));
    removeLegacyPipeline(ctx.s, sub.id);
    if (bad) fail(400, `upstream subscription for ${bad} failed (emulated); the legacy pipeline was deleted and not re-created`);
    seedLegacyPipeline(ctx, sub.id, identity.id, attrs.queue_arn, types);
    const rec = ctx.s.legacyPipelines.find((x) => x.subscriptionId === sub.id)!;
    return { data: { type: 'SPAPINotifications', attributes: { subscriptions: rec.subscriptions, destination_id: rec.destinationId } } };
  });
  app.delete('/service/sp/notifications/:rid/:sid', async (req, reply) => {
    const who = principal(req);
    const p = req.params as Record<string, string>;
    const sub = ownedPipelineSubscription(ctx, who, p.rid, p.sid, 86);
    removeLegacyPipeline(ctx.s, sub.id);
    return reply.status(204).send();
  });
}

export type { DeliveryPath };
