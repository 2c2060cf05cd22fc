/**
 * What every kind's `dpi drift --fix` repair (src/kinds/<kind>/runtime/repair.ts, run by src/handler/repair.ts) builds on: the
 * result, the live read of a subscription and its stored parameters, and the message of a record that is gone.
 */
import { Subscription } from '../client';
import { isStatus } from './errors';
import { JournalRecord } from './journal';
import { Runtime } from './runtime';

/** What a repair did: each property re-applied (`property: live -> declared`), and what it could not restore (and why). */
export interface RepairResult {
  readonly restored: string[];
  readonly notRestored: string[];
}

/** How `drift --fix` re-applies a kind's declared state (a kind that cannot be changed says why). */
export type Repairer = (rt: Runtime, key: string, rec: JournalRecord<unknown>) => Promise<RepairResult>;

/** What `--fix` says of a subscription or pipeline that is gone: an Update (any changed property) makes it anew. */
export const MAKE_ANEW = 'to make it anew, change one of its properties (e.g. its name) and deploy (an Update of a gone record creates a new one), '
  + 'or remove it from the app';

/** The live subscription, or a reason it cannot be repaired (gone, refused, ended). */
export async function live(rt: Runtime, id: string): Promise<Subscription | string> {
  let s: Subscription;
  try {
    s = await rt.client.subscriptions.get(id);
  } catch (e) {
    if (isStatus(e, 404)) return `subscription ${id} is gone (404): ${MAKE_ANEW}`;
    if (isStatus(e, 403)) return `the service refused to show subscription ${id} (403): nothing changed`;
    throw e;
  }
  if (s.status === 'invalid') return `subscription ${id} is invalid: ${MAKE_ANEW}`;
  if (s.status === 'cancelled') {
    return `subscription ${id} is cancelled and cannot become active again: to make a new one, give the resource a new logical ID and deploy, `
      + 'or remove it from the app';
  }
  return s;
}

/** The stored product parameters a read shows (the record's own, else the parameter read); undefined when not shown. */
export async function storedOf(rt: Runtime, s: Subscription): Promise<Record<string, string> | undefined> {
  if (s.product_parameters && typeof s.product_parameters === 'object') return s.product_parameters;
  try {
    return await rt.client.parameters.get(s.id);
  } catch {
    return undefined;
  }
}

export const shownText = (v: unknown): string => (v === undefined || v === null || v === '' ? '-' : String(v));

/** The repair of a kind whose records cannot be changed (it says why). */
export const unchangeable = (why: string): Repairer => async () => ({ restored: [], notRestored: [why] });
