/**
 * A fleet app synthesized in-process with the real constructs, for the runner's nested-stack tests.
 */
import { App, Stack } from 'aws-cdk-lib';
import { connectedStack } from './apps';
import { AccountType, NotificationPipelineFleet, NotificationType, ProviderOptions } from '../../src';

/** What the fleet app declares. */
export interface FleetAppOptions {
  /** Remote identity IDs (sellers, one pipeline each). */
  readonly identities: number[];
  /** @default 3 */
  readonly nestedStackCount?: number;
  /** Notification types of every pipeline. @default ['ORDER_CHANGE'] */
  readonly types?: string[];
  /** App context (e.g. `aws:cdk:enable-asset-metadata`, which the cdk CLI sets). @default none */
  readonly context?: Record<string, unknown>;
  /** The connection's provider options (e.g. the rate limit that decides the deploy waves). @default none */
  readonly provider?: ProviderOptions;
}

/** Synthesizes the fleet app (stack `Fleet`, fleet `Sellers`) into `outdir`; returns the nested stacks' construct paths by identity. */
export function synthFleetApp(outdir: string, o: FleetAppOptions): Map<number, string> {
  const app = new App({ outdir, context: o.context });
  const { stack, connection, roles } = connectedStack(app, 'Fleet', o.provider);
  const types = (o.types ?? ['ORDER_CHANGE']).map((t) => NotificationType.of(t));
  const fleet = new NotificationPipelineFleet(stack, 'Sellers', {
    connection,
    roles,
    nestedStackCount: o.nestedStackCount ?? 3,
    identities: o.identities.map((remoteIdentityId) => ({ remoteIdentityId, accountType: AccountType.SELLER, notificationTypes: types })),
  });
  app.synth();
  return new Map(fleet.pipelines.map((p) => [p.remoteIdentityId, Stack.of(p).node.path]));
}
