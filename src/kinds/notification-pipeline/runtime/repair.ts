/** `dpi drift --fix` of `Custom::DpiNotificationPipeline`: the unified PATCH re-sends the selection, through the handler's `converge`. */
import { expectedTypes, storedTypes } from './drift';
import { converge, PipelineDesired, PipelineDoc, Selection } from './handler-state';
import { JournalRecord } from '../../../handler/journal';
import { sameSet, accountOfArn } from '../../../handler/props';
import { live, RepairResult, Repairer, shownText, storedOf } from '../../../handler/repair-common';
import { Runtime } from '../../../handler/runtime';
import { CfnEvent } from '../../../handler/types';
import { NotificationPipelineKind } from '../wire';

async function repairPipeline(rt: Runtime, rec: JournalRecord<PipelineDoc>, key: string): Promise<RepairResult> {
  const id = rec.doc.subscriptionId ?? rec.physicalId!;
  const applied: Selection | undefined = rec.doc.applied;
  if (!applied) return { restored: [], notRestored: ['the journal has no confirmed selection of it'] };
  const s = await live(rt, id);
  if (typeof s === 'string') return { restored: [], notRestored: [s] };
  const restored: string[] = [];
  const notRestored: string[] = [];
  if (s.remote_identity !== undefined && s.remote_identity !== null && String(s.remote_identity) !== rec.doc.identity) {
    // Checked before any change: a record showing another identity is not changed at all.
    return { restored, notRestored: [`remoteIdentityId (${s.remote_identity}, declared ${rec.doc.identity}): another identity is another pipeline; redeploy replaces it`] };
  }
  if (s.status !== 'active') {
    // The handler keeps a pipeline's subscription active (it never pauses one): the status is set back alone.
    await rt.client.subscriptions.update(id, { status: 'active' });
    restored.push(`status: ${s.status} -> active`);
  }
  const seen: PipelineDoc = { ...rec.doc };
  const types = storedTypes(await storedOf(rt, s), rt.metadataKeys.subscriptions);
  // Types the last deploy could not subscribe (partialFailure ALLOW) are not drift: re-sending the selection for them
  // would rebuild a healthy pipeline on every run.
  const expected = expectedTypes(rec.doc) ?? applied.types;
  if (types !== undefined && !sameSet(types, expected)) {
    seen.applied = { ...applied, types };
    restored.push(`notificationTypes: ${types.join(',') || '-'} -> ${[...applied.types].sort().join(',')}`);
  }
  if (s.name !== undefined && rec.doc.name !== undefined && (s.name ?? '') !== rec.doc.name) {
    seen.name = s.name ?? '';
    restored.push(`name: ${shownText(s.name)} -> ${rec.doc.name}`);
  }
  if (s.storage_group !== undefined && rec.doc.storageGroupId !== undefined && Number(s.storage_group) !== rec.doc.storageGroupId) {
    seen.storageGroupId = s.storage_group === null ? undefined : Number(s.storage_group);
    restored.push(`storageGroupId: ${shownText(s.storage_group)} -> ${rec.doc.storageGroupId}`);
  }
  const unchanged = seen.applied === rec.doc.applied && seen.name === rec.doc.name && seen.storageGroupId === rec.doc.storageGroupId;
  if (unchanged) return { restored, notRestored };
  const d: PipelineDesired = {
    remoteIdentityId: rec.doc.identity,
    accountType: applied.accountType,
    types: applied.types,
    roleArn: applied.roleArn,
    ebRoleArn: applied.ebRoleArn,
    region: applied.region,
    storageGroupId: rec.doc.storageGroupId,
    name: rec.doc.name,
    rebuildOnAdoption: false,
    // Failed types are reported below (the journal keeps what the service confirmed).
    partialFailure: 'ALLOW',
    removalPolicy: rec.doc.removalPolicy,
  };
  // The roles are the ones the last deploy applied (it checked their account against the stack's): checked against themselves.
  const rolesAccount = accountOfArn(applied.roleArn) ?? '';
  const [stack, ...rest] = key.split('/');
  const event: CfnEvent = {
    RequestType: 'Update',
    StackId: `dpi-drift-fix:${stack}`,
    RequestId: `dpi-drift-fix-${rec.id}`,
    LogicalResourceId: rest.join('/'),
    ResourceType: NotificationPipelineKind.type,
    ResourceProperties: {},
    PhysicalResourceId: id,
  };
  await converge({ ...rt, callerAccountId: async () => rolesAccount }, { ...rec, doc: seen }, d, event);
  const now = (await rt.journal.records<PipelineDoc>(rec.key)).find((r) => r.id === rec.id);
  const failed = Object.keys(now?.doc.result?.failed ?? {});
  if (failed.length > 0) notRestored.push(`notificationTypes ${failed.join(', ')}: the service could not subscribe them (see dpi status)`);
  return { restored, notRestored };
}

/** The repair of a unified pipeline. */
export const pipelineRepair: Repairer = (rt, key, rec) => repairPipeline(rt, rec as JournalRecord<PipelineDoc>, key);
