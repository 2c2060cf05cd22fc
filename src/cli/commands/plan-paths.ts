/**
 * Construct paths of a cloud assembly's resources for `dpi plan`: the `aws:cdk:path` metadata of a resource when the
 * template has it (the cdk CLI adds it), else the assembly's metadata (`aws:cdk:logicalId` entries of the stack
 * artifact, in the manifest or its `additionalMetadataFile`), which every synthesis writes. A nested stack's entries
 * are in its top-level stack's metadata, under the nested stack's path (`<path>.NestedStack/<id>.NestedStackResource`
 * is the resource that holds it).
 */
import { existsSync, readFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import type { AssemblyStack } from '../../local/assembly';
import type { TemplateResource } from '../../local/template';

/** Construct paths of one stack: the stack's own (nested stacks) and its resources' by logical ID. */
export interface StackPaths {
  /** A nested stack's construct path, e.g. `Fleet/Sellers/Pipelines0`; undefined for a top-level stack. */
  readonly stackPath?: string;
  readonly resources: ReadonlyMap<string, string>;
}

interface MetadataEntry { type?: string; data?: unknown }

/** A construct path as people name the construct: no leading slash, no `/Resource` or `/Resource/Default` tail. */
export function constructName(path: string): string {
  return path.replace(/^\/+/, '').replace(/\/Resource(\/Default)?$/, '').replace(/\/Default$/, '');
}

/** The `aws:cdk:path` metadata of a template resource, as a construct name. */
export function metadataPath(r: TemplateResource | undefined): string | undefined {
  const p = r?.Metadata?.['aws:cdk:path'];
  return typeof p === 'string' ? constructName(p) : undefined;
}

function readJson(file: string): unknown {
  try {
    return JSON.parse(readFileSync(file, 'utf8'));
  } catch {
    return undefined;
  }
}

/** `(path, logicalId)` of every `aws:cdk:logicalId` entry of the artifact whose template is `templateFile`. */
function logicalIdEntries(templateFile: string): Array<[string, string]> {
  const dir = dirname(templateFile);
  type Artifact = { properties?: { templateFile?: string }; metadata?: Record<string, MetadataEntry[]>; additionalMetadataFile?: string };
  const manifest = readJson(join(dir, 'manifest.json')) as { artifacts?: Record<string, Artifact> } | undefined;
  const artifact = Object.values(manifest?.artifacts ?? {}).find((a) => a.properties?.templateFile === basename(templateFile));
  if (!artifact) return [];
  const metadata: Record<string, MetadataEntry[]> = { ...(artifact.metadata ?? {}) };
  if (artifact.additionalMetadataFile && existsSync(join(dir, artifact.additionalMetadataFile))) {
    Object.assign(metadata, readJson(join(dir, artifact.additionalMetadataFile)) as Record<string, MetadataEntry[]> | undefined);
  }
  const out: Array<[string, string]> = [];
  for (const [path, entries] of Object.entries(metadata)) {
    for (const e of Array.isArray(entries) ? entries : []) {
      if (e.type === 'aws:cdk:logicalId' && typeof e.data === 'string') out.push([path, e.data]);
    }
  }
  return out;
}

/** The construct paths of every stack of an assembly (nested stacks included), by stack name. */
export function assemblyPaths(stacks: readonly AssemblyStack[]): Map<string, StackPaths> {
  const out = new Map<string, StackPaths>();
  const roots = stacks.filter((s) => !s.nested);
  for (const root of roots) {
    const entries = logicalIdEntries(root.templateFile);
    // Each stack of the tree with the path prefix of its constructs ('/' for the root).
    const prefixes = new Map<string, string>([[root.stackName, '/']]);
    const tree = stacks.filter((s) => s === root || isUnder(s, root));
    for (let grew = true; grew;) {
      grew = false;
      for (const s of tree) {
        if (prefixes.has(s.stackName) || !s.nested || !prefixes.has(s.nested.parent.stackName)) continue;
        const parentPrefix = prefixes.get(s.nested.parent.stackName)!;
        const holder = entries.find(([p, id]) => id === s.nested!.logicalId && p.startsWith(parentPrefix) && p.includes('.NestedStack/'));
        prefixes.set(s.stackName, holder ? `${holder[0].replace(/\.NestedStack\/[^/]*$/, '')}/` : `\0${s.stackName}/`);
        grew = true;
      }
    }
    const owned = new Map<string, Map<string, string>>([...prefixes.keys()].map((n) => [n, new Map<string, string>()]));
    for (const [path, id] of entries) {
      let owner: string | undefined;
      let best = -1;
      for (const [name, prefix] of prefixes) {
        if (path.startsWith(prefix) && prefix.length > best) {
          owner = name;
          best = prefix.length;
        }
      }
      if (owner !== undefined) owned.get(owner)!.set(id, constructName(path));
    }
    for (const s of tree) {
      const prefix = prefixes.get(s.stackName);
      const resources = owned.get(s.stackName) ?? new Map<string, string>();
      const stackPath = s.nested && prefix && !prefix.startsWith('\0') ? constructName(prefix.slice(0, -1)) : undefined;
      out.set(s.stackName, { ...(stackPath ? { stackPath } : {}), resources });
    }
  }
  return out;
}

function isUnder(s: AssemblyStack, root: AssemblyStack): boolean {
  for (let p = s.nested?.parent; p; p = p.nested?.parent) if (p === root || p.stackName === root.stackName) return true;
  return false;
}
