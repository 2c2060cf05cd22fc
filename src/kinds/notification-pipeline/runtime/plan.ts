/**
 * The plan of a `Custom::DpiNotificationPipeline`, from the handler's decisions (`pipelineUpdateDecision`,
 * `pipelineConvergence`, `removalPolicyOf`) and the service's rule for its unified PATCH (spec: "If account and
 * region are unchanged, stored queue-source metadata exists and the new selection still has a queue type, the
 * existing queue delivery pipeline and destination are kept and reused; otherwise existing delivery resources are
 * cleaned up and recreated").
 */
import { pipelineDesired, PipelineDesired, Selection, selectionOf } from './handler-state';
import { compareAdoption, isQueueType, matches, storedPipeline, whyNot } from './handler-stored';
import { NotificationPipelineAttributes as A, DEFAULT_PIPELINE_METADATA_KEYS } from '../../../contract';
import { contradicts } from '../../../handler/common';
import {
  call, connectionEffect, keptByCloudFormation, LIVE_ASSUMPTION, paths, Planner, PlanParts, PropSpec, removalOf, unknownChanges, unlessAdopted,
  journalKeyRefusal,
} from '../../../handler/plan-common';
import { pipelineConvergence, pipelineUpdateDecision } from '../../../handler/plan-decisions';
import { PlanAction, PlanInput, PlannedCall } from '../../../handler/plan-types';
import { accountOfArn, isNumericId } from '../../../handler/props';

/** The wire properties of a pipeline and the construct props that set them. */
export const PIPELINE_PROPS: readonly PropSpec[] = [
  { wire: 'RemoteIdentityId', prop: 'remoteIdentityId' },
  { wire: 'AccountType', prop: 'accountType' },
  { wire: 'AdoptId', prop: 'existingSubscriptionId' },
  { wire: 'RebuildOnAdoption', prop: 'rebuildOnAdoption' },
  { wire: 'NotificationTypes', prop: 'notificationTypes', asSet: true },
  { wire: 'RoleArn', prop: 'roles.managementRoleArn' },
  { wire: 'EbToFhRoleArn', prop: 'roles.eventBusRoleArn' },
  { wire: 'DeploymentRegion', prop: 'deploymentRegion' },
  { wire: 'StorageGroupId', prop: 'storageGroupId' },
  { wire: 'Name', prop: 'name' },
  { wire: 'PartialFailure', prop: 'partialFailure' },
  { wire: 'RemovalPolicy', prop: 'removalPolicy' },
];

/**
 * The service's rule for a unified PATCH: the queue delivery pipeline and destination are kept when the AWS account
 * (of the management role) and the region are unchanged, the pipeline has stored queue-source metadata (its last
 * selection had a queue type) and the new selection still has a queue type; otherwise they are rebuilt.
 */
export function keepsQueuePath(before: Selection, after: Selection): boolean {
  return accountOfArn(before.roleArn) === accountOfArn(after.roleArn) && before.region === after.region
    && before.types.some(isQueueType) && after.types.some(isQueueType);
}

/** The queue (and prefix) the deployed attributes name, for the effect sentences. */
function queueOf(input: PlanInput): string {
  const q = input.attributes?.[A.NOTIFICATION_QUEUE_ARN];
  const p = input.attributes?.[A.PREFIX];
  return [q ? `queue ${q}` : '', p ? `prefix ${p}` : ''].filter((x) => x).join(', ');
}

/** The unified PATCH's effect in the service's terms. */
function patchEffects(d: PipelineDesired, before: Selection | undefined, input: PlanInput, id: string): { action: PlanAction; effects: string[] } {
  const after = selectionOf(d);
  const upstream = 'its upstream subscriptions are disabled and made anew (new upstream IDs; not atomic: a failure can leave them disabled)';
  if (before !== undefined && keepsQueuePath(before, after)) {
    return {
      action: 'update',
      effects: [`pipeline of identity ${d.remoteIdentityId} (subscription ${id}) is updated in place: its queue delivery pipeline, destination `
        + `and prefix are kept; ${upstream}`],
    };
  }
  const why = before === undefined ? 'no read shows the pipeline\'s selection before the adoption'
    : accountOfArn(before.roleArn) !== accountOfArn(after.roleArn) ? 'the AWS account changes'
      : before.region !== after.region ? `the region changes (${before.region} -> ${after.region})`
        : !after.types.some(isQueueType) ? 'the new selection has no queue type' : 'the pipeline has no queue path to keep';
  const named = queueOf(input);
  if (before === undefined && after.types.some(isQueueType)) {
    // The handler always sends the unified PATCH on adoption; whether the service keeps the queue depends on the
    // pipeline's live account, region and queue path, which no template shows: planned as the worst case.
    return {
      action: 'rebuild',
      effects: [`the adopted pipeline of identity ${d.remoteIdentityId} gets one unified PATCH (${why}): its delivery resources are kept only if `
        + 'its account, region and queue path match what the service has, else they are rebuilt (its queue and prefix change; consumers of the '
        + `old queue stop receiving): planned as rebuild, the worst case; ${upstream}`],
    };
  }
  return {
    action: 'rebuild',
    effects: [`pipeline of identity ${d.remoteIdentityId} (subscription ${id}) is rebuilt (${why}): its queue and prefix change; consumers of the `
      + `old queue stop receiving${named ? ` (${named})` : ''}; ${upstream}`],
  };
}

function createCalls(d: PipelineDesired): PlannedCall[] {
  return [
    call('POST', paths.unifiedCreate(d.remoteIdentityId), `create the pipeline of identity ${d.remoteIdentityId}`),
    call('POST', paths.subscriptions, 'create the product-107 subscription that stores the pipeline\'s result'),
  ];
}

function adoptionCalls(d: PipelineDesired, id: string): PlannedCall[] {
  return [
    call('PATCH', paths.unified(d.remoteIdentityId, id), 'reconcile the adopted pipeline (unified PATCH, full body)'),
    call('PATCH', paths.subscription(id), 'store the result in the pipeline\'s subscription'),
  ];
}

/**
 * An adoption, as the handler decides it (`adoptPipeline`): taken as the service stores it (no unified PATCH) when its
 * stored types, region and account are the declared ones; otherwise the unified PATCH if `rebuildOnAdoption` allows
 * it, else the deploy fails before any change. With the reads of the record (`input.adoption`) the plan says which.
 */
function adoption(d: PipelineDesired, id: string, input: PlanInput): PlanParts {
  const adopted = `existing pipeline (subscription ${id}) is adopted`;
  const hint = input.adoption;
  if (hint === undefined) {
    if (d.rebuildOnAdoption) {
      const p = patchEffects(d, undefined, input, id);
      return { action: p.action, calls: adoptionCalls(d, id), effects: [adopted, ...p.effects] };
    }
    return {
      action: 'update',
      calls: [call('PATCH', paths.subscription(id), 'set the declared name or storage group', 'only if a read shows another one')],
      effects: [`${adopted} as the service stores it, with no unified PATCH, if its stored types, region and account are the declared ones; `
        + 'else the deploy fails before any change (rebuildOnAdoption is not set); the plan did not read it'],
    };
  }
  const sub = hint.subscription;
  const wrong = sub === undefined ? [`existingSubscriptionId ${id}: no such subscription (the service answered 404)`]
    : [sub.status === 'invalid' || sub.status === 'cancelled' ? `existingSubscriptionId ${id} is ${sub.status} and cannot be adopted` : '',
      contradicts(sub.product, 107) ? `existingSubscriptionId ${id} is a product-${String(sub.product)} subscription` : '',
      contradicts(sub.remote_identity, d.remoteIdentityId) ? `existingSubscriptionId ${id} belongs to remote identity ${String(sub.remote_identity)}` : ''].filter((x) => x);
  if (wrong.length > 0) return { action: 'update', calls: [], effects: [], failure: `NotificationPipeline: ${wrong.join('; ')}` };
  const cmp = compareAdoption(d, d.rebuildOnAdoption ? undefined : storedPipeline(hint.stored, DEFAULT_PIPELINE_METADATA_KEYS));
  if (matches(cmp) && hint.siblings !== undefined && hint.siblings.length > 0) {
    cmp.doubts.push(`remote identity ${d.remoteIdentityId} has other live product-107 subscriptions (${hint.siblings.join(', ')})`);
  }
  const asItIs = matches(cmp);
  const why = whyNot(cmp);
  if (!asItIs && !d.rebuildOnAdoption) {
    return { action: 'update', calls: [], effects: [], failure: `NotificationPipeline: existingSubscriptionId ${id}: ${why}; set rebuildOnAdoption: true to allow the rebuild` };
  }
  const named = sub!;
  const attrs = [d.name !== undefined && d.name !== named.name ? 'name' : '',
    d.storageGroupId !== undefined && String(d.storageGroupId) !== String(named.storage_group ?? '') ? 'storage_group' : ''].filter((x) => x);
  if (!asItIs) {
    const p = patchEffects(d, undefined, input, id);
    return { action: p.action, calls: adoptionCalls(d, id), effects: [`${adopted} and rebuilt (${why}; rebuildOnAdoption)`, ...p.effects] };
  }
  if (attrs.length === 0) return { action: 'no-change', calls: [], effects: [`${adopted} as the service stores it: no changing call`] };
  return {
    action: 'update',
    calls: [call('PATCH', paths.subscription(id), `set ${attrs.join(', ')}`)],
    effects: [`${adopted} as the service stores it (no unified PATCH); its subscription gets the declared ${attrs.join(', ')}`],
  };
}

function create(props: Record<string, unknown>, input: PlanInput): PlanParts {
  const d = pipelineDesired(props);
  if (d.adoptId !== undefined) return adoption(d, d.adoptId, input);
  return {
    action: 'create',
    calls: createCalls(d),
    effects: [`a notification pipeline of identity ${d.remoteIdentityId} is made in ${d.region} (${d.types.join(', ')}); the product-107 `
      + 'subscription that stores it is new'],
  };
}

/** What removing the deployed pipeline does (a Delete with the deployed properties). */
function removal(oldProps: Record<string, unknown>, id: string, input: PlanInput): PlanParts {
  const kept = keptByCloudFormation(input);
  if (kept) return kept;
  const old = pipelineDesired(oldProps);
  if (removalOf(oldProps, input) === 'retain') {
    return { action: 'retain', calls: [], effects: [`pipeline of identity ${old.remoteIdentityId} (subscription ${id}) is kept running in the service (released)`] };
  }
  const named = queueOf(input);
  return {
    action: 'delete',
    calls: [
      call('DELETE', paths.unified(old.remoteIdentityId, id), `remove the pipeline of identity ${old.remoteIdentityId}`),
      call('PATCH', paths.subscription(id), `end subscription ${id} (status invalid)`),
    ],
    effects: [`pipeline of identity ${old.remoteIdentityId} is removed: its upstream subscriptions and delivery resources are deleted; consumers `
      + `of its queue stop receiving${named ? ` (${named})` : ''}; subscription ${id} becomes invalid${unlessAdopted(input)}`],
  };
}

function update(oldProps: Record<string, unknown>, newProps: Record<string, unknown>, input: PlanInput): PlanParts {
  const d = pipelineDesired(newProps);
  const id = input.physicalId ?? '{deployed}';
  if (input.physicalId !== undefined && !isNumericId(input.physicalId)) return create(newProps, input);
  const extra = [...connectionEffect(oldProps, newProps), ...unknownChanges(PIPELINE_PROPS, oldProps, newProps)
    .map((k) => `property ${k} changed: the handler does not send it`)];
  const decision = pipelineUpdateDecision(oldProps, d, id);
  if (decision.refusal !== undefined) return { action: 'update', calls: [], effects: extra, failure: decision.refusal };
  if (decision.replace !== undefined) {
    const made = d.adoptId !== undefined ? adoption(d, d.adoptId, input) : create(newProps, input);
    const ended = removal(oldProps, id, input);
    return {
      action: 'replace',
      calls: [...made.calls, ...ended.calls],
      effects: [`the pipeline is replaced (${decision.replace})`, ...made.effects, ...ended.effects, ...extra],
    };
  }
  const keyRefusal = journalKeyRefusal(oldProps, newProps, input, id);
  if (keyRefusal !== undefined) return { action: 'update', calls: [], effects: extra, failure: keyRefusal };
  const old = pipelineDesired(oldProps);
  const before = selectionOf(old);
  const conv = pipelineConvergence(before, { name: old.name, storageGroupId: old.storageGroupId }, d, selectionOf(d), false);
  const attrs = Object.keys(conv.changes);
  if (conv.unified) {
    const p = patchEffects(d, before, input, id);
    return {
      action: p.action,
      calls: [
        call('PATCH', paths.unified(d.remoteIdentityId, id), 'apply the new selection (unified PATCH, full body)'),
        call('PATCH', paths.subscription(id), `store the new result${attrs.length > 0 ? ` and set ${attrs.join(', ')}` : ''}`),
      ],
      effects: [...p.effects, LIVE_ASSUMPTION, ...extra],
    };
  }
  if (attrs.length > 0) {
    return {
      action: 'update',
      calls: [call('PATCH', paths.subscription(id), `set ${attrs.join(', ')}`)],
      effects: [`subscription ${id} of the pipeline is updated in place (${attrs.join(', ')}); the pipeline is not touched`, ...extra],
    };
  }
  const noCall = old.partialFailure !== d.partialFailure || old.removalPolicy !== d.removalPolicy
    ? ['partialFailure / removalPolicy: recorded for later events, nothing is sent now'] : [];
  return { action: 'no-change', calls: [], effects: [...noCall, ...extra] };
}

function remove(oldProps: Record<string, unknown>, input: PlanInput): PlanParts {
  if (input.physicalId !== undefined && !isNumericId(input.physicalId)) {
    return { action: 'no-change', calls: [], effects: ['the deployed resource holds no pipeline: nothing is removed'] };
  }
  return removal(oldProps, input.physicalId ?? '{deployed}', input);
}

export const notificationPipelinePlanner: Planner = { props: PIPELINE_PROPS, create, update, remove };

