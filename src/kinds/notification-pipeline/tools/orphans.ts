/** `dpi orphans` of `Custom::DpiNotificationPipeline`: what a record still holds, and the Delete that ends it. */
import { str } from '../../../cli/commands/orphans-judge';
import { DeleteProperties, Holdings, SUB_GONE } from '../../../cli/commands/orphans-reads';
import { NotificationPipelineWire } from '../wire';

export const pipelineHoldings: Holdings = async (reads, _journal, out, rec) => {
  const d = rec.doc;
  const sel = (d.applied ?? d.selection ?? {}) as { types?: string[]; region?: string };
  const result = d.result as { subscriptions?: Record<string, string> } | undefined;
  const types = result?.subscriptions && Object.keys(result.subscriptions).length > 0 ? Object.keys(result.subscriptions) : sel.types ?? [];
  out.serviceIds.push(`identity ${str(d.identity)}`);
  const what = `${types.join(',')} in ${str(sel.region) || '?'}`;
  if (rec.state === 'posting') {
    out.holds = `maybe a pipeline (the create got no answer): ${what}`;
    out.unresolved = `only the service can remove what it made; once removed (or confirmed never made) run 'dpi journal resolve ${out.key}'`;
  } else if (d.subscriptionId === undefined) {
    out.holds = `pipeline without its subscription: ${what}`;
  } else {
    const sub = str(d.subscriptionId);
    out.serviceIds.push(`sub ${sub}`);
    const status = await reads.subscriptionStatus(sub);
    out.holds = SUB_GONE.has(status) ? `nothing live (subscription ${status})` : `active pipeline: ${what} (subscription ${status})`;
  }
};

/** The properties of the Delete that ends a record of the kind, from its journal document. */
export const pipelineDelete: DeleteProperties = (_o, d) => {
  const sel = (d.selection ?? {}) as { types?: string[]; roleArn?: string; ebRoleArn?: string; region?: string; accountType?: string };
  return {
    RemoteIdentityId: str(d.identity),
    AccountType: str(sel.accountType),
    NotificationTypes: sel.types ?? [],
    RoleArn: str(sel.roleArn),
    ...(sel.ebRoleArn ? { EbToFhRoleArn: sel.ebRoleArn } : {}),
    DeploymentRegion: str(sel.region),
  } satisfies Partial<NotificationPipelineWire>;
};
