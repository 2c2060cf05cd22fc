/**
 * What `dpi plan` learns from the service's live records (against CloudFormation or `--local`): the account's
 * subscriptions and remote identities, each read with one listing (`GET /v2/sub`, `GET /sri`, every page; about
 * 2 + records/100 requests in all, whatever the app's size). From them:
 *
 * - each deployed record whose live state differs from its deployed declaration: a subscription paused, cancelled or
 *   invalidated in the web UI, one renamed there, one the listing no longer shows, and what this deploy does about
 *   it (re-activates it, makes a new one, leaves it so);
 * - each declared remote identity the service does not know (the deploy would fail on it) or marks invalid
 *   (`invalid_identity`, `invalidated_at`: vendor docs, remote-identity-api.md).
 *
 * The interface specification shows only a record's `id` and `status`: names and an identity's `invalid_identity`
 * are the vendor's read fields. Without them (the emulator's `--reads minimal`) renames and invalidated identities
 * are not checked, and the plan says so once.
 */
import type { DpiClient, Subscription } from '../../client';
import { stable } from '../../handler/plan-common';
import type { PlanEntry, PlanInput } from '../../handler/plan-types';
import { KINDS, SubscriptionKind } from '../../kinds';

/** What kind of live difference a finding is. */
export type LiveKind = 'status' | 'renamed' | 'gone' | 'identity-unknown' | 'identity-invalid';

/** One live difference of a planned resource. */
export interface LiveFinding {
  readonly kind: LiveKind;
  /** One sentence: what the service shows and what this deploy does about it. */
  readonly text: string;
  /** This deploy undoes a change made in the service (re-activates, renames back, makes anew). */
  readonly undoes: boolean;
  /** Shown with the risky actions (an unknown or invalid identity). */
  readonly risk: boolean;
  /** The deploy fails on it (an unknown identity): `--fail-on failure` trips on it. */
  readonly fails?: boolean;
}

/** A plan entry with its live differences. */
export type ReviewedEntry = PlanEntry & { readonly live?: readonly LiveFinding[] };

/** Whether and how the live state was read, for the output. */
export interface LiveSummary {
  readonly read: boolean;
  /** Why it was not read (offline, no service address, a failed read). */
  readonly reason?: string;
  /** Said once, e.g. what minimal reads leave unchecked. */
  readonly notes: readonly string[];
  /** Records listed, and the requests the listings took (authentication excluded). */
  readonly subscriptions?: number;
  readonly identities?: number;
  readonly requests?: number;
}

interface LiveSubscription { readonly status: string; readonly name?: string | null }
interface LiveIdentity { readonly invalid?: boolean; readonly invalidatedAt?: string }

/** The account's live records. */
export interface LiveRecords {
  readonly subscriptions: ReadonlyMap<string, LiveSubscription>;
  /** The listed subscriptions as the listing shows them (what an adoption's plan compares). */
  readonly listed: ReadonlyMap<string, Subscription>;
  readonly identities: ReadonlyMap<string, LiveIdentity>;
  /** The listings showed the vendor's read fields (subscription `name`, identity `invalid_identity`). */
  readonly names: boolean;
  readonly invalidity: boolean;
  readonly requests: number;
}

/**
 * Resource types whose physical ID is a subscription of the service (the journal claims it as `sub`: a subscription,
 * and a pipeline, whose record is a product-107 or product-86 subscription).
 */
const SUBSCRIPTION_RECORDS: ReadonlySet<string> = new Set(KINDS.filter((k) => k.claim === 'sub').map((k) => k.type));

/** Records per listing page the client asks for (its `LIST_PAGE_SIZE`), to count requests. */
const PAGE = 100;

const truthy = (v: unknown): boolean => v === true || v === 1 || v === '1' || v === 'true';

/** Reads the account's subscriptions and remote identities: one listing each. */
export async function readLive(client: DpiClient): Promise<LiveRecords> {
  const [subs, ids] = await Promise.all([client.subscriptions.list(), client.remoteIdentities.list()]);
  const subscriptions = new Map<string, LiveSubscription>();
  for (const s of subs) subscriptions.set(String(s.id), { status: String(s.status ?? ''), ...('name' in s ? { name: s.name ?? null } : {}) });
  const identities = new Map<string, LiveIdentity>();
  for (const r of ids as Array<{ id: string } & Record<string, unknown>>) {
    const at = r.invalidated_at;
    identities.set(String(r.id), {
      ...('invalid_identity' in r ? { invalid: truthy(r.invalid_identity) } : {}),
      ...(typeof at === 'string' && at !== '' ? { invalidatedAt: at } : {}),
    });
  }
  return {
    subscriptions,
    listed: new Map(subs.map((s) => [String(s.id), s])),
    identities,
    names: subs.some((s) => 'name' in s),
    invalidity: [...identities.values()].some((i) => i.invalid !== undefined),
    requests: Math.max(1, Math.ceil(subs.length / PAGE)) + Math.max(1, Math.ceil(ids.length / PAGE)),
  };
}

/** The live status the handler's decisions take for a resource (subscriptions only; `gone` when not listed). */
export function liveStatusOf(live: LiveRecords, input: PlanInput): string | undefined {
  if (input.type !== SubscriptionKind.type || input.physicalId === undefined || input.oldProps === undefined) return undefined;
  if (!/^\d+$/.test(input.physicalId)) return undefined;
  return live.subscriptions.get(input.physicalId)?.status ?? 'gone';
}

/** The note said once when the listings lack the vendor's read fields. */
export function minimalNote(live: LiveRecords): string | undefined {
  const unchecked = [
    ...(live.names ? [] : ['renames (a subscription\'s name)']),
    ...(live.invalidity ? [] : ['invalidated identities (invalid_identity, invalidated_at)']),
  ];
  if (unchecked.length === 0) return undefined;
  return 'live differences need the vendor\'s read fields: the service showed only IDs and statuses (as the interface specification '
    + `shows them), so ${unchecked.join(' and ')} were not checked; statuses, records no longer listed and unknown identities were`;
}

const quote = (v: unknown): string => (v === undefined || v === null || v === '' ? '(none)' : JSON.stringify(String(v)));

/** Whether CloudFormation sends the handler an Update: the properties differ. */
function updated(input: PlanInput): boolean {
  return input.oldProps !== undefined && input.newProps !== undefined && stable(input.oldProps) !== stable(input.newProps);
}

/** The status and name differences of a deployed record (see the module comment). */
function recordFindings(e: PlanEntry, input: PlanInput, live: LiveRecords): LiveFinding[] {
  const id = e.physicalId;
  if (!SUBSCRIPTION_RECORDS.has(e.type) || id === undefined || !/^\d+$/.test(id) || input.oldProps === undefined) return [];
  const isSub = e.type === SubscriptionKind.type;
  const what = isSub ? `subscription ${id}` : `the pipeline's subscription ${id}`;
  const leaving = input.newProps === undefined;
  const sent = updated(input);
  const rec = live.subscriptions.get(id);
  if (!rec) {
    const then = leaving ? 'nothing is left to end' : sent ? `this deploy makes a new ${isSub ? 'subscription' : 'pipeline'} in its place`
      : 'this deploy sends nothing for it: the stack keeps naming a record that is gone (dpi drift shows it)';
    return [{ kind: 'gone', text: `${what} is not in the account's subscription listing (gone, or another account's); ${then}`, undoes: sent && !leaving, risk: false }];
  }
  const out: LiveFinding[] = [];
  const deployed = isSub && typeof input.oldProps.Status === 'string' ? input.oldProps.Status : 'active';
  if (rec.status !== deployed) {
    const declared = isSub && typeof input.newProps?.Status === 'string' ? input.newProps.Status : 'active';
    let then: string;
    let undoes = false;
    if (leaving || e.action === 'delete' || e.action === 'retain') {
      then = e.action === 'delete' ? 'this deploy ends it' : 'it leaves the stack as it is';
    } else if (!sent) {
      then = `this deploy sends no Update for it (its properties are unchanged), so it stays ${rec.status}`;
    } else if (rec.status === 'invalid') {
      then = `this deploy makes a new ${isSub ? 'subscription' : 'pipeline'} in its place`;
      undoes = true;
    } else if (!isSub) {
      then = 'this deploy does not change a pipeline\'s status';
    } else if (rec.status === 'cancelled') {
      then = 'the handler refuses to make it active again: the deploy fails';
    } else if (e.action === 'replace') {
      then = 'this deploy replaces it';
    } else if (declared !== rec.status) {
      then = `this deploy ${declared === 'active' ? 're-activates it' : `sets it ${declared}`} (status ${declared})`;
      undoes = true;
    } else {
      then = `the declaration now says ${declared} too: it stays so`;
    }
    out.push({ kind: 'status', text: `${what} is ${rec.status} in the service (deployed declaration: ${deployed}); ${then}`, undoes, risk: false });
  }
  const deployedName = input.oldProps.Name;
  if (isSub && live.names && 'name' in rec && typeof deployedName === 'string' && (rec.name ?? '') !== deployedName) {
    const declaredName = input.newProps?.Name;
    const setsName = sent && !leaving && e.action !== 'replace' && declaredName !== deployedName && typeof declaredName === 'string';
    const then = leaving ? 'it leaves the stack so' : setsName ? `this deploy sets the name ${quote(declaredName)}`
      : 'this deploy does not send the name, so the service\'s name stays (dpi drift --fix restores the deployed one)';
    out.push({
      kind: 'renamed',
      text: `${what} is named ${quote(rec.name)} in the service (deployed declaration: ${quote(deployedName)}); ${then}`,
      undoes: setsName && declaredName !== rec.name,
      risk: false,
    });
  }
  return out;
}

/** The declared remote identity of a resource, when it is a literal ID. */
function declaredIdentity(input: PlanInput): string | undefined {
  const v = input.newProps?.RemoteIdentityId;
  const s = typeof v === 'number' ? String(v) : v;
  return typeof s === 'string' && /^\d+$/.test(s) ? s : undefined;
}

/** The identity flags of a declared resource. */
function identityFindings(input: PlanInput, live: LiveRecords): LiveFinding[] {
  const ri = declaredIdentity(input);
  if (ri === undefined) return [];
  const known = live.identities.get(ri);
  if (!known) {
    return [{
      kind: 'identity-unknown',
      text: `remote identity ${ri} is not among the account's identities (GET /sri): the service does not know it, so the deploy fails on `
        + 'this resource (authorize the identity in the web UI, or correct remoteIdentityId)',
      undoes: false,
      risk: true,
      fails: true,
    }];
  }
  if (known.invalid) {
    return [{
      kind: 'identity-invalid',
      text: `remote identity ${ri} is marked invalid by the service (invalid_identity${known.invalidatedAt ? `, invalidated at ${known.invalidatedAt}` : ''}): `
        + 'its authorization was revoked or has expired and no data is collected with it; re-authorize it in the web UI',
      undoes: false,
      risk: true,
    }];
  }
  return [];
}

/** The entries with their live differences (`inputs`: the planner's input of each entry, by `<stack>\0<logical ID>`). */
export function withLiveFindings(entries: readonly PlanEntry[], inputs: ReadonlyMap<string, PlanInput>, live: LiveRecords): ReviewedEntry[] {
  return entries.map((e) => {
    const input = inputs.get(`${e.stack}\0${e.logicalId}`);
    if (!input) return e;
    const found = [...identityFindings(input, live), ...recordFindings(e, input, live)];
    return found.length > 0 ? { ...e, live: found } : e;
  });
}
