/**
 * How `dpi plan` prints: per stack, one block per resource (action, construct path, property changes, the service
 * calls, the effects on live records), then a summary line with the count of each action; `--json` one entry per
 * resource and the summary.
 */
import { PLAN_ACTIONS, PlanAction, PlanEntry } from '../../handler/plan-types';
import { Colour, Painter, sanitize, truncate } from '../format';
import type { LiveSummary, ReviewedEntry } from './plan-live';

/**
 * How each action reads in the plan: its one name, the same in the table, the summary, markdown, `--json` and
 * `--fail-on` (`update` is an update in place: the record stays; `rebuild` keeps the record and recreates its delivery).
 */
export const ACTION_LABEL: Record<PlanAction, string> = {
  'create': 'create',
  'update': 'update',
  'rebuild': 'rebuild',
  'replace': 'replace',
  'delete': 'delete',
  'retain': 'retain',
  'no-change': 'no-change',
};

const ACTION_COLOUR: Record<PlanAction, Colour | undefined> = {
  'create': 'green',
  'update': 'yellow',
  'rebuild': 'magenta',
  'replace': 'red',
  'delete': 'red',
  'retain': 'cyan',
  'no-change': 'dim',
};

/** Counts per action (every action present, zero included). */
export type PlanSummary = Record<PlanAction, number>;

export function summarise(entries: readonly PlanEntry[]): PlanSummary {
  const out = Object.fromEntries(PLAN_ACTIONS.map((a) => [a, 0])) as PlanSummary;
  for (const e of entries) out[e.action]++;
  return out;
}

/** The summary line, e.g. `Plan: 1 create, 2 update, 0 rebuild, 1 replace, 0 delete, 0 retain, 5 no-change`. */
export function summaryLine(s: PlanSummary, failures: number, possible = 0): string {
  const counts = PLAN_ACTIONS.map((a) => `${s[a]} ${ACTION_LABEL[a]}`).join(', ');
  return `Plan: ${counts}${failures > 0 ? `; ${failures} refused by the handler (the deploy would fail)` : ''}`
    + `${possible > 0 ? `; ${possible} with a worse possible action (a value decided at deploy time)` : ''}`;
}

/** A value that depends on a resource the same deploy makes (a deploy-time placeholder), as `{<resource>.<attribute>}`. */
const DEPLOY_TIME_VALUE = /%3C%3Cdeploy-time%3A(.*?)%3E%3E|<<deploy-time:(.*?)>>/g;

/** `text` with each deploy-time placeholder as `{<resource>.<attribute> after the deploy}`. */
export function known(text: string): string {
  return text.replace(DEPLOY_TIME_VALUE, (_m, encoded: string | undefined, plain: string | undefined) => {
    let ref = plain ?? encoded ?? '';
    try {
      ref = decodeURIComponent(ref);
    } catch {
      // left encoded
    }
    return `{${ref} after the deploy}`;
  });
}

function value(v: unknown): string {
  if (v === undefined) return '(unset)';
  return truncate(sanitize(known(typeof v === 'string' ? v : JSON.stringify(v))), 80);
}

/** The live-state line of the text plan: what was read, or why not; and the notes. */
export function liveLines(live: LiveSummary | undefined, entries: readonly ReviewedEntry[]): string {
  if (!live) return '';
  if (!live.read) return `Live state: not read (${sanitize(live.reason ?? 'not asked')}); each record is assumed live and as last deployed\n`;
  const differing = entries.filter((e) => (e.live ?? []).length > 0).length;
  const n = (count: number | undefined, one: string, many: string): string => `${count ?? 0} ${count === 1 ? one : many}`;
  let out = `Live state: ${n(live.subscriptions, 'subscription', 'subscriptions')} and ${n(live.identities, 'remote identity', 'remote identities')} listed`
    + `${live.requests !== undefined ? ` (${n(live.requests, 'listing request', 'listing requests')})` : ''}; `
    + `${differing === 0 ? 'no live differences' : `${differing} resource${differing === 1 ? '' : 's'} with live differences`}\n`;
  for (const note of live.notes) out += `Note: ${sanitize(note)}\n`;
  return out;
}

/** Renders the entries (no `no change` rows unless `all`) grouped by stack, and the summary line. */
export function renderPlan(entries: readonly ReviewedEntry[], o: { all: boolean; paint: Painter; live?: LiveSummary }): string {
  const { paint } = o;
  const shown = entries.filter((e) => o.all || e.action !== 'no-change' || e.failure !== undefined || e.possibleAction !== undefined
    || (e.live ?? []).length > 0);
  const width = Math.max(...PLAN_ACTIONS.map((a) => ACTION_LABEL[a].length));
  let text = '';
  let stack: string | undefined;
  for (const e of shown) {
    if (e.stack !== stack) {
      stack = e.stack;
      text += `${text ? '\n' : ''}${paint('bold', sanitize(stack))}\n`;
    }
    const label = ACTION_LABEL[e.action];
    const name = sanitize(e.constructPath ?? `${e.stack}/${e.logicalId}`);
    const id = e.physicalId !== undefined ? ` ${sanitize(e.physicalId)}` : '';
    const possible = e.possibleAction !== undefined ? `  ${paint(ACTION_COLOUR[e.possibleAction], `[possibly ${ACTION_LABEL[e.possibleAction]}]`)}` : '';
    text += `  ${paint(ACTION_COLOUR[e.action], label.padEnd(width))}  ${name}  (${e.type.replace(/^Custom::Dpi/, '')}${id})${possible}\n`;
    for (const c of e.changes) {
      text += `      ~ ${c.prop}: ${value(c.from)} -> ${value(c.to)}${c.effect !== 'update' ? `  [${ACTION_LABEL[c.effect]}]` : ''}\n`;
    }
    for (const c of e.calls) {
      const why = c.when !== undefined ? `${c.purpose} (${c.when})` : c.purpose;
      text += `      ${c.method} ${sanitize(known(c.path))}  ${paint('dim', sanitize(known(why)))}\n`;
    }
    for (const x of e.effects) text += `      ! ${sanitize(known(x))}\n`;
    if (e.failure !== undefined) text += `      ${paint('red', `x the handler refuses this change: ${sanitize(e.failure)}`)}\n`;
    for (const f of e.live ?? []) text += `      ${paint(f.risk ? 'red' : 'yellow', `live: ${sanitize(f.text)}`)}\n`;
  }
  if (shown.length === 0) text += entries.length === 0 ? 'No Custom::Dpi* resources in the app or the deployed stacks.\n' : 'No changes.\n';
  const failures = entries.filter((e) => e.failure !== undefined).length;
  return `${text}\n${summaryLine(summarise(entries), failures, entries.filter((e) => e.possibleAction !== undefined).length)}\n${liveLines(o.live, entries)}`;
}

/** The document of `dpi plan --json`: every resource (`no change` included) and the summary. */
export function planJson(entries: readonly ReviewedEntry[], failOn: readonly string[], failed: boolean, live?: LiveSummary): object {
  const flagged = new Map<string, { id: string; flag: string; resources: string[] }>();
  for (const e of entries) {
    for (const f of e.live ?? []) {
      if (f.kind !== 'identity-unknown' && f.kind !== 'identity-invalid') continue;
      const id = /remote identity (\d+)/.exec(f.text)?.[1] ?? '';
      const key = `${f.kind}\0${id}`;
      const at = flagged.get(key) ?? { id, flag: f.kind === 'identity-unknown' ? 'unknown' : 'invalid', resources: [] };
      at.resources.push(e.constructPath ?? `${e.stack}/${e.logicalId}`);
      flagged.set(key, at);
    }
  }
  return {
    entries,
    summary: summarise(entries),
    failures: entries.filter((e) => e.failure !== undefined).length,
    possible: entries.filter((e) => e.possibleAction !== undefined).length,
    ...(live ? { live: { ...live, differences: entries.filter((e) => (e.live ?? []).length > 0).length }, identities: [...flagged.values()] } : {}),
    ...(failOn.length > 0 ? { failOn, gateFailed: failed } : {}),
  };
}
