/**
 * The plan of a `Custom::DpiLegacyNotificationPipeline` (adopt only), from the handler's decisions (`legacyRevival`,
 * `legacyRepoints`, `removalPolicyOf` of a record that always existed before the stack).
 */
import { legacyDesiredOf, LegacyDesired } from './handler';
import { call, connectionEffect, keptByCloudFormation, paths, Planner, PlanParts, PropSpec, removalOf, unknownChanges } from '../../../handler/plan-common';
import { legacyRepoints, legacyRevival } from '../../../handler/plan-decisions';
import { PlanInput, PlannedCall } from '../../../handler/plan-types';

/** The wire properties of a legacy pipeline and the construct props that set them. */
export const LEGACY_PIPELINE_PROPS: readonly PropSpec[] = [
  { wire: 'SubscriptionId', prop: 'subscriptionId' },
  { wire: 'RemoteIdentityId', prop: 'remoteIdentityId' },
  { wire: 'QueueArn', prop: 'queueArn' },
  { wire: 'NotificationTypes', prop: 'notificationTypes', asSet: true },
  { wire: 'Retired', prop: 'retired' },
  { wire: 'RemovalPolicy', prop: 'removalPolicy' },
];

function retireCalls(d: LegacyDesired): PlannedCall[] {
  return [
    call('DELETE', paths.legacy(d.remoteIdentityId, d.subscriptionId), `remove the legacy pipeline of identity ${d.remoteIdentityId}`),
    call('PATCH', paths.subscription(d.subscriptionId), `end legacy subscription ${d.subscriptionId} (status invalid)`),
  ];
}

function retireEffect(d: LegacyDesired): string {
  return `legacy pipeline ${d.subscriptionId} of identity ${d.remoteIdentityId} is retired: its upstream subscriptions and queue destination `
    + `are removed (queue ${d.queueArn} stops receiving) and subscription ${d.subscriptionId} becomes invalid`;
}

function repointCalls(d: LegacyDesired): PlannedCall[] {
  return [
    call('PATCH', paths.legacy(d.remoteIdentityId, d.subscriptionId), 're-point the legacy pipeline (the service deletes and re-creates it)'),
    call('PATCH', paths.subscription(d.subscriptionId), 'store the new upstream result in the subscription'),
  ];
}

/** An adoption: nothing is sent unless it is declared retired. */
function adoption(d: LegacyDesired): PlanParts {
  if (d.retired) return { action: 'delete', calls: retireCalls(d), effects: [`legacy pipeline ${d.subscriptionId} is adopted`, retireEffect(d)] };
  return { action: 'no-change', calls: [], effects: [`legacy pipeline ${d.subscriptionId} is adopted as declared: nothing is sent`] };
}

function create(props: Record<string, unknown>): PlanParts {
  return adoption(legacyDesiredOf(props));
}

function removal(old: LegacyDesired, oldProps: Record<string, unknown>, input: PlanInput): PlanParts {
  const kept = keptByCloudFormation(input);
  if (kept) return kept;
  if (removalOf(oldProps, input, true, false) === 'retain') {
    return { action: 'retain', calls: [], effects: [`legacy pipeline ${old.subscriptionId} is kept running in the service (released)`] };
  }
  if (old.retired) return { action: 'no-change', calls: [], effects: [`legacy pipeline ${old.subscriptionId} is already retired: nothing is sent`] };
  return { action: 'delete', calls: retireCalls(old), effects: [retireEffect(old)] };
}

function update(oldProps: Record<string, unknown>, newProps: Record<string, unknown>, input: PlanInput): PlanParts {
  const d = legacyDesiredOf(newProps);
  const old = legacyDesiredOf(oldProps);
  const extra = [...connectionEffect(oldProps, newProps), ...unknownChanges(LEGACY_PIPELINE_PROPS, oldProps, newProps)
    .map((k) => `property ${k} changed: the handler does not send it`)];
  if (d.subscriptionId !== old.subscriptionId) {
    // Another record: it is adopted (the physical ID changes) and CloudFormation's cleanup removes the old resource.
    const made = adoption(d);
    const ended = removal(old, oldProps, input);
    return { action: 'replace', calls: [...made.calls, ...ended.calls], effects: [...made.effects, ...ended.effects, ...extra] };
  }
  if (d.retired) {
    if (old.retired) return { action: 'no-change', calls: [], effects: [`legacy pipeline ${d.subscriptionId} stays retired`, ...extra] };
    return { action: 'delete', calls: retireCalls(d), effects: [retireEffect(d), ...extra] };
  }
  // The record is as last deployed: invalid when the deployed declaration retired it.
  const revival = legacyRevival(old.retired ? 'invalid' : 'active', old.retired);
  const revived = revival === 'revive';
  if (!legacyRepoints({ queueArn: old.queueArn, types: old.types }, d, revived, false)) {
    return { action: 'no-change', calls: [], effects: extra };
  }
  return {
    action: 'rebuild',
    calls: [
      ...(revived ? [call('PATCH', paths.subscription(d.subscriptionId), `set legacy subscription ${d.subscriptionId} active again`)] : []),
      ...repointCalls(d),
    ],
    effects: [
      `legacy pipeline ${d.subscriptionId} is ${revived ? 'restored and ' : ''}re-pointed: the service deletes and re-creates its upstream `
        + `subscriptions and destination for queue ${d.queueArn}${old.queueArn !== d.queueArn ? `; queue ${old.queueArn} stops receiving` : ''}`,
      ...extra,
    ],
  };
}

function remove(oldProps: Record<string, unknown>, input: PlanInput): PlanParts {
  return removal(legacyDesiredOf(oldProps), oldProps, input);
}

export const legacyPipelinePlanner: Planner = { props: LEGACY_PIPELINE_PROPS, create, update, remove };
