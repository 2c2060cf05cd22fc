/**
 * The parts every per-kind planner shares: the planner shape, property comparison as CloudFormation delivers
 * properties (every scalar a string), the removal decision and the paths of the changing calls as the handler's
 * client sends them.
 */
import { declaredRemovalPolicy, recordedRemovalPolicy, removalPolicyOf, RemovalPolicyValue } from './common';
import { PlanAction, PlanInput, PlannedCall, PropertyChange } from './plan-types';

/** What a planner returns; plan.ts adds the resource's identity. */
export interface PlanParts {
  readonly action: PlanAction;
  readonly calls: readonly PlannedCall[];
  readonly effects: readonly string[];
  readonly failure?: string;
}

/** The planner of one resource type. Each may throw a handler error for properties the handler would refuse. */
export interface Planner {
  /** The wire properties of the kind and the construct props that set them (the plan's `changes` name these). */
  readonly props: readonly PropSpec[];
  create(props: Record<string, unknown>, input: PlanInput): PlanParts;
  update(oldProps: Record<string, unknown>, newProps: Record<string, unknown>, input: PlanInput): PlanParts;
  remove(oldProps: Record<string, unknown>, input: PlanInput): PlanParts;
}

/** The placeholder of an ID the service assigns during the deploy. */
export const NEW_ID = '{new}';

/** Paths of the changing calls, exactly as the client sends them (relative to the service address). */
export const paths = {
  subscriptions: '/v2/sub',
  subscription: (id: string): string => `/v2/sub/${enc(id)}`,
  unifiedCreate: (ri: string): string => `/service/sp/notifications-unified/${enc(ri)}`,
  unified: (ri: string, sub: string): string => `/service/sp/notifications-unified/${enc(ri)}/${enc(sub)}`,
  legacy: (ri: string, sub: string): string => `/service/sp/notifications/${enc(ri)}/${enc(sub)}`,
  historyCreate: (sub: string): string => `/service/history/production/history/${enc(sub)}`,
  history: (id: string): string => `/service/history/production/history/${enc(id)}`,
  jobs: (primary: string): string => `/service/jobs/jobs/${enc(primary)}`,
};

/** A path segment as the client encodes it; placeholders (`{new}`, `{primary}`) stay readable. */
function enc(v: string): string {
  return /^\{[a-z]+\}$/.test(v) ? v : encodeURIComponent(v);
}

export function call(method: PlannedCall['method'], path: string, purpose: string, when?: string): PlannedCall {
  return { method, path, purpose, ...(when !== undefined ? { when } : {}) };
}

/**
 * Properties as CloudFormation delivers them to the handler: numbers and booleans become strings; an unresolved
 * intrinsic (`{ Ref }`, `{ Fn::GetAtt }`, ...) becomes a stable text standing for its value, so two templates with
 * the same intrinsic compare equal.
 */
export function asDelivered(v: unknown): unknown {
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  if (Array.isArray(v)) return v.map(asDelivered);
  if (v !== null && typeof v === 'object') {
    const keys = Object.keys(v);
    if (keys.length === 1 && (keys[0] === 'Ref' || keys[0].startsWith('Fn::'))) return `\${${keys[0]} ${JSON.stringify(v)}}`;
    return Object.fromEntries(keys.map((k) => [k, asDelivered((v as Record<string, unknown>)[k])]));
  }
  return v;
}

/** Stable text of a value (object keys sorted). */
export function stable(v: unknown): string {
  const norm = (x: unknown): unknown => {
    if (Array.isArray(x)) return x.map(norm);
    if (x !== null && typeof x === 'object') {
      return Object.fromEntries(Object.keys(x).sort().map((k) => [k, norm((x as Record<string, unknown>)[k])]));
    }
    return x;
  };
  return JSON.stringify(norm(v) ?? null);
}

/** One row of a kind's property table: the wire property, the construct prop, and how to compare values. */
export interface PropSpec {
  readonly wire: string;
  readonly prop: string;
  /** Compare lists as sets (order and duplicates do not matter to the handler). */
  readonly asSet?: boolean;
}

/** The wire properties whose declared value differs, as `[spec, from, to]`. Empty strings count as absent. */
export function changedProps(specs: readonly PropSpec[], oldProps: Record<string, unknown>, newProps: Record<string, unknown>):
Array<[PropSpec, unknown, unknown]> {
  const val = (p: Record<string, unknown>, s: PropSpec): unknown => {
    const v = p[s.wire];
    if (v === '' || v === null) return undefined;
    if (s.asSet && Array.isArray(v)) return [...new Set(v.map(String))].sort();
    return v;
  };
  return specs.filter((s) => stable(val(oldProps, s)) !== stable(val(newProps, s))).map((s) => [s, oldProps[s.wire], newProps[s.wire]]);
}

/** A property change as the plan names it. */
export function change(s: PropSpec, from: unknown, to: unknown, effect: PropertyChange['effect']): PropertyChange {
  return { prop: s.prop, ...(from !== undefined ? { from } : {}), ...(to !== undefined ? { to } : {}), effect };
}

/** Wire properties the handler never applies to a record (the connection, the provider's token). */
export const IGNORED = new Set(['ServiceToken', 'Connection']);

/** Changed properties the planner's table does not name (other than the ignored ones). */
export function unknownChanges(specs: readonly PropSpec[], oldProps: Record<string, unknown>, newProps: Record<string, unknown>): string[] {
  const known = new Set(specs.map((s) => s.wire));
  const keys = new Set([...Object.keys(oldProps), ...Object.keys(newProps)]);
  return [...keys].filter((k) => !known.has(k) && !IGNORED.has(k) && stable(oldProps[k]) !== stable(newProps[k]));
}

/** Whether the Connection changed (no service call: the effect sentence says so). */
export function connectionEffect(oldProps: Record<string, unknown>, newProps: Record<string, unknown>): string[] {
  return stable(oldProps.Connection) !== stable(newProps.Connection)
    ? ['the connection changed (endpoints, secret or journal table): nothing is sent for the record; later calls use the new connection']
    : [];
}

/**
 * The removal policy the handler applies when the resource's record leaves the stack (a Delete with the deployed
 * properties): from the journal's facts when given (exactly as the handler), else from what the deployed properties
 * show (adopted = they name an adoption; the recorded policy = the one an Update recorded from them).
 */
export function removalOf(oldProps: Record<string, unknown>, input: PlanInput, alwaysAdopted = false, namesAdoption = true): RemovalPolicyValue {
  if (input.journal !== undefined) {
    // The handler's own inputs: the journal record's facts (none when it holds no live record of it).
    return removalPolicyOf(oldProps, { adopted: alwaysAdopted || input.journal.adopted === true, removalPolicy: input.journal.removalPolicy },
      namesAdoption);
  }
  const adoptId = typeof oldProps.AdoptId === 'string' ? oldProps.AdoptId : undefined;
  const adopted = alwaysAdopted || adoptId !== undefined;
  let declared: RemovalPolicyValue | undefined;
  try {
    declared = declaredRemovalPolicy(oldProps);
  } catch {
    declared = undefined;
  }
  const recorded = recordedRemovalPolicy(declared, adoptId, { adopted, removalPolicy: adopted ? 'retain' : undefined });
  return removalPolicyOf(oldProps, { adopted, removalPolicy: recorded }, namesAdoption);
}

/**
 * The handler's refusal of an in-place Update whose `JournalKey` changed: the record is looked up under the new key,
 * none is there, and the claim of the record is held by the old key (subscription.ts, notification-pipeline.ts).
 */
export function journalKeyRefusal(oldProps: Record<string, unknown>, newProps: Record<string, unknown>, input: PlanInput,
  id: string): string | undefined {
  if (stable(oldProps.JournalKey ?? '') === stable(newProps.JournalKey ?? '')) return undefined;
  const oldKey = typeof oldProps.JournalKey === 'string' && oldProps.JournalKey !== '' ? oldProps.JournalKey : `${input.stack}/${input.logicalId}`;
  return `subscription ${id} is managed by ${oldKey} in the lifecycle journal; nothing was changed`;
}

/**
 * Said with an ending when the lifecycle journal was not read (`input.journal` undefined): the handler decides
 * ownership from the journal, which may record the record as adopted (then it is released, not ended).
 */
export function unlessAdopted(input: PlanInput): string {
  return input.journal === undefined ? ' (this ends the record unless the lifecycle journal records it as adopted; the journal was not read)' : '';
}

/**
 * The removal CloudFormation itself skips: a resource leaving the stack under `DeletionPolicy: Retain`, or the old
 * resource of a replacement under `UpdateReplacePolicy: Retain`, gets no Delete, so the handler is never asked.
 */
export function keptByCloudFormation(input: PlanInput): PlanParts | undefined {
  const replacing = input.newProps !== undefined;
  const policy = replacing ? input.updateReplacePolicy : input.deletionPolicy;
  if (policy !== 'Retain' && policy !== 'RetainExceptOnCreate') return undefined;
  const record = input.physicalId !== undefined ? `record ${input.physicalId}` : 'the record';
  return {
    action: 'retain',
    calls: [],
    effects: [`${replacing ? 'UpdateReplacePolicy' : 'DeletionPolicy'} ${policy}: CloudFormation sends no Delete; ${record} is kept, `
      + 'and no stack manages it any more'],
  };
}

/** The assumption every update plan makes, said once where a live difference would change the calls. */
export const LIVE_ASSUMPTION = 'assumes the record is live and as last deployed (a record that is gone or invalid is made anew)';
