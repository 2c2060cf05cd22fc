/**
 * Reads the stacks of a synthesized cloud assembly (`cdk.out`).
 */
import { existsSync, readFileSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { dependencyOrder } from './graph';
import { generatedName } from './intrinsics';
import { isPlainObject, Template, TemplateResource } from './template';

/** Type of a nested stack resource. */
export const NESTED_STACK_TYPE = 'AWS::CloudFormation::Stack';

/** Where a nested stack sits in its parent. */
export interface NestedStackOrigin {
  /** The parent stack. */
  readonly parent: AssemblyStack;
  /** Logical ID of the `AWS::CloudFormation::Stack` resource in the parent's template. */
  readonly logicalId: string;
  /** The `Parameters` property of that resource (unresolved: resolved in the parent's context). */
  readonly parameters: Record<string, unknown>;
}

/** A stack of the assembly. */
export interface AssemblyStack {
  /** Artifact ID (unique in the assembly, including nested assemblies: `<nested>/<id>`). */
  readonly artifactId: string;
  /** CloudFormation stack name. */
  readonly stackName: string;
  readonly account: string;
  readonly region: string;
  readonly template: Template;
  readonly templateFile: string;
  /** Artifact IDs of the stacks this one depends on. */
  readonly dependencies: string[];
  /** Stack names of the stacks this one depends on. */
  readonly dependencyStackNames: string[];
  /**
   * For a nested stack (an `AWS::CloudFormation::Stack` resource of a parent whose template is a file asset of the
   * assembly, as `NestedStack` makes): its parent, logical ID and parameters. Its stack name is derived from the
   * parent's name and the logical ID (CloudFormation adds a random suffix; the local name is deterministic).
   */
  readonly nested?: NestedStackOrigin;
}

/** Account and region used for environment-agnostic stacks. */
export interface DefaultEnvironment {
  readonly account: string;
  readonly region: string;
}

interface ManifestArtifact {
  type?: string;
  environment?: string;
  properties?: Record<string, unknown>;
  dependencies?: string[];
  displayName?: string;
}

/** Default environment of env-agnostic stacks: `CDK_DEFAULT_ACCOUNT`/`CDK_DEFAULT_REGION`, else the emulator's customer account in us-east-1. */
export function defaultEnvironment(): DefaultEnvironment {
  return {
    account: process.env.CDK_DEFAULT_ACCOUNT || '123456789012',
    region: process.env.CDK_DEFAULT_REGION || process.env.AWS_REGION || 'us-east-1',
  };
}

/** Reads every CloudFormation stack of the assembly in `dir` (nested assemblies included), in deployment order. */
export function readAssembly(dir: string, defaults: DefaultEnvironment = defaultEnvironment()): AssemblyStack[] {
  const root = resolve(dir);
  const manifestFile = join(root, 'manifest.json');
  if (!existsSync(manifestFile)) {
    throw new Error(`${manifestFile} not found: synthesize the app first (cdk synth -o ${dir}) or pass --app <cdk.out directory>`);
  }
  const stacks: AssemblyStack[] = [];
  collect(root, '', defaults, stacks, new Set());
  const byId = new Map(stacks.map((s) => [s.artifactId, s]));
  const names = new Map<string, string>();
  for (const s of stacks) {
    const other = names.get(s.stackName);
    if (other) throw new Error(`stacks ${other} and ${s.artifactId} have the same stack name ${s.stackName}`);
    names.set(s.stackName, s.artifactId);
  }
  const order = dependencyOrder(stacks.map((s) => s.artifactId), new Map(stacks.map((s) => [s.artifactId, s.dependencies])));
  return order.map((id) => {
    const s = byId.get(id)!;
    return { ...s, dependencyStackNames: s.dependencies.filter((d) => byId.has(d)).map((d) => byId.get(d)!.stackName) };
  });
}

/** Reads a JSON file of the run; a missing, unreadable or corrupt file is an error naming it and what it is. */
export function readJsonFile(file: string, what: string, fix: string): unknown {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    throw new Error(`cannot read the ${what} ${file} (${(e as NodeJS.ErrnoException).code ?? (e as Error).message}); ${fix}`);
  }
  try {
    return JSON.parse(text);
  } catch (e) {
    throw new Error(`the ${what} ${file} is not valid JSON (${(e as Error).message}); ${fix}`);
  }
}

function collect(dir: string, prefix: string, defaults: DefaultEnvironment, out: AssemblyStack[], seen: Set<string>): void {
  if (seen.has(dir)) return;
  seen.add(dir);
  const manifest = readJsonFile(join(dir, 'manifest.json'), 'cloud assembly manifest', 'run `cdk synth` again (or give --app the cdk.out folder)') as
    { artifacts?: Record<string, ManifestArtifact> };
  const artifacts = manifest.artifacts ?? {};
  for (const [id, a] of Object.entries(artifacts)) {
    if (a.type === 'cdk:cloud-assembly') {
      const sub = a.properties?.directoryName;
      if (typeof sub === 'string') collect(join(dir, sub), `${prefix}${id}/`, defaults, out, seen);
      continue;
    }
    if (a.type !== 'aws:cloudformation:stack') continue;
    const props = a.properties ?? {};
    const templateFile = join(dir, String(props.templateFile));
    const template = readJsonFile(templateFile, 'template', 'run `cdk synth` again') as Template;
    if (!isPlainObject(template)) throw new Error(`${templateFile} is not a template`);
    const m = /^aws:\/\/([^/]+)\/([^/]+)$/.exec(a.environment ?? '');
    const account = m && m[1] !== 'unknown-account' ? m[1] : defaults.account;
    const region = m && m[2] !== 'unknown-region' ? m[2] : defaults.region;
    const stack: AssemblyStack = {
      artifactId: `${prefix}${id}`,
      stackName: typeof props.stackName === 'string' ? props.stackName : id,
      account,
      region,
      template,
      templateFile,
      dependencies: (a.dependencies ?? [])
        .filter((d) => artifacts[d]?.type === 'aws:cloudformation:stack')
        .map((d) => `${prefix}${d}`),
      dependencyStackNames: [],
    };
    out.push(stack);
    collectNested(dir, stack, assetFiles(dir, artifacts), out);
  }
}

/** Asset manifest files of an assembly directory: object key (`<hash>.json`) -> source file. */
function assetFiles(dir: string, artifacts: Record<string, ManifestArtifact>): Map<string, string> {
  const files = new Map<string, string>();
  for (const a of Object.values(artifacts)) {
    if (a.type !== 'cdk:asset-manifest' || typeof a.properties?.file !== 'string') continue;
    const m = readJsonFile(join(dir, a.properties.file), 'asset manifest', 'run `cdk synth` again') as
      { files?: Record<string, { source?: { path?: string }; destinations?: Record<string, { objectKey?: string }> }> };
    for (const f of Object.values(m.files ?? {})) {
      if (typeof f.source?.path !== 'string') continue;
      for (const d of Object.values(f.destinations ?? {})) if (typeof d.objectKey === 'string') files.set(d.objectKey, f.source.path);
    }
  }
  return files;
}

/** The template file of a nested stack resource: `aws:asset:path` metadata, else the asset whose object key ends its TemplateURL. */
function nestedTemplateFile(dir: string, r: TemplateResource, assets: Map<string, string>): string | undefined {
  const meta = r.Metadata?.['aws:asset:path'];
  if (typeof meta === 'string' && existsSync(join(dir, meta))) return join(dir, meta);
  const url = JSON.stringify(r.Properties?.TemplateURL ?? '');
  for (const m of url.matchAll(/([A-Za-z0-9._-]+\.json)/g)) {
    const source = assets.get(basename(m[1]));
    if (source && existsSync(join(dir, source))) return join(dir, source);
  }
  return undefined;
}

/** Nested stacks of `parent` (recursively), each depending on its parent. */
function collectNested(dir: string, parent: AssemblyStack, assets: Map<string, string>, out: AssemblyStack[]): void {
  for (const [logicalId, r] of Object.entries(parent.template.Resources ?? {})) {
    if (r.Type !== NESTED_STACK_TYPE) continue;
    const templateFile = nestedTemplateFile(dir, r, assets);
    if (!templateFile) continue; // a nested stack from elsewhere (a TemplateURL the assembly does not hold): not deployed locally
    const template = readJsonFile(templateFile, 'nested stack template', 'run `cdk synth` again') as Template;
    if (!isPlainObject(template)) throw new Error(`${templateFile} is not a template`);
    const parameters = isPlainObject(r.Properties?.Parameters) ? r.Properties.Parameters : {};
    const stack: AssemblyStack = {
      artifactId: `${parent.artifactId}/${logicalId}`,
      stackName: generatedName(parent.stackName, logicalId, 128),
      account: parent.account,
      region: parent.region,
      template,
      templateFile,
      dependencies: [parent.artifactId],
      dependencyStackNames: [],
      nested: { parent, logicalId, parameters },
    };
    out.push(stack);
    collectNested(dir, stack, assets, out);
  }
}
