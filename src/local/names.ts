/**
 * Names and shapes of the local runner's resolution: partitions, the names CloudFormation would generate, the
 * stringified properties it delivers, and the resources a value references (intrinsics.ts re-exports them).
 */
import { fakeHash as hash } from './resource-ids';
import { isPlainObject, Template } from './template';

/** Partition of a region. */
export function partitionOf(region: string): string {
  if (region.startsWith('cn-')) return 'aws-cn';
  if (region.startsWith('us-gov-')) return 'aws-us-gov';
  return 'aws';
}


/**
 * A deterministic stand-in for a name CloudFormation would generate:
 * `<stack>-<logicalId>` when it fits, else truncated parts and a hash (as CloudFormation does).
 */
export function generatedName(stackName: string, logicalId: string, maxLength: number): string {
  const plain = `${stackName}-${logicalId}`;
  if (plain.length <= maxLength) return plain;
  const suffix = hash(plain, 12);
  const room = maxLength - suffix.length - 2;
  const stackPart = stackName.slice(0, Math.min(stackName.length, Math.floor(room / 3)));
  const idPart = logicalId.slice(0, room - stackPart.length);
  return `${stackPart}-${idPart}-${suffix}`;
}

/** CloudFormation delivers every scalar property as a string; arrays and objects recursively. `null` values are dropped. */
export function stringifyScalars(value: unknown): unknown {
  if (value === null || value === undefined) return undefined;
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') return String(value);
  if (Array.isArray(value)) return value.filter((v) => v !== null && v !== undefined).map((v) => stringifyScalars(v));
  if (isPlainObject(value)) {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) {
      const s = stringifyScalars(v);
      if (s !== undefined) out[k] = s;
    }
    return out;
  }
  return String(value);
}

/**
 * Logical IDs of template resources referenced by `value` (through `Ref`,
 * `Fn::GetAtt` and `Fn::Sub`); pseudo parameters and template parameters excluded.
 */
export function referencedResources(value: unknown, template: Template): Set<string> {
  const out = new Set<string>();
  const resources = template.Resources ?? {};
  const add = (id: string): void => {
    if (Object.prototype.hasOwnProperty.call(resources, id)) out.add(id);
  };
  const walk = (v: unknown): void => {
    if (Array.isArray(v)) {
      v.forEach(walk);
      return;
    }
    if (!isPlainObject(v)) return;
    for (const [k, inner] of Object.entries(v)) {
      if (k === 'Ref' && typeof inner === 'string') {
        add(inner);
      } else if (k === 'Fn::GetAtt') {
        if (typeof inner === 'string') add(inner.split('.')[0]);
        else if (Array.isArray(inner) && typeof inner[0] === 'string') add(inner[0]);
        walk(inner);
      } else if (k === 'Fn::Sub') {
        const text = typeof inner === 'string' ? inner : Array.isArray(inner) ? inner[0] : undefined;
        const vars = Array.isArray(inner) && isPlainObject(inner[1]) ? inner[1] : {};
        if (typeof text === 'string') {
          for (const m of text.matchAll(/\$\{([^}!][^}]*)\}/g)) {
            const name = m[1].trim();
            if (!Object.prototype.hasOwnProperty.call(vars, name)) add(name.split('.')[0]);
          }
        }
        walk(vars);
      } else {
        walk(inner);
      }
    }
  };
  walk(value);
  return out;
}
