/**
 * `Custom::DpiSubscription` adoption (`existingSubscriptionId`) and release: an adopted subscription existed before
 * the stack, so a Delete without an explicit `destroy` policy (and the rollback of the deploy that adopted it) hands
 * it back: the claim is released and what the adoption changed is restored where the service allows it (what it
 * cannot restore is logged and kept in the journal record). See docs/handler.md ("Ownership").
 */
import { Applied, converge, DONE, SubscriptionDesired, SubscriptionDoc, SubscriptionRecord, wantedParams } from './handler-state';
import { decodeStageIds, SubscriptionUpdate } from '../../../client';
import { claimForAdoption, contradicts, startAdoption } from '../../../handler/common';
import { continuesAfter } from '../../../handler/continuation';
import { HandlerError, messageOf } from '../../../handler/errors';
import { log } from '../../../handler/log';
import { isNumericId } from '../../../handler/props';
import { Runtime } from '../../../handler/runtime';
import { CfnEvent, OnEventResult } from '../../../handler/types';
import type { SubscriptionState } from '../wire';

/**
 * The declaration of a resource: its properties without the service token, the connection (its URLs and table differ
 * between runs of `dpi local-deploy`, and a rotated secret is no new declaration) and the removal policy, stable
 * across key order.
 */
export function declarationOf(props: Record<string, unknown> | undefined): string {
  const stable = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(stable);
    if (v !== null && typeof v === 'object') {
      return Object.fromEntries(Object.keys(v).sort().map((k) => [k, stable((v as Record<string, unknown>)[k])]));
    }
    return v;
  };
  const { ServiceToken: _t, RemovalPolicy: _p, Connection: _c, ...rest } = props ?? {};
  return JSON.stringify(stable(rest));
}

/**
 * Adopts an existing subscription: no creating call. It must exist and be active or paused; the product and identity
 * a read shows (vendor reads) must be the declared ones; it is claimed for the resource (refused, naming the owner,
 * when another resource manages it); then it is reconciled as an Update would: what a read shows is taken as applied,
 * everything else declared is sent (one idempotent PATCH). The journal record ends as a Create's (`active`,
 * `applied` = the declared state).
 */
export async function adopt(event: CfnEvent, rt: Runtime, d: SubscriptionDesired, id: string): Promise<OnEventResult> {
  const start = await startAdoption<SubscriptionDoc>(event, rt, 'Subscription', id, isNumericId, DONE);
  const key = start.key;
  let rec = start.rec;
  const sub = start.sub;
  if (rec?.state === 'active') {
    log({ msg: 'adoption already done by an earlier delivery', subscriptionId: id });
    return converge(rt, rec, d, sub.status);
  }
  const wrong: string[] = [];
  if (contradicts(sub.product, d.productId)) wrong.push(`product ${sub.product} (declared ${d.productId})`);
  if (contradicts(sub.remote_identity, d.remoteIdentityId)) wrong.push(`remote identity ${sub.remote_identity} (declared ${d.remoteIdentityId ?? 'none'})`);
  if (wrong.length > 0) {
    throw new HandlerError(`Subscription: existingSubscriptionId ${id} has ${wrong.join(' and ')}; a change of product or identity needs a new `
      + 'subscription: declare what the service has, or drop existingSubscriptionId; nothing was changed');
  }
  await claimForAdoption(rt, 'sub', id, key, 'subscription');
  const stored = await storedParameters(rt, id);
  const { shown, before } = adoptionView(sub, stored, d);
  const doc: SubscriptionDoc = {
    product: d.productId,
    identity: d.remoteIdentityId,
    subscriptionId: id,
    applied: shown,
    adopted: true,
    removalPolicy: d.removalPolicy ?? 'retain',
    adoption: { before, paramsShown: stored !== undefined, declared: declarationOf(event.ResourceProperties) },
  };
  rec = rec ? await rt.journal.save(rec, 'adopting', doc) : await rt.journal.create<SubscriptionDoc, SubscriptionState>(key, 'adopting', doc, id);
  log({ msg: 'adopting an existing subscription', subscriptionId: id, shown: Object.keys(shown) });
  try {
    return await converge(rt, rec, d, sub.status, true);
  } catch (e) {
    // A continuation keeps the adoption: isComplete resumes it under the same record.
    if (continuesAfter(rt, e)) throw e;
    // A failed adoption hands the record back as it found it (the provider framework ignores the rollback Delete
    // of a failed Create), then reports the failure.
    await release(rt, (await rt.journal.records<SubscriptionDoc>(key)).find((r) => r.id === rec!.id) ?? rec, event.ResourceProperties);
    throw e;
  }
}

/** What a subscription read (and the stored parameter read) shows of a record to adopt. */
export interface AdoptionRead {
  readonly status: string;
  readonly remote_identity?: unknown;
  readonly name?: unknown;
  readonly storage_group?: unknown;
  readonly date_start?: unknown;
}

/**
 * What the reads show of a subscription to adopt (`shown`: what the service has of the declared state, taken as
 * applied: the rest is unknown and sent if declared; `before`: everything shown, kept to restore on release). Where
 * the service shows the stored parameters (the vendor's SPP read, an assumption), declared ones it already stores are
 * not sent again (so adopting what `dpi import` wrote makes no changing call). Shared by the handler and `dpi plan`.
 */
export function adoptionView(sub: AdoptionRead, stored: Readonly<Record<string, string>> | undefined,
  d: SubscriptionDesired): { shown: Applied; before: Applied } {
  const shownParams: Record<string, string> = {};
  if (sub.remote_identity !== undefined && sub.remote_identity !== null) shownParams.remote_identity_id = String(sub.remote_identity);
  const shown: Applied = {
    params: shownParams,
    status: sub.status === 'paused' ? 'paused' : 'active',
    ...(typeof sub.name === 'string' ? { name: sub.name } : {}),
    ...(sub.storage_group !== undefined && sub.storage_group !== null ? { storageGroupId: Number(sub.storage_group) } : {}),
    ...(typeof sub.date_start === 'string' ? { dateStart: sub.date_start } : {}),
  };
  Object.assign(shownParams, alreadyStored(wantedParams(d), stored));
  return { shown, before: { ...shown, params: { ...(stored ?? {}), ...shownParams } } };
}

/** The stored parameters of a subscription as the vendor's parameter read shows them; undefined when not shown. */
async function storedParameters(rt: Runtime, id: string): Promise<Record<string, string> | undefined> {
  if (typeof rt.client.parameters?.get !== 'function') return undefined;
  try {
    return await rt.client.parameters.get(id);
  } catch (e) {
    log({ level: 'WARNING', msg: 'the stored parameters could not be read; declared ones are sent', subscriptionId: id, error: messageOf(e) });
    return undefined;
  }
}

/** The declared parameters the service already stores with the same value (stage IDs compared as ID sets). */
function alreadyStored(want: Record<string, string>, stored: Readonly<Record<string, string>> | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  if (!stored) return out;
  const ids = (v: string): string | undefined => {
    try {
      return JSON.stringify([...decodeStageIds(v)].sort((a, b) => a - b));
    } catch {
      return undefined;
    }
  };
  for (const [k, v] of Object.entries(want)) {
    const have = stored[k];
    if (have === undefined) continue;
    if (have === v || (k === 'stage_ids' && ids(have) !== undefined && ids(have) === ids(v))) out[k] = v;
  }
  return out;
}

/**
 * Releases a subscription record (a Delete with the `retain` policy, or a failed adoption): no call ends it. An
 * adopted record whose declaration is still the one that adopted it (the rollback of the adopting deploy, or a
 * removal before any later change) is restored to what a read showed before the adoption, where the service allows
 * it: name, storage group, start date, status and the values of stored parameters it showed; a parameter the
 * adoption added cannot be removed (partial merge), and is reported.
 */
export async function release(rt: Runtime, rec: SubscriptionRecord | undefined, props: Record<string, unknown> | undefined): Promise<void> {
  if (!rec || DONE.has(rec.state)) return;
  const id = rec.physicalId ?? rec.doc.subscriptionId;
  const a = rec.doc.adoption;
  const unrestored: string[] = [];
  if (id !== undefined && a !== undefined && a.declared === declarationOf(props) && rec.doc.applied) {
    const now = rec.doc.applied;
    const changes: SubscriptionUpdate = {};
    if (a.before.name !== undefined && now.name !== undefined && now.name !== a.before.name) changes.name = a.before.name;
    if (a.before.storageGroupId !== undefined && now.storageGroupId !== undefined && now.storageGroupId !== a.before.storageGroupId) {
      changes.storage_group = a.before.storageGroupId;
    }
    const ds = a.before.dateStart;
    if (ds !== undefined && now.dateStart !== undefined && now.dateStart !== ds) changes.date_start = ds;
    if (now.status !== a.before.status) changes.status = a.before.status;
    const params: Record<string, string> = {};
    for (const [k, v] of Object.entries(now.params)) {
      const was = a.before.params[k];
      if (was === v) continue;
      if (was !== undefined) {params[k] = was;} else {
        unrestored.push(a.paramsShown ? `productParameters.${k} (added by the adoption; the service cannot remove it)`
          : `productParameters.${k} (its value before the adoption was not shown by any read)`);
      }
    }
    if (Object.keys(params).length > 0) changes.product_parameters = params;
    for (const k of ['name', 'storageGroupId', 'dateStart'] as const) {
      if (a.before[k] === undefined && now[k] !== undefined) unrestored.push(`${k} (its value before the adoption was not shown by any read)`);
    }
    if (Object.keys(changes).length > 0) {
      try {
        await rt.client.subscriptions.update(id, changes);
        log({ msg: 'restored what the adoption changed', subscriptionId: id, restored: Object.keys(changes) });
      } catch (e) {
        unrestored.push(`${Object.keys(changes).join(', ')} (the restoring update failed: ${messageOf(e)})`);
      }
    }
  }
  if (a !== undefined && a.declared !== declarationOf(props)) {
    log({ msg: 'the declaration changed since the adoption: the subscription is released as it is now (nothing restored)', subscriptionId: id });
  }
  if (unrestored.length > 0) {
    log({
      level: 'WARNING',
      msg: 'released the subscription; what the adoption changed could not all be restored',
      subscriptionId: id,
      unrestored,
    });
  } else {
    log({ msg: 'released the subscription: it is kept in the service and no longer managed by this resource', subscriptionId: id });
  }
  await rt.journal.save(rec, 'released', { ...rec.doc, ...(unrestored.length > 0 ? { unrestored } : {}) });
}
