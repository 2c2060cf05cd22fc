/**
 * The upgrade allowances of CHANGELOG.md (its header documents the format): a list item of a version's section may
 * name, in backticks, an action the upgrade to that version takes on deployed service records:
 *
 *     - `upgrade: replace Custom::DpiSubscription` the subscription's ... (why, and what users do)
 *     - `upgrade: rebuild Custom::DpiNotificationPipeline Fleet/Sellers` ... (only resources under that construct path)
 *
 * `<action>` is `rebuild`, `replace`, `delete` or `failure` (the handler refuses the change: the deploy fails);
 * `<type>` a `Custom::Dpi*` type; the optional `<target>` a logical ID or consecutive whole segments of a construct
 * path (`VendorNotifications`, `Fleet/Sellers`; default: every resource of the type). The upgrade test from a kept release accepts what the sections of later versions and
 * `Unreleased` allow.
 */
import { compareVersions } from './apps';

/** The actions of deployed records the upgrade test refuses unless the CHANGELOG allows them. */
export const GUARDED_ACTIONS = ['rebuild', 'replace', 'delete', 'failure'] as const;
export type GuardedAction = typeof GUARDED_ACTIONS[number];

/** One allowance: `upgrade: <action> <type> [<target>]` in the section of `version` (`Unreleased`: undefined). */
export interface Allowance {
  readonly version?: string;
  readonly action: GuardedAction;
  readonly type: string;
  readonly target?: string;
  /** The CHANGELOG line, for messages. */
  readonly line: number;
}

const HEADING = /^##\s+\[?(Unreleased|v?\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?)\]?/i;
const MARKER = /`upgrade:\s*([a-z]+)\s+(\S+)(?:\s+([^`\s]+))?\s*`/g;

/**
 * The allowances of a CHANGELOG's text: markers in list items of a version's (or Unreleased's) section, outside fenced
 * examples. A marker with an unknown action or type is an error naming its line.
 */
export function parseAllowances(text: string): Allowance[] {
  const out: Allowance[] = [];
  let version: string | undefined | null = null; // null: before the first version heading (the format's description)
  let fenced = false; // inside a ``` block (an example of the format)
  text.split('\n').forEach((raw, i) => {
    if (/^\s*```/.test(raw)) fenced = !fenced;
    if (fenced) return;
    const heading = HEADING.exec(raw);
    if (heading) {
      version = /^unreleased$/i.test(heading[1]) ? undefined : heading[1].replace(/^v/, '');
      return;
    }
    if (version === null || !/^\s*[-*]\s/.test(raw)) return;
    for (const m of raw.matchAll(MARKER)) {
      const [, action, type, target] = m;
      if (!(GUARDED_ACTIONS as readonly string[]).includes(action)) {
        throw new Error(`CHANGELOG.md line ${i + 1}: 'upgrade: ${action}' is not one of ${GUARDED_ACTIONS.join(', ')}`);
      }
      if (!/^Custom::Dpi[A-Za-z]+$/.test(type)) throw new Error(`CHANGELOG.md line ${i + 1}: '${type}' is not a Custom::Dpi* resource type`);
      out.push({ ...(version !== undefined ? { version } : {}), action: action as GuardedAction, type, ...(target ? { target } : {}), line: i + 1 });
    }
  });
  return out;
}

/** The allowances that apply to an upgrade from `kept`: those of later versions and of `Unreleased`. */
export function allowancesSince(all: readonly Allowance[], kept: string): Allowance[] {
  return all.filter((a) => a.version === undefined || compareVersions(a.version, kept) > 0);
}
