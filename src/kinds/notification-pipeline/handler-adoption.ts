/**
 * The adoption of an existing unified pipeline (`AdoptId`, `existingSubscriptionId`): no creating call, and no
 * changing call to the pipeline when the service shows that it already is what the declaration says. See
 * docs/handler.md, "Adoption".
 */
import { claimIdentity, converge, DONE, PipelineDesired, PipelineDoc, PRODUCT, release, selectionOf } from './handler-state';
import { compareAdoption, StoredPipeline, storedPipeline } from './handler-stored';
import type { NotificationPipelineState } from './wire';
import { claimForAdoption, contradicts, startAdoption } from '../../handler/common';
import { HandlerError } from '../../handler/errors';
import { log } from '../../handler/log';
import { isNumericId } from '../../handler/props';
import { Runtime } from '../../handler/runtime';
import { CfnEvent, OnEventResult } from '../../handler/types';

/** The pipeline the vendor's parameter read shows (undefined: not shown; a failed read is thrown: nothing changed yet). */
async function shownPipeline(rt: Runtime, id: string): Promise<StoredPipeline | undefined> {
  if (typeof rt.client.parameters?.get !== 'function') return undefined;
  return storedPipeline(await rt.client.parameters.get(id), rt.metadataKeys);
}

/**
 * Adopts an existing unified pipeline through its product-107 subscription. The subscription must exist and be
 * active or paused (a read showing another product or identity refuses it). Its stored parameters (the vendor's
 * parameter read) show the unified result: the types that subscribed and the region and AWS account of its delivery
 * resources. When they match the declaration the pipeline is taken over as it is: the journal keeps the stored result
 * (which later updates, deletes and the attributes rely on) and no unified PATCH is sent. When they differ, or the
 * reads do not show them (the spec's reads), the unified PATCH would rebuild the pipeline's upstream subscriptions:
 * the adoption fails before any change unless the declaration allows it (`RebuildOnAdoption`), in which case the
 * record is reconciled with the PATCH (full body) as an Update of an unconfirmed record.
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
  const shown = await shownPipeline(rt, id);
  const cmp = compareAdoption(d, shown);
  const asItIs = shown !== undefined && cmp.notShown.length === 0 && cmp.differs.length === 0;
  if (!asItIs && !d.rebuildOnAdoption) {
    const why = cmp.differs.length > 0 ? `the pipeline the service stores differs from the declaration (${cmp.differs.join('; ')})`
      : `the service's reads do not show the pipeline's ${cmp.notShown.join(', ')} (its stored parameters: the vendor's parameter read)`;
    // The step first: a long reason is cut (~500 characters).
    throw new HandlerError(`NotificationPipeline: existingSubscriptionId ${id} (remote identity ${d.remoteIdentityId}) was not adopted, nothing was `
      + 'changed: adopting it would send the unified PATCH, which disables its upstream subscriptions and makes them anew (not atomic); '
      + `${cmp.differs.length > 0 ? 'declare what the service stores, or ' : ''}set rebuildOnAdoption: true to allow the rebuild. Why: ${why}`);
  }
  await claimIdentity(rt, d.remoteIdentityId, key, id);
  await claimForAdoption(rt, 'sub', id, key, 'subscription');
  const doc: PipelineDoc = {
    identity: d.remoteIdentityId,
    selection: selectionOf(d),
    subscriptionId: id,
    adopted: true,
    removalPolicy: d.removalPolicy ?? 'retain',
    // What a read shows is what the service has (vendor reads); otherwise the declared name / storage are sent.
    ...(typeof sub.name === 'string' ? { name: sub.name } : {}),
    ...(sub.storage_group !== undefined && sub.storage_group !== null ? { storageGroupId: Number(sub.storage_group) } : {}),
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
    ...(asItIs ? {} : { notShown: cmp.notShown, differs: cmp.differs }),
  });
  try {
    return await converge(rt, rec, d, event);
  } catch (e) {
    // A failed adoption hands the pipeline back (the provider framework ignores the rollback Delete of a failed Create).
    await release(rt, (await rt.journal.records<PipelineDoc>(key)).find((r) => r.id === rec!.id));
    throw e;
  }
}
