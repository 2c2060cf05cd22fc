/**
 * The apps of the `dpi plan` tests: the example app (examples/app.ts) with a change made in its synthesized template
 * (the example has no context key for its subscription's name or product), and a `NotificationPipelineFleet` of N
 * seller identities (the platform app's identities and fixtures, bench/lib/platform-app.ts) where one identity's
 * notification types can differ.
 */
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { App } from 'aws-cdk-lib';
import { PLATFORM_FIRST_IDENTITY } from '../../bench/lib/platform-app';
import { buildExampleApp } from '../../examples/app';
import { AccountType, NotificationPipelineFleet, NotificationType, Subscription } from '../../src';
import type { PlanEntry } from '../../src/handler/plan-types';
import { connectedStack } from '../local/apps';

/** A change of the example app. */
export interface ExampleChange {
  /** Seller notification types (the `sellerTypes` context key). */
  readonly sellerTypes?: string;
  /** The `Orders` subscription's name (set in the synthesized template). */
  readonly ordersName?: string;
  /** The `Orders` subscription's product (set in the synthesized template). */
  readonly ordersProduct?: number;
}

/** Synthesizes the example app with `change` into `outdir`. */
export function synthExample(outdir: string, change: ExampleChange = {}): string {
  const context: Record<string, string> = {};
  if (change.sellerTypes !== undefined) context.sellerTypes = change.sellerTypes;
  buildExampleApp({ outdir, context }).synth();
  if (change.ordersName !== undefined || change.ordersProduct !== undefined) {
    const file = join(outdir, 'MarketplaceData.template.json');
    const t = JSON.parse(readFileSync(file, 'utf8')) as { Resources: Record<string, { Type: string; Properties: Record<string, unknown> }> };
    const orders = Object.entries(t.Resources).find(([id, r]) => r.Type === 'Custom::DpiSubscription' && id.startsWith('Orders'));
    if (!orders) throw new Error('the example app has no Orders subscription');
    if (change.ordersName !== undefined) orders[1].Properties.Name = change.ordersName;
    if (change.ordersProduct !== undefined) orders[1].Properties.ProductId = String(change.ordersProduct);
    writeFileSync(file, JSON.stringify(t, undefined, 1));
  }
  return outdir;
}

/** Notification types of every fleet pipeline unless overridden: an event-bus type and a queue type. */
export const FLEET_TYPES = ['ORDER_CHANGE', 'REPORT_PROCESSING_FINISHED'];

/** A product-3001 subscription beside the fleet (construct ID `id`, in stack `Platform`). */
export interface PlanFleetSubscription {
  readonly id: string;
  readonly remoteIdentityId: number;
  readonly name: string;
}

/**
 * Synthesizes stack `Platform` with fleet `Sellers` of `n` identities from PLATFORM_FIRST_IDENTITY into `outdir`, and
 * `subscriptions` beside it.
 */
export function synthPlanFleet(outdir: string, n: number, overrides: Record<number, string[]> = {}, removed: number[] = [],
  subscriptions: readonly PlanFleetSubscription[] = []): string {
  const app = new App({ outdir });
  const { stack, connection, roles } = connectedStack(app, 'Platform');
  new NotificationPipelineFleet(stack, 'Sellers', {
    connection,
    roles,
    identities: Array.from({ length: n }, (_, i) => PLATFORM_FIRST_IDENTITY + i).filter((id) => !removed.includes(id)).map((id) => ({
      remoteIdentityId: id,
      accountType: AccountType.SELLER,
      notificationTypes: (overrides[id] ?? FLEET_TYPES).map((t) => NotificationType.of(t)),
    })),
  });
  for (const sub of subscriptions) {
    new Subscription(stack, sub.id, {
      connection,
      productId: 3001,
      storageGroupId: 501,
      remoteIdentityId: sub.remoteIdentityId,
      productParameters: { marketplace_id: 'ATVPDKIKX0DER' },
      stageIds: [1001],
      name: sub.name,
    });
  }
  app.synth();
  return outdir;
}

/** The nested templates of an assembly (file names). */
export function nestedTemplates(dir: string): string[] {
  return readdirSync(dir).filter((f) => f.endsWith('.nested.template.json'));
}

/** A request the emulator logged. */
export interface Logged { method: string; path: string }

/** Paths whose POSTs change nothing (the token exchange, credential checks): not calls a plan lists. */
const NOT_CHANGING = [/^\/auth\//, /^\/service\/sp\/validate-/, /^\/service\/sp\/sp-id/];

/** The changing calls (POST, PATCH, DELETE) of a request log. */
export function changingCalls(log: readonly Logged[]): Logged[] {
  return log.filter((r) => ['POST', 'PATCH', 'DELETE'].includes(r.method) && !NOT_CHANGING.some((p) => p.test(r.path)));
}

/**
 * A path part the plan cannot know before the deploy: `{new}` (an ID the service assigns), another `{...}` name, or a
 * value that depends on a resource the same deploy makes (the runner's deploy-time placeholder, URL-encoded).
 */
const UNKNOWN_SEGMENT = /\{[A-Za-z]+\}|%3C%3Cdeploy-time%3A[^/]*?%3E%3E|<<deploy-time:[^/]*?>>/g;

/**
 * Matches the planned calls of `entries` with the calls made (each planned call one made call; see UNKNOWN_SEGMENT). Returns what is left over on each side (both empty when they are equal).
 */
export function unmatchedCalls(entries: readonly PlanEntry[], made: readonly Logged[]): { planned: string[]; made: string[] } {
  const left = made.map((r) => `${r.method} ${r.path}`);
  const planned: string[] = [];
  // Every call the plan says is always made first; then a conditional one (`when`) matches a made call or none.
  for (const conditional of [false, true]) {
    for (const e of entries) {
      for (const c of e.calls) {
        if ((c.when !== undefined) !== conditional) continue;
        const literal = c.path.replace(/[.*+?^$()|[\]\\]/g, '\\$&');
        const pattern = new RegExp(`^${c.method} ${literal.replace(UNKNOWN_SEGMENT, '[^/]+')}$`);
        const i = left.findIndex((m) => pattern.test(m));
        if (i >= 0) left.splice(i, 1);
        else if (!conditional) planned.push(`${c.method} ${c.path} (${e.logicalId})`);
      }
    }
  }
  return { planned, made: left };
}
