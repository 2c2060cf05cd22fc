/**
 * The upgrade check: `dpi plan --from <kept release> --app <current>`'s own comparison (collectPlan with the handler's
 * planResource; the plan code is imported, not copied) and the entries that take a guarded action on a deployed
 * record — rebuild, replace, delete (also as the possible action of a deploy-time value) or a change the handler
 * refuses (failure) — that no CHANGELOG allowance names.
 */
import { Allowance, GuardedAction } from './changelog';
import { collectPlan } from '../../src/cli/commands/plan-sources';
import { planResource } from '../../src/handler/plan';
import type { PlanEntry } from '../../src/handler/plan-types';

/** One guarded action of the upgrade. */
export interface Finding {
  readonly action: GuardedAction;
  readonly entry: PlanEntry;
  /** The allowance that names it, if one does. */
  readonly allowedBy?: Allowance;
}

/** The guarded action an entry takes, if any (the action first, then a possible action, then a refusal). */
export function guardedAction(e: PlanEntry): GuardedAction | undefined {
  const bad = (a: string | undefined): a is GuardedAction => a === 'rebuild' || a === 'replace' || a === 'delete';
  if (bad(e.action)) return e.action;
  if (bad(e.possibleAction)) return e.possibleAction;
  return e.failure !== undefined ? 'failure' : undefined;
}

function allows(a: Allowance, action: GuardedAction, e: PlanEntry): boolean {
  if (a.action !== action || a.type !== e.type) return false;
  if (a.target === undefined) return true;
  // A logical ID, or consecutive whole segments of the construct path (`VendorNotifications`, `Fleet/Sellers`).
  const segments = a.target.replace(/^\/+|\/+$/g, '');
  return a.target === e.logicalId || (e.constructPath !== undefined && `/${e.constructPath}/`.includes(`/${segments}/`));
}

/** The plan of the upgrade from the kept assembly `keptDir` to the current assembly `currentDir`. */
export async function planUpgrade(keptDir: string, currentDir: string): Promise<PlanEntry[]> {
  return collectPlan({ app: currentDir, from: keptDir, state: '' }, planResource);
}

/** The guarded actions of a plan, each with the allowance that names it (if any). */
export function findings(entries: readonly PlanEntry[], allowances: readonly Allowance[]): Finding[] {
  const out: Finding[] = [];
  for (const entry of entries) {
    const action = guardedAction(entry);
    if (action === undefined) continue;
    const allowedBy = allowances.find((a) => allows(a, action, entry));
    out.push({ action, entry, ...(allowedBy ? { allowedBy } : {}) });
  }
  return out;
}

/** A refused finding in one line: the action, the type, the resource and why (the plan's changes and effects). */
export function describe(f: Finding): string {
  const e = f.entry;
  const changes = e.changes.filter((c) => c.effect !== 'update').map((c) => `${c.prop}: ${JSON.stringify(c.from)} -> ${JSON.stringify(c.to)}`);
  return `${f.action} ${e.type} ${e.constructPath ?? `${e.stack}/${e.logicalId}`}`
    + `${changes.length > 0 ? ` (${changes.join('; ')})` : ''}${e.failure !== undefined ? `: ${e.failure}` : ''}`
    + ` — not named by CHANGELOG.md: add \`upgrade: ${f.action} ${e.type}\` to a Breaking changes item of Unreleased`;
}
