/**
 * The adoption of an existing unified pipeline (`AdoptId`, `existingSubscriptionId`): no creating call, and no
 * changing call to the pipeline when the service shows that it already is what the declaration says. See
 * docs/handler.md, "Adoption".
 */
import { claimIdentity, converge, DONE, PipelineDesired, PipelineDoc, PRODUCT, release, sameSelection, selectionOf } from './handler-state';
import { compareAdoption, matches, StoredPipeline, storedPipeline, whyNot } from './handler-stored';
import { claimForAdoption, contradicts, startAdoption } from '../../../handler/common';
import { continuesAfter } from '../../../handler/continuation';
import { HandlerError } from '../../../handler/errors';
import { log } from '../../../handler/log';
import { pipelineConvergence } from '../../../handler/plan-decisions';
import { isNumericId } from '../../../handler/props';
import { Runtime } from '../../../handler/runtime';
import { CfnEvent, OnEventResult } from '../../../handler/types';
import type { NotificationPipelineState } from '../wire';

/** The pipeline the vendor's parameter read shows (undefined: not shown; a failed read is thrown: nothing changed yet). */
async function shownPipeline(rt: Runtime, id: string): Promise<StoredPipeline | undefined> {
  if (typeof rt.client.parameters?.get !== 'function') return undefined;
  return storedPipeline(await rt.client.parameters.get(id), rt.metadataKeys);
}

/**
 * What else would make the stored result a wrong witness of the pipeline: another live product-107 subscription of
 * the identity (which of them holds the pipeline's metadata cannot be told), and what the journal of the resource that
 * managed the pipeline before (the claim's owner, whose record is released) confirmed: an update of it whose outcome or
 * result was never stored, other roles, another result than the stored one.
 */
async function doubts(rt: Runtime, d: PipelineDesired, id: string, key: string, shown: StoredPipeline): Promise<string[]> {
  const out: string[] = [];
  const siblings = (await rt.client.subscriptions.list({ product: PRODUCT, remoteIdentity: d.remoteIdentityId }))
    .filter((s) => String(s.id) !== id && (s.status === 'active' || s.status === 'paused')).map((s) => String(s.id));
  if (siblings.length > 0) out.push(`remote identity ${d.remoteIdentityId} has other live product-${PRODUCT} subscriptions (${siblings.join(', ')})`);
  const owner = (await rt.journal.owners('sub', [id])).get(id);
  if (owner === undefined || owner === key) return out;
  const before = (await rt.journal.records<PipelineDoc>(owner)).filter((r) => r.physicalId === id && r.state === 'released')
    .sort((a, b) => (a.id < b.id ? 1 : -1))[0];
  if (!before) return out;
  const b = before.doc;
  if (b.staleMetadata === true || (b.applied !== undefined && !sameSelection(b.applied, b.selection))) {
    out.push(`${owner} released it with an update whose result the service may not store`);
  } else if (b.applied !== undefined) {
    if (b.applied.roleArn !== d.roleArn || (b.applied.ebRoleArn ?? '') !== (d.ebRoleArn ?? '')) {
      out.push(`roles: ${owner} last applied ${[b.applied.roleArn, b.applied.ebRoleArn].filter((x) => x).join(', ')}`);
    }
    const confirmed = Object.keys(b.result?.subscriptions ?? {}).sort().join(',');
    if (b.result !== undefined && confirmed !== Object.keys(shown.subscriptions).sort().join(',')) {
      out.push(`the stored result differs from the one ${owner} confirmed ([${confirmed}])`);
    }
  }
  return out;
}

/**
 * Adopts an existing unified pipeline through its product-107 subscription. The subscription must exist and be
 * active or paused (a read showing another product or identity refuses it). Its stored parameters (the vendor's
 * parameter read) show the unified result: the types that subscribed and the region and AWS account of its delivery
 * resources. When they match the declaration the pipeline is taken over as it is: the journal keeps the stored result
 * (which later updates, deletes and the attributes rely on) and no unified PATCH is sent. When they differ, or the
 * reads do not show them (the spec's reads), the unified PATCH would rebuild the pipeline's upstream subscriptions:
 * the adoption fails before any change unless the declaration allows it (`RebuildOnAdoption`). With it the record is
 * always reconciled with the PATCH (full body) as an Update of an unconfirmed record, and its result is the service's
 * answer, never the stored values (which whoever holds the service account can write).
 */
export async function adoptPipeline(event: CfnEvent, rt: Runtime, d: PipelineDesired, id: string): Promise<OnEventResult> {
  const start = await startAdoption<PipelineDoc>(event, rt, 'NotificationPipeline', id, isNumericId, DONE);
  const key = start.key;
  let rec = start.rec;
  const sub = start.sub;
  if (rec && (rec.state === 'active' || rec.state === 'updating')) return converge(rt, rec, d, event);
  const wrong: string[] = [];
  if (contradicts(sub.product, PRODUCT)) wrong.push(`is a product-${sub.product} subscription, not a unified pipeline's (product ${PRODUCT})`);
  if (contradicts(sub.remote_identity, d.remoteIdentityId)) wrong.push(`belongs to remote identity ${sub.remote_identity} (declared ${d.remoteIdentityId})`);
  if (wrong.length > 0) throw new HandlerError(`NotificationPipeline: existingSubscriptionId ${id} ${wrong.join(' and ')}; nothing was changed`);
  // rebuildOnAdoption: the result is taken from the service's answer to the unified PATCH, never from what is stored.
  const shown = d.rebuildOnAdoption ? undefined : await shownPipeline(rt, id);
  const cmp = compareAdoption(d, shown);
  if (shown !== undefined && matches(cmp)) cmp.doubts.push(...await doubts(rt, d, id, start.key, shown));
  const asItIs = shown !== undefined && matches(cmp);
  if (!asItIs && !d.rebuildOnAdoption) {
    const why = whyNot(cmp);
    // The step first: a long reason is cut (~500 characters).
    throw new HandlerError(`NotificationPipeline: existingSubscriptionId ${id} (remote identity ${d.remoteIdentityId}) was not adopted, nothing was `
      + 'changed: adopting it would send the unified PATCH, which disables its upstream subscriptions and makes them anew (not atomic); '
      + `${cmp.differs.length > 0 ? 'declare what the service stores, or ' : ''}set rebuildOnAdoption: true to allow the rebuild. Why: ${why}`);
  }
  await claimIdentity(rt, d.remoteIdentityId, key, id);
  await claimForAdoption(rt, 'sub', id, key, 'subscription');
  // As it is: the declared name or storage group is set before the record is written, so a container stopped in
  // between leaves only the claims, which the next adopter (this resource's retry too) takes over.
  const named = {
    name: typeof sub.name === 'string' ? sub.name : undefined,
    storageGroupId: sub.storage_group === undefined || sub.storage_group === null
      ? undefined : Number(sub.storage_group),
  };
  const changes = asItIs ? pipelineConvergence(selectionOf(d), named, d, selectionOf(d), false).changes : {};
  if (Object.keys(changes).length > 0) await rt.client.subscriptions.update(id, changes);
  const doc: PipelineDoc = {
    identity: d.remoteIdentityId,
    selection: selectionOf(d),
    subscriptionId: id,
    adopted: true,
    removalPolicy: d.removalPolicy ?? 'retain',
    // What a read shows is what the service has (vendor reads), with what was just set; otherwise the declared name /
    // storage are sent by converge.
    ...(named.name !== undefined || (asItIs && d.name !== undefined) ? { name: asItIs ? d.name ?? named.name : named.name } : {}),
    ...(named.storageGroupId !== undefined || (asItIs && d.storageGroupId !== undefined)
      ? { storageGroupId: asItIs ? d.storageGroupId ?? named.storageGroupId : named.storageGroupId } : {}),
    // Taken as it is: the service's stored result is the confirmed one (its failures are not stored: none known).
    ...(asItIs ? { applied: selectionOf(d), result: { subscriptions: shown.subscriptions, failed: {}, meta: shown.meta } } : {}),
  };
  // As it is: `active` with the stored result (converge then sends at most the name or storage group). Otherwise
  // `updating` without a confirmed selection: converge sends the unified PATCH.
  const state: NotificationPipelineState = asItIs ? 'active' : 'updating';
  rec = rec ? await rt.journal.save(rec, state, doc) : await rt.journal.create<PipelineDoc, NotificationPipelineState>(key, state, doc, id);
  log({
    msg: asItIs ? 'adopting an existing notification pipeline as the service stores it (no unified PATCH)'
      : 'adopting an existing notification pipeline with the unified PATCH (rebuildOnAdoption)',
    subscriptionId: id,
    remoteIdentityId: d.remoteIdentityId,
    ...(asItIs ? {} : { notShown: cmp.notShown, differs: cmp.differs, doubts: cmp.doubts }),
  });
  try {
    return await converge(rt, rec, d, event);
  } catch (e) {
    // A continuation keeps the adoption: isComplete resumes it under the same record.
    if (continuesAfter(rt, e)) throw e;
    // A failed adoption hands the pipeline back (the provider framework ignores the rollback Delete of a failed Create).
    await release(rt, (await rt.journal.records<PipelineDoc>(key)).find((r) => r.id === rec!.id));
    throw e;
  }
}
