/**
 * `dpi orphans` of `Custom::DpiLegacyNotificationPipeline`: a legacy pipeline is a product-86 subscription, so what a
 * record holds is read as a subscription's; and the Delete that ends it.
 */
import { str } from '../../../cli/commands/orphans-judge';
import { DeleteProperties, Holdings } from '../../../cli/commands/orphans-reads';
import { subscriptionHoldings } from '../../subscription/tools/orphans';
import { LegacyNotificationPipelineWire } from '../wire';

/** What a legacy pipeline still holds: its product-86 subscription. */
export const legacyHoldings: Holdings = subscriptionHoldings;

/** The properties of the Delete that ends a record of the kind, from its journal document. */
export const legacyDelete: DeleteProperties = (o, d) => {
  const applied = (d.applied ?? {}) as { queueArn?: string; types?: string[] };
  return {
    SubscriptionId: str(o.physicalId ?? d.subscriptionId),
    RemoteIdentityId: str(d.identity),
    QueueArn: str(applied.queueArn),
    NotificationTypes: applied.types ?? [],
    Retired: 'false',
  } satisfies Partial<LegacyNotificationPipelineWire>;
};
