/**
 * `dpi drift --fix`: re-applies a resource's declared state (the lifecycle journal's last confirmed document) where
 * the service now shows something else, through the handler's own convergence code: a subscription through
 * `converge` (src/kinds/subscription/runtime/handler-state.ts; one PATCH of what differs: status, name, storage group, product
 * parameters), a unified pipeline through its `converge` (src/kinds/notification-pipeline/runtime/handler-state.ts; the unified
 * PATCH re-sends the selection
 * and the stored result follows). What differs is told to `converge` as the state the service confirmed last, so it
 * sends exactly that difference; the journal ends as an Update with the same declaration leaves it.
 *
 * Only a record the journal proves the resource holds (`ownership`) is repaired; what cannot be restored (a field the
 * service keeps, an identity, a history request, jobs) is reported, never changed. Used by the CLI only; the
 * `DriftMonitor` stays read-only.
 */
import { DpiClient, ProductRecord } from '../client';
import { DEFAULT_PIPELINE_METADATA_KEYS } from '../contract';
import { isKindType } from '../kinds';
import { messageOf } from './errors';
import { Journal, JournalRecord } from './journal';
import { RepairResult } from './repair-common';
import { Runtime } from './runtime';
import { TOOLS_HOOKS } from '../kinds/registry/tools';

export type { RepairResult, Repairer } from './repair-common';

/** What the repair runtime needs: the CLI's client and journal. */
export interface RepairRuntimeOptions {
  readonly client: DpiClient;
  readonly journal: Journal;
  /** The connection's `pipelineMetadataKeys`. @default the defaults */
  readonly metadataKeys?: { readonly subscriptions?: string; readonly meta?: string };
}

/** A handler runtime over the CLI's client and journal (no deadline beyond the client's own bounds). */
export function repairRuntime(o: RepairRuntimeOptions): Runtime {
  const products = new Map<number, Promise<ProductRecord>>();
  let ids: Promise<{ accountId: string; userId: string }> | undefined;
  return {
    client: o.client,
    journal: o.journal,
    deadline: Date.now() + 60 * 60_000,
    metadataKeys: {
      subscriptions: o.metadataKeys?.subscriptions || DEFAULT_PIPELINE_METADATA_KEYS.subscriptions,
      meta: o.metadataKeys?.meta || DEFAULT_PIPELINE_METADATA_KEYS.meta,
    },
    ids: () => (ids ??= (async () => ({ accountId: (await o.client.account.get()).id, userId: (await o.client.user.get()).id }))()),
    sleep: (ms) => new Promise((r) => setTimeout(r, ms)),
    callerAccountId: async () => {
      throw new Error('dpi drift --fix reads no AWS account');
    },
    journalAt: () => {
      throw new Error('dpi drift --fix reads the stacks\' own journal only');
    },
    product: (id) => {
      let p = products.get(id);
      if (!p) products.set(id, p = o.client.products.get(id));
      return p;
    },
    roleCreatedAt: async () => undefined,
  };
}

/**
 * Why `--fix` must leave a resource's record alone (undefined: the journal proves the resource holds it). `owner`: the
 * resource the journal's claim of the subscription names (undefined when no claim is recorded).
 */
export function notOwned(type: string, key: string, physicalId: string, rec: JournalRecord<unknown> | undefined, owner?: string): string | undefined {
  if (!rec) return 'no journal record proves this resource made or adopted it';
  const states = isKindType(type) ? TOOLS_HOOKS[type].repairableStates : undefined;
  if (!states) return undefined;
  if (rec.state === 'released') return 'its journal record is released (kept in the service, no longer managed by the stack)';
  if (!states.has(rec.state)) return `its journal record is ${rec.state}, not active (the next deploy settles it)`;
  const sub = (rec.doc as { subscriptionId?: unknown }).subscriptionId;
  if (rec.physicalId !== physicalId || (typeof sub === 'string' && sub !== physicalId)) return `its journal record names another record (${String(sub ?? rec.physicalId)})`;
  if (owner !== undefined && owner !== key) return `the journal's claim of subscription ${physicalId} names ${owner}`;
  return undefined;
}

/**
 * Re-applies the declared state of one resource whose record `rec` the journal proves it holds (see `notOwned`).
 * Throws on a failed service or journal call (the caller reports it per resource).
 */
export async function repair(rt: Runtime, type: string, key: string, rec: JournalRecord<unknown>): Promise<RepairResult> {
  try {
    if (!isKindType(type)) return { restored: [], notRestored: [`not a resource type of this library (${type})`] };
    return await TOOLS_HOOKS[type].repair(rt, key, rec);
  } catch (e) {
    throw new Error(messageOf(e));
  }
}
