/**
 * The plan of a `Custom::DpiSubscription`, from the handler's decisions (`subscriptionReplacement`,
 * `subscriptionChanges`, `droppedParameterSplit`, `removalPolicyOf`).
 */
import { adoptionView } from './handler-adoption';
import { Applied, appliedOf, desiredOf, SubscriptionDesired, wantedParams } from './handler-state';
import { SubscriptionStatus } from '../../../client';
import { contradicts, notAdoptable } from '../../../handler/common';
import {
  call, changedProps, connectionEffect, keptByCloudFormation, LIVE_ASSUMPTION, NEW_ID, paths, Planner, PlanParts, PropSpec, removalOf, stable,
  unknownChanges, unlessAdopted, journalKeyRefusal,
} from '../../../handler/plan-common';
import { droppedParameterSplit, dropRefusal, subscriptionChanges, subscriptionReplacement } from '../../../handler/plan-decisions';
import { PlanInput, PlannedCall } from '../../../handler/plan-types';
import { isNumericId } from '../../../handler/props';

/** The wire properties of a subscription and the construct props that set them. */
export const SUBSCRIPTION_PROPS: readonly PropSpec[] = [
  { wire: 'ProductId', prop: 'productId' },
  { wire: 'RemoteIdentityId', prop: 'remoteIdentityId' },
  { wire: 'AdoptId', prop: 'existingSubscriptionId' },
  { wire: 'StorageGroupId', prop: 'storageGroupId' },
  { wire: 'ProductParameters', prop: 'productParameters' },
  { wire: 'StageIds', prop: 'stageIds' },
  { wire: 'Status', prop: 'status' },
  { wire: 'Name', prop: 'name' },
  { wire: 'DateStart', prop: 'dateStart' },
  { wire: 'OnDelete', prop: 'onDelete' },
  { wire: 'RemovalPolicy', prop: 'removalPolicy' },
];

/** The calls of a Create: the POST, then the PATCH that brings the new subscription to the declared state (paused). */
function createCalls(d: SubscriptionDesired): PlannedCall[] {
  const calls = [call('POST', paths.subscriptions, `create the product-${d.productId} subscription`)];
  const posted: Applied = { ...appliedOf(d), status: 'active' };
  const { changes } = subscriptionChanges(posted, d, wantedParams(d), 'active', NEW_ID);
  if (Object.keys(changes).length > 0) calls.push(call('PATCH', paths.subscription(NEW_ID), `set ${Object.keys(changes).join(', ')}`));
  return calls;
}

/**
 * An adoption: no creating call; the PATCH that reconciles what a read does not show. With the reads of the record
 * (`input.adoption`), what the handler will send: nothing when the service already has the declared state.
 */
function adoptionParts(d: SubscriptionDesired, id: string, input?: PlanInput): PlanParts {
  const hint = input?.adoption;
  if (hint !== undefined) {
    const sub = hint.subscription;
    if (sub === undefined) return { action: 'update', calls: [], effects: [], failure: `Subscription: ${notAdoptable(id, undefined, 'existingSubscriptionId')}` };
    const wrong = [contradicts(sub.product, d.productId) ? `product ${String(sub.product)} (declared ${d.productId})` : '',
      contradicts(sub.remote_identity, d.remoteIdentityId) ? `remote identity ${String(sub.remote_identity)} (declared ${d.remoteIdentityId ?? 'none'})` : '']
      .filter((x) => x);
    const why = notAdoptable(id, sub.status as SubscriptionStatus, 'existingSubscriptionId');
    if (why !== undefined || wrong.length > 0) {
      return { action: 'update', calls: [], effects: [], failure: `Subscription: ${why ?? `existingSubscriptionId ${id} has ${wrong.join(' and ')}`}` };
    }
    const { shown } = adoptionView(sub, hint.stored, d);
    const { changes, refusal } = subscriptionChanges(shown, d, wantedParams(d), sub.status, id);
    if (refusal !== undefined) return { action: 'update', calls: [], effects: [], failure: refusal };
    const fields = Object.keys(changes);
    if (fields.length === 0) {
      return { action: 'no-change', calls: [], effects: [`existing subscription ${id} is adopted as the service has it: no changing call`] };
    }
    const undone = changes.status !== undefined ? [`subscription ${id} is ${sub.status} in the service: this deploy makes it ${changes.status}`] : [];
    return {
      action: 'update',
      calls: [call('PATCH', paths.subscription(id), `set ${fields.join(', ')} on the adopted subscription`)],
      effects: [...undone, `existing subscription ${id} is adopted; the reads show other values of ${fields.join(', ')}: one PATCH sets them`],
    };
  }
  return {
    action: 'update',
    calls: [call('PATCH', paths.subscription(id), 'reconcile the adopted subscription to the declaration',
      'only if a read does not show every declared value')],
    effects: [`existing subscription ${id} is adopted (no new record); declared values a read does not show are sent in one PATCH`,
      `product ${d.productId} and identity ${d.remoteIdentityId ?? 'none'} must be what the service has, else the deploy fails`],
  };
}

/** What ending or releasing the deployed subscription `id` does (a Delete with the deployed properties). */
function removal(oldProps: Record<string, unknown>, id: string, input: PlanInput): { calls: PlannedCall[]; effects: string[]; ends: boolean } {
  const kept = keptByCloudFormation(input);
  if (kept) return { calls: [], effects: [...kept.effects], ends: false };
  const old = desiredOf(oldProps);
  if (removalOf(oldProps, input) === 'retain') {
    return {
      // A release of an adopted subscription restores what the adoption changed, where a read showed the values before.
      calls: old.adoptId !== undefined
        ? [call('PATCH', paths.subscription(id), 'restore what the adoption changed', 'only if a read before the adoption showed values it changed')]
        : [],
      effects: [`subscription ${id} is kept in the service (released, no longer managed by the stack)`
        + `${old.adoptId !== undefined ? '; what the adoption changed is restored where a read showed it' : ''}`],
      ends: false,
    };
  }
  return {
    calls: [
      call('PATCH', paths.subscription(id), `end subscription ${id} (status ${old.onDelete})`),
      call('PATCH', paths.history('{history}'), 'cancel an open history request of the ended subscription', 'for each open history request'),
    ],
    effects: [`subscription ${id} becomes ${old.onDelete}; its history and jobs end with it (open history requests are cancelled)${unlessAdopted(input)}`],
    ends: true,
  };
}

function create(props: Record<string, unknown>, input?: PlanInput): PlanParts {
  const d = desiredOf(props);
  if (d.adoptId !== undefined) return adoptionParts(d, d.adoptId, input);
  return {
    action: 'create',
    calls: createCalls(d),
    effects: [`a new product-${d.productId} subscription${d.remoteIdentityId !== undefined ? ` of identity ${d.remoteIdentityId}` : ''} is made`
      + ` (${d.status})`],
  };
}

function update(oldProps: Record<string, unknown>, newProps: Record<string, unknown>, input: PlanInput): PlanParts {
  const d = desiredOf(newProps);
  const old = desiredOf(oldProps);
  const id = input.physicalId ?? '{deployed}';
  const diffs = changedProps(SUBSCRIPTION_PROPS, oldProps, newProps);
  const extra = [...connectionEffect(oldProps, newProps), ...unknownChanges(SUBSCRIPTION_PROPS, oldProps, newProps)
    .map((k) => `property ${k} changed: the handler does not send it`)];
  if (input.physicalId !== undefined && !isNumericId(input.physicalId)) {
    // The deployed resource holds no record (its create failed): the Update creates anew.
    return { ...create(newProps), effects: [`the deployed resource holds no subscription (${input.physicalId}): one is made`] };
  }
  const replacement = subscriptionReplacement(oldProps, d, id);
  if (replacement !== undefined) {
    const made = d.adoptId !== undefined ? adoptionParts(d, d.adoptId) : undefined;
    const ended = removal(oldProps, id, input);
    return {
      action: 'replace',
      calls: [...(made ? made.calls : createCalls(d)), ...ended.calls],
      effects: [
        made ? `existing subscription ${d.adoptId} is adopted in its place` : `a new product-${d.productId} subscription replaces subscription ${id} (${replacement})`,
        ...ended.effects,
        ...extra,
      ],
    };
  }
  // The live status (when read) decides as in the handler's Update, which CloudFormation sends only for changed properties.
  const live = stable(oldProps) !== stable(newProps) ? input.liveStatus : undefined;
  if (live === 'gone' || live === 'invalid') {
    return {
      action: 'replace',
      calls: createCalls(d),
      effects: [`subscription ${id} is ${live === 'gone' ? 'not in the service' : 'invalid in the service'}: the handler makes a new `
        + `product-${d.productId} subscription in its place (the old ID ends nothing)`, ...extra],
    };
  }
  const keyRefusal = journalKeyRefusal(oldProps, newProps, input, id);
  if (keyRefusal !== undefined) return { action: 'update', calls: [], effects: extra, failure: keyRefusal };
  const applied = appliedOf(old);
  const want = wantedParams(d);
  // The handler's `previous` is the journal's (the parameters before the last change): a revert keeps what it added.
  const previous: Applied | undefined = input.journal?.previousParameters !== undefined
    ? { ...applied, params: { ...input.journal.previousParameters } } : undefined;
  const { refused } = droppedParameterSplit(applied, want, previous, input.journal?.keptParameters);
  if (refused.length > 0) {
    const unread = input.journal === undefined
      ? ['unless the last deployed change added them (a revert: the service then keeps them and the deploy succeeds); the lifecycle journal '
        + 'was not read'] : [];
    return { action: 'update', calls: [], effects: [...unread, ...extra], failure: dropRefusal(id, refused) };
  }
  const conv = subscriptionChanges(applied, d, want, live ?? old.status, id);
  if (conv.refusal !== undefined) return { action: 'update', calls: [], effects: extra, failure: conv.refusal };
  const attrs = Object.keys(conv.changes);
  if (attrs.length === 0) {
    const noCall = diffs.length > 0 ? [`${diffs.map(([s]) => s.prop).join(', ')}: recorded for later events, nothing is sent now`] : [];
    return { action: 'no-change', calls: [], effects: [...noCall, ...extra] };
  }
  return {
    action: 'update',
    calls: [call('PATCH', paths.subscription(id), `set ${attrs.join(', ')}`)],
    // With the live status read, the assumption that the record is as last deployed is not needed for the status.
    effects: [`subscription ${id} is updated in place (${attrs.join(', ')})${live !== undefined && live !== old.status && conv.changes.status !== undefined
      ? `; it is ${live} in the service and this deploy sets it ${d.status} again` : ''}${live !== undefined ? '' : `; ${LIVE_ASSUMPTION}`}`, ...extra],
  };
}

function remove(oldProps: Record<string, unknown>, input: PlanInput): PlanParts {
  const id = input.physicalId ?? '{deployed}';
  if (input.physicalId !== undefined && !isNumericId(input.physicalId)) {
    return { action: 'no-change', calls: [], effects: ['the deployed resource holds no subscription: nothing is ended'] };
  }
  const r = removal(oldProps, id, input);
  return { action: r.ends ? 'delete' : 'retain', calls: r.calls, effects: r.effects };
}

export const subscriptionPlanner: Planner = { props: SUBSCRIPTION_PROPS, create, update, remove };
