/**
 * `dpi plan --format markdown`: the plan for review in a pull request comment. A title with the counts, the table of
 * counts per action, whether the live state was read, then one folded `<details>` block per resource, the risky
 * first: (1) what ends, replaces or rebuilds a record, fails, or declares an unknown or invalid identity; (2) what undoes
 * a change made in the service (a paused subscription re-activated); (3) updates; (4) creates; (5) no change (one
 * folded list). Within a group the deploy's order. Every value from a template or the service is escaped for GitHub
 * markdown (HTML entities for `|`, backticks, `<`, `>`, `&`, `*`, `_`, `[`, `]`, `\`, `~`, `@`; newlines become spaces), so
 * nothing in it can break the table, open a tag or mention someone.
 */
import { PLAN_ACTIONS, PlanAction } from '../../handler/plan-types';
import { truncate } from '../format';
import { LiveFinding, LiveSummary, ReviewedEntry } from './plan-live';
import { ACTION_LABEL, known, summarise } from './plan-render';

/** The groups of a review, in the order they are shown. */
export type ReviewGroup = 'risk' | 'undo' | 'update' | 'create' | 'no-change';

const RISKY_ACTIONS: readonly PlanAction[] = ['delete', 'replace', 'rebuild'];

const GROUP_TITLE: Record<ReviewGroup, string> = {
  'risk': 'Ends, replaces or rebuilds records, fails, or names an unknown or invalid identity',
  'undo': 'Undoes a change made in the service',
  'update': 'Updates in place, retains',
  'create': 'Creates',
  'no-change': 'No change',
};

/** Markdown budget of one plan: a GitHub comment holds 65,536 characters. */
const MAX_CHARS = 60_000;
/** No-change resources listed by name at most. */
const MAX_UNCHANGED_LISTED = 500;

/** Which group an entry is shown in. */
export function groupOf(e: ReviewedEntry): ReviewGroup {
  if (RISKY_ACTIONS.includes(e.action) || e.failure !== undefined || (e.possibleAction !== undefined && RISKY_ACTIONS.includes(e.possibleAction))
    || (e.live ?? []).some((f) => f.risk)) return 'risk';
  if ((e.live ?? []).some((f) => f.undoes)) return 'undo';
  if (e.action === 'update' || e.action === 'retain' || e.possibleAction !== undefined) return 'update';
  if (e.action === 'create') return 'create';
  return 'no-change';
}

/** The order within the risky group: what fails first (a refusal, an unknown identity), then delete, replace, rebuild. */
function riskRank(e: ReviewedEntry): number {
  if (e.failure !== undefined || (e.live ?? []).some((f) => f.fails)) return 0;
  const i = RISKY_ACTIONS.indexOf(e.action);
  if (i >= 0) return 1 + i;
  return 4;
}

const GROUPS: readonly ReviewGroup[] = ['risk', 'undo', 'update', 'create', 'no-change'];

/** The entries in review order (see the module comment); deterministic: a stable sort of the deploy's order. */
export function reviewOrder(entries: readonly ReviewedEntry[]): ReviewedEntry[] {
  const keyed = entries.map((e, i) => ({ e, i, g: GROUPS.indexOf(groupOf(e)), r: groupOf(e) === 'risk' ? riskRank(e) : 0 }));
  keyed.sort((a, b) => a.g - b.g || a.r - b.r || a.i - b.i);
  return keyed.map((k) => k.e);
}

/** The characters GitHub markdown could read as syntax, and their HTML entities. */
const ENTITIES: ReadonlyMap<string, string> = new Map([
  ['&', '&amp;'], ['<', '&lt;'], ['>', '&gt;'], ['|', '&#124;'], ['`', '&#96;'], ['*', '&#42;'], ['_', '&#95;'], ['[', '&#91;'],
  [']', '&#93;'], ['\\', '&#92;'], ['~', '&#126;'], ['@', '&#64;'], ['#', '&#35;'], ['!', '&#33;'],
]);

/** Text from a template or the service, safe anywhere in GitHub markdown (a table cell, a summary, a list item). */
export function md(text: string): string {
  // Control characters (an escape sequence) are dropped; line breaks become spaces.
  // eslint-disable-next-line no-control-regex
  return text.replace(/[\r\n\t]+/g, ' ').replace(/[\u0000-\u001f\u007f]/g, '').replace(/[&<>|`*_[\]\\~@#!]/g, (c) => ENTITIES.get(c) ?? c);
}

const code = (text: string): string => `<code>${md(text)}</code>`;

function value(v: unknown): string {
  if (v === undefined) return '(unset)';
  return code(truncate(known(typeof v === 'string' ? v : JSON.stringify(v)), 200));
}

const plural = (n: number, one: string, many = `${one}s`): string => `${n} ${n === 1 ? one : many}`;

/** A live finding in a few words, for a block's summary line. */
function short(f: LiveFinding): string {
  const ri = /^remote identity (\d+)/.exec(f.text)?.[1];
  if (f.kind === 'identity-unknown') return `remote identity ${ri} is unknown to the service`;
  if (f.kind === 'identity-invalid') return `remote identity ${ri} is marked invalid`;
  return f.text.split(';').slice(-1)[0].trim();
}

function name(e: ReviewedEntry): string {
  return e.constructPath ?? `${e.stack}/${e.logicalId}`;
}

function head(e: ReviewedEntry): string {
  const id = e.physicalId !== undefined ? ` ${e.physicalId}` : '';
  return `${code(name(e))} (${md(e.type.replace(/^Custom::Dpi/, ''))}${md(id)})`;
}

/** One resource: its summary line (action, name, type and ID, what is worst about it) and the folded details. */
function block(e: ReviewedEntry): string {
  const notes = [
    ...(e.possibleAction !== undefined ? [`possibly ${ACTION_LABEL[e.possibleAction]}`] : []),
    ...(e.failure !== undefined ? ['the handler refuses this change'] : []),
    ...(e.live ?? []).filter((f) => f.risk || f.undoes).map(short),
  ];
  const summary = `<b>${md(ACTION_LABEL[e.action])}</b> ${head(e)}${notes.length > 0 ? ` — ${notes.map(md).join('; ')}` : ''}`;
  const lines: string[] = [];
  for (const c of e.changes) {
    lines.push(`- ${code(c.prop)}: ${value(c.from)} → ${value(c.to)}${c.effect !== 'update' ? ` (${md(ACTION_LABEL[c.effect])})` : ''}`);
  }
  for (const c of e.calls) {
    const why = c.when !== undefined ? `${c.purpose} (${c.when})` : c.purpose;
    lines.push(`- ${code(`${c.method} ${known(c.path)}`)} ${md(known(why))}`);
  }
  for (const x of e.effects) lines.push(`- ${md(known(x))}`);
  if (e.failure !== undefined) lines.push(`- **the handler refuses this change:** ${md(e.failure)}`);
  for (const f of e.live ?? []) lines.push(`- **live:** ${md(f.text)}`);
  if (lines.length === 0) lines.push('- nothing is sent');
  return `<details><summary>${summary}</summary>\n\n${lines.join('\n')}\n\n</details>\n`;
}

/** The live state paragraph. */
function liveParagraph(live: LiveSummary | undefined, differences: number): string {
  if (!live) return '';
  if (!live.read) return `**Live state:** not read (${md(live.reason ?? 'not asked')}); the plan assumes each record is live and as last deployed.\n\n`;
  const counts = `${plural(live.subscriptions ?? 0, 'subscription')} and ${plural(live.identities ?? 0, 'remote identity', 'remote identities')} listed`
    + `${live.requests !== undefined ? ` in ${plural(live.requests, 'listing request')}` : ''}`;
  let out = `**Live state:** read (${counts}); ${differences === 0 ? 'no live differences' : plural(differences, 'resource') + ' with live differences'}.\n\n`;
  for (const n of live.notes) out += `> ${md(n)}\n\n`;
  return out;
}

/** The markdown plan (see the module comment). */
export function renderPlanMarkdown(entries: readonly ReviewedEntry[], o: { live?: LiveSummary; title?: string } = {}): string {
  const s = summarise(entries);
  const shownCounts = PLAN_ACTIONS.filter((a) => s[a] > 0).map((a) => `${s[a]} ${ACTION_LABEL[a]}`);
  let out = `## ${md(o.title ?? 'dpi plan')}: ${shownCounts.length > 0 ? shownCounts.join(', ') : 'no Custom::Dpi* resources'}\n\n`;
  out += '| Action | Resources |\n|---|---:|\n';
  for (const a of PLAN_ACTIONS) out += `| ${ACTION_LABEL[a]} | ${s[a]} |\n`;
  const failures = entries.filter((e) => e.failure !== undefined).length;
  const possible = entries.filter((e) => e.possibleAction !== undefined).length;
  const extra = [
    ...(failures > 0 ? [`**${plural(failures, 'change')} refused by the handler** (the deploy would fail)`] : []),
    ...(possible > 0 ? [`${plural(possible, 'resource')} with a worse possible action (a value decided at deploy time)`] : []),
  ];
  out += `\n${extra.length > 0 ? `${extra.join('; ')}.\n\n` : ''}`;
  out += liveParagraph(o.live, entries.filter((e) => (e.live ?? []).length > 0).length);
  const ordered = reviewOrder(entries);
  let left = 0;
  for (const g of GROUPS) {
    const members = ordered.filter((e) => groupOf(e) === g);
    if (members.length === 0) continue;
    out += `### ${GROUP_TITLE[g]} (${members.length})\n\n`;
    if (g === 'no-change') {
      // What the service shows differently but this deploy leaves so (a paused subscription it sends nothing to): a block each.
      for (const e of members.filter((x) => (x.live ?? []).length > 0)) out += `${block(e)}\n`;
      const listed = members.filter((x) => (x.live ?? []).length === 0).slice(0, MAX_UNCHANGED_LISTED).map((e) => `- ${head(e)}`);
      const quiet = members.filter((x) => (x.live ?? []).length === 0).length;
      const more = quiet - listed.length;
      if (quiet > 0) {
        out += `<details><summary>${plural(quiet, 'resource')} with no change${quiet < members.length ? ' and no live difference' : ''}</summary>\n\n`
          + `${listed.join('\n')}\n${more > 0 ? `- … and ${more} more\n` : ''}\n</details>\n\n`;
      }
      continue;
    }
    for (const e of members) {
      const b = block(e);
      if (out.length + b.length > MAX_CHARS) {
        left++;
        continue;
      }
      out += `${b}\n`;
    }
  }
  if (left > 0) out += `${plural(left, 'more resource')} not shown here (a pull request comment holds 65,536 characters): see \`dpi plan --json\`.\n`;
  return out;
}
