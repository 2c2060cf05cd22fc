/**
 * The handler's decisions as pure functions: what an Update of each `Custom::Dpi*` kind does (replace, refuse, which
 * calls it sends) given what the service confirmed last and the declaration. The event handlers call these, and so
 * does `planResource` (plan.ts): the plan and the deploy share one decision code. Decisions that depend on live
 * state (a record that is gone, an unconfirmed earlier call) stay in the handlers; the plan assumes none.
 */
import type { SubscriptionStatus, SubscriptionUpdate } from '../client';
import { Props, sameSet } from './props';
import type { PipelineDesired, Selection } from '../kinds/notification-pipeline/runtime/handler-types';
import type { Applied, SubscriptionDesired } from '../kinds/subscription/runtime/handler-types';

// ---- Custom::DpiSubscription ------------------------------------------------------------------------------------

/**
 * What the lifecycle journal records of the deployed record (`physicalId`): the facts an Update compares with the
 * declaration instead of the previous properties. The previous properties are not always what the service has: in
 * the rollback of an Update that failed before it changed anything, they are the failed declaration's, and comparing
 * with them would replace (or refuse) where nothing changed.
 */
export interface RecordedFacts {
  /** A subscription's product. */
  readonly product?: number;
  /** The remote identity (a subscription's: undefined when it has none). */
  readonly identity?: string;
  /** A pipeline's account type, as last applied. */
  readonly accountType?: string;
  /** A history request's request key (`requestKey`). */
  readonly request?: string;
}

/**
 * Why an Update replaces the subscription (a new one is made; CloudFormation's cleanup then ends or releases the old
 * one), or undefined when it is updated in place: the product or the remote identity changed, or another existing
 * subscription is adopted. `oldRaw` are the deployed properties; `id` the deployed subscription; `recorded` what the
 * journal records of it (when it has a record: it wins over `oldRaw`).
 */
export function subscriptionReplacement(oldRaw: Record<string, unknown> | undefined, d: SubscriptionDesired, id: string,
  recorded?: RecordedFacts): string | undefined {
  const old = new Props(oldRaw, 'Subscription');
  const product = recorded?.product ?? old.optInt('ProductId');
  const identity = recorded?.product !== undefined ? recorded.identity : old.optString('RemoteIdentityId');
  // Compared as text: a journal document written as a number names the same identity.
  const sameIdentity = (identity === undefined || identity === null ? undefined : String(identity)) === d.remoteIdentityId;
  if (Number(product) !== d.productId || !sameIdentity) return 'product or remote identity changed';
  if (d.adoptId !== undefined && d.adoptId !== id) return 'another existing subscription is adopted';
  return undefined;
}

/** The one PATCH that brings a subscription from what the service confirmed last to the declaration. */
export interface SubscriptionConvergence {
  /** The attributes of `PATCH /v2/sub/{id}`; empty: nothing is sent. */
  readonly changes: SubscriptionUpdate;
  /** Set when the change is refused (a cancelled subscription cannot become active or paused again). */
  readonly refusal?: string;
}

/**
 * What `converge` sends: the product parameters that differ from `applied` (`want` = the parameters to store), name,
 * storage group and start date when declared and different, and the status when it differs from `current` (the
 * service's, or the applied one).
 */
export function subscriptionChanges(applied: Applied, d: SubscriptionDesired, want: Record<string, string>, current: string,
  id: string): SubscriptionConvergence {
  const changes: SubscriptionUpdate = {};
  const params: Record<string, string> = {};
  for (const [k, v] of Object.entries(want)) if (applied.params[k] !== v) params[k] = v;
  if (Object.keys(params).length > 0) changes.product_parameters = params;
  if (d.name !== undefined && d.name !== (applied.name ?? '')) changes.name = d.name;
  if (d.storageGroupId !== undefined && d.storageGroupId !== applied.storageGroupId) changes.storage_group = d.storageGroupId;
  if (d.dateStart !== undefined && d.dateStart !== applied.dateStart) changes.date_start = d.dateStart;
  let refusal: string | undefined;
  if (d.status !== current) {
    if (current === 'cancelled') {
      refusal = `subscription ${id} is cancelled and cannot become ${d.status} again; `
        + 'replace the resource (e.g. change its logical ID) to create a new subscription';
    } else {
      changes.status = d.status as SubscriptionStatus;
    }
  }
  return { changes, ...(refusal !== undefined ? { refusal } : {}) };
}

/**
 * The stored parameters a declaration drops: those the last change added (`previous` lacks them: an UPDATE_ROLLBACK
 * or a revert) are kept by the service and recorded (`kept`); dropping any other one is refused (the service merges
 * parameters and cannot remove one).
 */
export function droppedParameterSplit(applied: Applied, want: Record<string, string>, previous: Applied | undefined,
  keptBefore: Record<string, string> | undefined): { kept: Record<string, string>; refused: string[] } {
  const kept: Record<string, string> = {};
  for (const [k, v] of Object.entries(keptBefore ?? {})) if (want[k] === undefined) kept[k] = v;
  const dropped = Object.keys(applied.params).filter((k) => want[k] === undefined && k !== 'remote_identity_id');
  const refused: string[] = [];
  for (const k of dropped) {
    if (previous !== undefined && previous.params[k] === undefined) kept[k] = applied.params[k];
    else refused.push(k);
  }
  return { kept, refused };
}

/** The refusal of dropping stored parameters (see `droppedParameterSplit`). */
export function dropRefusal(id: string | undefined, refused: string[]): string {
  return `subscription ${id} cannot drop the stored parameter${refused.length > 1 ? 's' : ''} ${refused.join(', ')}: `
    + 'the service keeps stored parameters (a partial merge, no removal); keep them, give them another value, or replace the subscription '
    + '(change the construct ID) to start without them; nothing was changed';
}

// ---- Custom::DpiNotificationPipeline ----------------------------------------------------------------------------

/** What an Update of a pipeline does before it looks at the service: replace it, refuse it, or converge it in place. */
export interface PipelineUpdateDecision {
  /** Why a new pipeline is made (the remote identity changed, or another pipeline is adopted). */
  readonly replace?: string;
  /** Why the Update fails before any call (an account-type change of the same identity). */
  readonly refusal?: string;
}

/** The Update decision of a pipeline from its deployed properties `oldRaw` and the declaration (`id`: deployed). */
export function pipelineUpdateDecision(oldRaw: Record<string, unknown> | undefined, d: PipelineDesired, id: string,
  recorded?: RecordedFacts): PipelineUpdateDecision {
  const old = new Props(oldRaw, 'NotificationPipeline');
  const identity = recorded?.identity ?? old.optString('RemoteIdentityId');
  if ((identity === undefined ? undefined : String(identity)) !== d.remoteIdentityId) return { replace: 'remote identity changed' };
  const accountType = recorded?.accountType ?? old.optString('AccountType');
  if (accountType !== d.accountType) {
    // A second pipeline of the same identity would take over (and later lose) the first one's upstream
    // subscriptions, so an account-type change of the same identity is refused instead of replaced.
    return {
      refusal: `AccountType changed from ${accountType} to ${d.accountType} for the same identity ${d.remoteIdentityId}; `
        + 'the account type follows the identity (type 17 seller, 18 vendor): change it back, or use another identity',
    };
  }
  if (d.adoptId !== undefined && d.adoptId !== id) return { replace: 'another existing pipeline is adopted' };
  return {};
}

/** What `converge` sends to an existing pipeline. */
export interface PipelineConvergence {
  /** The unified PATCH (full body) is sent, then the subscription PATCH that stores its result (with `changes`). */
  readonly unified: boolean;
  /** Name and storage group for the subscription PATCH (alone when `unified` is false; none: nothing is sent). */
  readonly changes: { name?: string; storage_group?: number };
}

/**
 * The convergence of a pipeline: the unified PATCH when the selection differs from the one the service confirmed
 * last (`applied`), or when an earlier PATCH's outcome is unknown (`unconfirmed`); the name and storage group when
 * declared and different from the recorded ones.
 */
export function pipelineConvergence(applied: Selection | undefined, recorded: { name?: string; storageGroupId?: number },
  d: PipelineDesired, sel: Selection, unconfirmed: boolean): PipelineConvergence {
  const changes: { name?: string; storage_group?: number } = {};
  if (d.name !== undefined && d.name !== (recorded.name ?? '')) changes.name = d.name;
  if (d.storageGroupId !== undefined && d.storageGroupId !== recorded.storageGroupId) changes.storage_group = d.storageGroupId;
  return { unified: unconfirmed || !sameSelectionOf(applied, sel), changes };
}

/** Same types (as a set), roles and region (the account type is not part of the unified body). */
export function sameSelectionOf(a: Selection | undefined, b: Selection): boolean {
  return a !== undefined && sameSet(a.types, b.types) && a.roleArn === b.roleArn && (a.ebRoleArn ?? '') === (b.ebRoleArn ?? '')
    && a.region === b.region;
}

// ---- Custom::DpiLegacyNotificationPipeline ----------------------------------------------------------------------

/** The queue and types a legacy pipeline has. */
export interface LegacyTarget {
  readonly queueArn: string;
  readonly types: string[];
}

/**
 * What an adopted legacy pipeline that is not to be retired needs: `revive` (its subscription is invalid because an
 * earlier deploy retired it: set it active again, then re-point), `refuse` (invalid, never retired by the stack:
 * it cannot be adopted) or `none`.
 */
export function legacyRevival(status: string | undefined, retiredBefore: boolean): 'revive' | 'refuse' | 'none' {
  if (status !== 'invalid') return 'none';
  return retiredBefore ? 'revive' : 'refuse';
}

/** Whether the legacy PATCH (delete and re-create upstream) is sent: revived, unconfirmed, or another queue or types. */
export function legacyRepoints(applied: LegacyTarget, d: LegacyTarget, revived: boolean, unconfirmed: boolean): boolean {
  return revived || unconfirmed || applied.queueArn !== d.queueArn || !sameSet(applied.types, d.types);
}

// ---- Custom::DpiHistoryRequest ----------------------------------------------------------------------------------

/**
 * Whether an Update requests the history anew (a new request; the old one is cancelled or released by the cleanup):
 * the request's fields changed (`oldKey` / `newKey`), there is no physical ID, or another transaction is adopted.
 * Otherwise (only waitForCompletion / timeout changed) nothing is sent.
 */
export function historyRequestsAnew(oldKey: string, newKey: string, id: string | undefined, adoptId: string | undefined): boolean {
  return oldKey !== newKey || !id || (adoptId !== undefined && adoptId !== id);
}

/** A history request's status in which a Delete cancels it. */
export function historyCancellable(status: string | undefined): boolean {
  return status === 'pending' || status === 'processing';
}

// ---- Custom::DpiProductOrderJobs --------------------------------------------------------------------------------

/** The order IDs to submit: the declared ones (once each, in order) whose job the service has not confirmed. */
export function ordersToSubmit(orderIds: readonly string[], submitted: ReadonlySet<string>): string[] {
  return [...new Set(orderIds)].filter((o) => !submitted.has(o));
}

