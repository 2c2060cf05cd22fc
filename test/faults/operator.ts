/**
 * What the service's operators do for a residual case (a unified create whose answer was lost): remove every unified
 * pipeline that no active product-107 subscription records, through the public interface (a subscription that stores
 * the pipeline's identifiers, the unified DELETE, the subscription set invalid). Only the emulator's admin view knows
 * those identifiers; the library cannot, which is why the case is residual.
 */
import { DpiClient, endpointsFromBase } from '../../src/client';
import { DEFAULT_REFRESH_TOKEN, EmulatorStateSnapshot } from '../../src/emulator';

export async function serviceRemovesUnrecordedPipelines(url: string, state: EmulatorStateSnapshot): Promise<string[]> {
  const recorded = new Set(state.subscriptions.filter((x) => x.product === 107 && x.status === 'active')
    .map((x) => x.product_parameters.meta).filter((m) => m !== undefined)
    .map((m) => String((JSON.parse(m) as Record<string, unknown>).pipeline_id)));
  const client = new DpiClient({ endpoints: endpointsFromBase(url), refreshToken: DEFAULT_REFRESH_TOKEN });
  const removed: string[] = [];
  for (const p of state.pipelines.filter((x) => !recorded.has(x.id))) {
    const upstream = Object.fromEntries(state.upstreamSubscriptions.filter((u) => u.pipelineId === p.id).map((u) => [u.notificationType, u.id]));
    const sub = await client.subscriptions.create({
      account: 1001,
      user: 2001,
      product: 107,
      status: 'active',
      date_start: new Date().toISOString().slice(0, 19),
      remote_identity: p.remoteIdentityId,
      name: `operator-cleanup-${p.id}`,
      product_parameters: {
        remote_identity_id: String(p.remoteIdentityId),
        subscriptions: JSON.stringify(Object.keys(upstream).length > 0 ? upstream : { [p.notificationTypes[0]]: 'none' }),
        meta: JSON.stringify({ ...p.meta, pipeline_id: p.id }),
      },
    });
    await client.notifications.delete(String(p.remoteIdentityId), String(sub.id));
    await client.subscriptions.update(String(sub.id), { status: 'invalid' });
    removed.push(p.id);
  }
  return removed;
}
