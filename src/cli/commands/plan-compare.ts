/**
 * `dpi plan` over two templates of one stack (the deployed one from CloudFormation or another assembly, and the
 * synthesized one): the `Custom::Dpi*` resources in the deploy's order, each handed to the handler's `planResource`
 * (the CLI never decides an action itself). Both sides stay unresolved (intrinsics compare as written), except that a
 * reference to a resource the deploy makes anew (`create`, `replace`) or whose delivery resources it recreates
 * (`rebuild`) becomes a deploy-time placeholder on the declared side: CloudFormation then sends the dependents an
 * update with the new value, and the plan shows it.
 */
import { DeployTimeSources, ParameterSource } from './plan-deploy-time';
import type { PlanAction, PlanEntry, PlanInput } from '../../handler/plan-types';
import { dependencyOrder, selectedDependencies } from '../../local/graph';
import { isDpiType, isPlainObject, Template } from '../../local/template';

/** The handler's decision for one resource (`planResource`). */
export type Planner = (input: PlanInput) => PlanEntry;

/** Actions after which the resource's physical ID or attributes are new (references to it change). */
export const CHANGES_REFERENCES: ReadonlySet<PlanAction> = new Set<PlanAction>(['create', 'replace', 'rebuild']);

/** Prefix of a deploy-time value on the declared side (the local runner's placeholders look the same). */
export const DEPLOY_TIME = '<<deploy-time:';

/** One stack's two sides. */
export interface TemplatePair {
  /** The stack as plan entries name it (a nested stack: its construct path). */
  readonly display: string;
  /** The synthesized template; undefined when the stack leaves the app (a nested stack its parent no longer has). */
  readonly newTemplate?: Template;
  /** The deployed template; undefined when the stack is not deployed. */
  readonly oldTemplate?: Template;
  /** Deployed physical IDs by logical ID. */
  readonly physicalIds?: ReadonlyMap<string, string>;
  /** Construct paths by logical ID (declared side first). */
  readonly newPaths?: ReadonlyMap<string, string>;
  readonly oldPaths?: ReadonlyMap<string, string>;
  /** The stack's name in the app (assembly), to find a nested stack's parent pair. */
  readonly key?: string;
  /** A nested stack: its parent's `key` and the logical ID of the `AWS::CloudFormation::Stack` resource holding it. */
  readonly nestedIn?: { readonly parent: string; readonly logicalId: string };
  /** The deployed stack's name (CloudFormation mode), for the journal keys of its resources. */
  readonly deployedName?: string;
}

/** Wire properties no decision reads (the handler's connection and provider token; the journal key). */
const NOT_DECIDING = new Set(['ServiceToken', 'Connection', 'JournalKey']);

/** The declared props of a resource whose value is decided at deploy time, with their sources. */
function deployTimeProps(props: Record<string, unknown>, sources: DeployTimeSources): Record<string, string> | undefined {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(props)) {
    if (NOT_DECIDING.has(k)) continue;
    const src = sources.sourceOf(v);
    if (src !== undefined) out[k] = src;
  }
  return Object.keys(out).length > 0 ? out : undefined;
}

/**
 * The plan entries of every pair, parents before their nested stacks (as `collectPlan` lists them): a nested
 * stack's parameters are deploy-time only when its parent passes them differently or from a deploy-time value.
 */
export function planTemplatePairs(pairs: readonly TemplatePair[], planner: Planner): PlanEntry[] {
  const byKey = new Map<string, DeployTimeSources>();
  const out: PlanEntry[] = [];
  for (const pair of pairs) {
    const parent = pair.nestedIn ? byKey.get(pair.nestedIn.parent) : undefined;
    const params: ParameterSource | undefined = pair.nestedIn
      ? (name) => (parent ? parent.nestedParameterSource(pair.nestedIn!.logicalId, name) : `parameter ${name}`)
      : undefined;
    out.push(...planTemplatePair(pair, planner, (s) => {
      if (pair.key !== undefined) byKey.set(pair.key, s);
    }, params));
  }
  return out;
}

function dpiIds(t: Template | undefined): string[] {
  return Object.entries(t?.Resources ?? {}).filter(([, r]) => isDpiType(r.Type)).map(([id]) => id);
}

/** `value` with every reference to a resource of `changing` replaced by a deploy-time placeholder. */
export function withDeployTimeValues(value: unknown, changing: ReadonlySet<string>): unknown {
  if (changing.size === 0) return value;
  if (Array.isArray(value)) return value.map((v) => withDeployTimeValues(v, changing));
  if (!isPlainObject(value)) return value;
  const keys = Object.keys(value);
  if (keys.length === 1) {
    const [k] = keys;
    const inner = value[k];
    if (k === 'Ref' && typeof inner === 'string' && changing.has(inner)) return `${DEPLOY_TIME}${inner}>>`;
    if (k === 'Fn::GetAtt') {
      const [id, attr] = typeof inner === 'string' ? inner.split('.') : Array.isArray(inner) ? inner : [];
      if (typeof id === 'string' && changing.has(id)) return `${DEPLOY_TIME}${id}.${String(attr)}>>`;
    }
    if (k === 'Fn::Sub') {
      const text = typeof inner === 'string' ? inner : Array.isArray(inner) && typeof inner[0] === 'string' ? inner[0] : '';
      for (const m of text.matchAll(/\$\{([^}!][^}]*)\}/g)) {
        const id = m[1].trim().split('.')[0];
        if (changing.has(id)) return `${DEPLOY_TIME}${m[1].trim()}>>`;
      }
    }
  }
  return Object.fromEntries(keys.map((k) => [k, withDeployTimeValues(value[k], changing)]));
}

/**
 * The plan entries of one stack: its declared resources in dependency order, then the deployed ones that leave it
 * (dependents first, as the clean-up deletes them).
 */
export function planTemplatePair(pair: TemplatePair, planner: Planner, onSources?: (s: DeployTimeSources) => void,
  parameterSource?: ParameterSource): PlanEntry[] {
  const out: PlanEntry[] = [];
  const newRes = pair.newTemplate?.Resources ?? {};
  const oldRes = pair.oldTemplate?.Resources ?? {};
  const newIds = dpiIds(pair.newTemplate);
  const sources = pair.newTemplate ? new DeployTimeSources(pair.newTemplate, pair.oldTemplate, parameterSource) : undefined;
  if (sources) onSources?.(sources);
  const changing = sources?.changing ?? new Set<string>();
  const input = (logicalId: string, type: string): Pick<PlanInput, 'type' | 'stack' | 'logicalId' | 'constructPath' | 'physicalId'> => {
    const constructPath = pair.newPaths?.get(logicalId) ?? pair.oldPaths?.get(logicalId);
    const physicalId = pair.physicalIds?.get(logicalId);
    return {
      type,
      stack: pair.display,
      logicalId,
      ...(constructPath !== undefined ? { constructPath } : {}),
      ...(physicalId !== undefined ? { physicalId } : {}),
    };
  };
  if (pair.newTemplate && sources) {
    const declared = new Set(newIds);
    const order = dependencyOrder(newIds, selectedDependencies(pair.newTemplate, (id) => declared.has(id)));
    for (const id of order) {
      const r = newRes[id];
      const before = oldRes[id];
      // A type change is not an update: CloudFormation refuses it (the old resource leaves, a new one is made).
      const old = before && before.Type === r.Type ? before : undefined;
      const newProps = withDeployTimeValues(r.Properties ?? {}, changing) as Record<string, unknown>;
      const deployTime = old ? deployTimeProps(newProps, sources) : undefined;
      const entry = planner({
        ...input(id, r.Type),
        ...(old ? { oldProps: old.Properties ?? {} } : {}),
        newProps,
        ...(deployTime ? { deployTime } : {}),
        // CloudFormation applies the updated template's UpdateReplacePolicy to the replaced resource.
        ...(r.UpdateReplacePolicy !== undefined ? { updateReplacePolicy: r.UpdateReplacePolicy } : {}),
      });
      if (CHANGES_REFERENCES.has(entry.action)) changing.add(id);
      else if (entry.possibleAction !== undefined && CHANGES_REFERENCES.has(entry.possibleAction)) sources.possible.set(id, entry.possibleAction);
      out.push(entry);
    }
  }
  const leaving = dpiIds(pair.oldTemplate).filter((id) => !pair.newTemplate || newRes[id]?.Type !== oldRes[id].Type);
  if (leaving.length > 0 && pair.oldTemplate) {
    const set = new Set(leaving);
    const order = dependencyOrder(leaving, selectedDependencies(pair.oldTemplate, (id) => set.has(id))).reverse();
    for (const id of order) {
      const r = oldRes[id];
      out.push(planner({
        ...input(id, r.Type),
        oldProps: r.Properties ?? {},
        ...(r.DeletionPolicy !== undefined ? { deletionPolicy: r.DeletionPolicy } : {}),
      }));
    }
  }
  return out;
}
