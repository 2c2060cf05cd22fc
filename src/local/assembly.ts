/**
 * Reads the stacks of a synthesized cloud assembly (`cdk.out`).
 */
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { dependencyOrder } from './graph';
import { isPlainObject, Template } from './template';

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
    out.push({
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
    });
  }
}
