/**
 * `dpi plan`'s reads of the records a deploy adopts (`existingSubscriptionId` → `AdoptId`): the subscription and its
 * stored parameters, handed to `planResource` as `PlanInput.adoption`, so that the plan says what the handler will
 * decide (no change when the service already has the declaration; the fields one PATCH sets, a paused subscription
 * re-activated; the handler's refusal). Bounded reads: the account's subscription listing the plan's live state
 * already read (else one read each for a few, one listing for more), and the stored parameters in bulk reads of 100.
 */
import type { Planner } from './plan-compare';
import { DpiClient, Subscription } from '../../client';
import type { PlanAdoptionHint } from '../../handler/plan-types';

/** Up to this many adoptions are read one by one; more read the account's subscriptions in one listing. */
export const SINGLE_READS_UP_TO = 10;

/** The reads of the records to adopt, by subscription ID (a missing one has no `subscription`: it answered 404). */
export async function readAdoptions(client: DpiClient, ids: readonly string[],
  listed?: ReadonlyMap<string, Subscription>): Promise<Map<string, PlanAdoptionHint>> {
  const out = new Map<string, PlanAdoptionHint>();
  if (ids.length === 0) return out;
  const subs = new Map<string, Subscription>();
  if (listed !== undefined) {
    // The account's listing the plan already read (its live state).
    for (const id of ids) if (listed.has(id)) subs.set(id, listed.get(id)!);
  } else if (ids.length <= SINGLE_READS_UP_TO) {
    for (const id of ids) {
      const s = await client.subscriptions.get(id).catch((e: { status?: number }) => {
        if (e.status === 404) return undefined;
        throw e;
      });
      if (s) subs.set(id, s);
    }
  } else {
    const wanted = new Set(ids);
    for (const s of await client.subscriptions.list()) if (wanted.has(String(s.id))) subs.set(String(s.id), s);
  }
  const present = ids.filter((id) => subs.has(id));
  const stored = present.length > 0 && typeof client.parameters?.bulk === 'function' ? await client.parameters.bulk(present) : undefined;
  const live = (s: Subscription): boolean => s.status === 'active' || s.status === 'paused';
  for (const id of ids) {
    const s = subs.get(id);
    const params = stored?.get(id);
    // With the account's listing: the other live subscriptions of its product and identity (a pipeline's adoption
    // refuses a stored result another product-107 subscription of the identity could hold).
    const shown = s !== undefined && s.product !== undefined && s.remote_identity !== undefined && s.remote_identity !== null;
    const same = (o: Subscription): boolean => String(o.id) !== id && live(o) && String(o.product) === String(s!.product)
      && String(o.remote_identity) === String(s!.remote_identity);
    const siblings = listed !== undefined && shown ? [...listed.values()].filter(same).map((o) => String(o.id)) : undefined;
    out.set(id, s === undefined ? {} : {
      subscription: s, ...(params !== undefined ? { stored: params } : {}), ...(siblings !== undefined && siblings.length > 0 ? { siblings } : {}),
    });
  }
  return out;
}

/** The planner with the reads of the records to adopt handed to each resource that adopts one. */
export function withAdoptions(planner: Planner, reads: ReadonlyMap<string, PlanAdoptionHint>): Planner {
  if (reads.size === 0) return planner;
  return (input) => {
    const adopt = input.newProps?.AdoptId;
    const hint = typeof adopt === 'string' ? reads.get(adopt) : undefined;
    return planner(hint !== undefined ? { ...input, adoption: hint } : input);
  };
}
