/**
 * What CloudFormation has deployed: the stacks and their resources (physical IDs), read with
 * `@aws-sdk/client-cloudformation` (DescribeStacks, ListStackResources; the standard AWS credential chain), nested
 * stacks included (followed through their parents' `AWS::CloudFormation::Stack` resources, their `JournalKey`
 * properties read with GetTemplate), and the journal key each deployed resource has (`journalKeyOf`).
 * Shared by the commands that compare the journal or the declared properties with what is deployed
 * (`dpi orphans`, `dpi drift`). The SDK is required only when a client is made, so the start-up of other
 * commands does not load it; tests pass a fake client (`send` receives the SDK's command objects).
 */
import type * as cfnSdk from '@aws-sdk/client-cloudformation';
import { journalKeysOfTemplate } from '../handler/journal-keys';

export { journalKeysOfTemplate };

/** The part of a CloudFormation client used here (a real `CloudFormationClient`, or a fake in tests). */
export interface CloudFormationSender {
  send(command: object): Promise<unknown>;
}

/** A resource of a deployed stack. */
export interface DeployedResource {
  readonly logicalId: string;
  readonly physicalId?: string;
  readonly type: string;
  /** CloudFormation's resource status (`CREATE_COMPLETE`, `DELETE_COMPLETE`, ...). */
  readonly status: string;
}

/** A deployed stack: its status and resources by logical ID. */
export interface DeployedStack {
  readonly stackName: string;
  readonly stackId: string;
  readonly status: string;
  readonly resources: ReadonlyMap<string, DeployedResource>;
  /** For a nested stack: the name of the stack whose `AWS::CloudFormation::Stack` resource holds it. */
  readonly parentStack?: string;
  /**
   * Explicit journal keys (a literal `JournalKey` property in the stack's processed template) by logical ID, of the
   * `Custom::Dpi*` resources that have one. Read for nested stacks only (where `NotificationPipelineFleet` sets them).
   */
  readonly journalKeys?: ReadonlyMap<string, string>;
  /** Its parameters' values (DescribeStacks): a nested stack's are what its parent passed. */
  readonly parameters?: ReadonlyMap<string, string>;
  /** The properties of its `Custom::Dpi*` resources by logical ID, when its template was read (nested stacks; every stack with `templates`). */
  readonly dpiProperties?: ReadonlyMap<string, Record<string, unknown>>;
}

/** A deployed resource with the stack that holds it and its journal key. */
export interface KeyedResource extends DeployedResource {
  /** The stack that holds it (a nested stack's own name, as the handler sees it in the event's StackId). */
  readonly stackName: string;
  /** The lifecycle journal's key of the resource. */
  readonly key: string;
}

/**
 * The journal key a deployed resource has, as the handler builds it (`resourceKey` in src/handler/journal.ts): its
 * `JournalKey` property when it has one (a fleet's pipelines: `<parent stack>/<fleet path>/<nested stack>/<identity>`),
 * else `<stack name>/<logical ID>` with the name of the stack that holds it (for a nested stack its own name).
 */
export function journalKeyOf(stackName: string, logicalId: string, properties?: Readonly<Record<string, unknown>>): string {
  const explicit = properties?.JournalKey;
  return typeof explicit === 'string' && explicit !== '' ? explicit : `${stackName}/${logicalId}`;
}

/** Every live resource of `stacks` (nested stacks included) by its journal key. */
export function resourcesByJournalKey(stacks: ReadonlyMap<string, DeployedStack | undefined>): Map<string, KeyedResource> {
  const out = new Map<string, KeyedResource>();
  for (const s of stacks.values()) {
    if (!s) continue;
    for (const r of s.resources.values()) {
      if (r.status === 'DELETE_COMPLETE') continue;
      const explicit = s.journalKeys?.get(r.logicalId);
      const key = explicit ?? journalKeyOf(s.stackName, r.logicalId);
      out.set(key, { ...r, stackName: s.stackName, key });
    }
  }
  return out;
}

type CfnModule = typeof cfnSdk;

function sdk(): CfnModule {
  // Bundled as a dependency of the package (external in the dpi bundle): loaded only by the commands that read stacks.
  // eslint-disable-next-line @typescript-eslint/no-require-imports, import/no-extraneous-dependencies
  return require('@aws-sdk/client-cloudformation') as CfnModule;
}

/** A CloudFormation client with the standard credential chain (`profile` and `region` override the SDK's defaults). */
export function cloudFormationClient(opts: { region?: string; profile?: string } = {}): CloudFormationSender {
  const m = sdk();
  if (opts.profile) process.env.AWS_PROFILE = opts.profile;
  return new m.CloudFormationClient(opts.region ? { region: opts.region } : {});
}

function doesNotExist(e: unknown): boolean {
  const err = e as { name?: string; message?: string };
  return (err.name === 'ValidationError' || err.name === 'ValidationException') && /does not exist/i.test(err.message ?? '');
}

/** Whether a stack exists (a deleted stack, `DELETE_COMPLETE`, does not): its status, else undefined. */
export async function stackExists(stackName: string, cfn: CloudFormationSender): Promise<string | undefined> {
  const m = sdk();
  try {
    const out = await cfn.send(new m.DescribeStacksCommand({ StackName: stackName })) as cfnSdk.DescribeStacksCommandOutput;
    const s = (out.Stacks ?? []).find((x) => x.StackName === stackName) ?? out.Stacks?.[0];
    if (!s || s.StackStatus === 'DELETE_COMPLETE') return undefined;
    return s.StackStatus ?? 'UNKNOWN';
  } catch (e) {
    if (doesNotExist(e)) return undefined;
    throw cfnError('DescribeStacks', stackName, e);
  }
}

/**
 * The deployed stacks among `stackNames` with every resource (all pages of ListStackResources); a stack that does
 * not exist maps to undefined. With `nested`, every live `AWS::CloudFormation::Stack` resource is followed (its
 * physical ID is the nested stack's ARN), recursively: the nested stacks are added under their own names with
 * `parentStack`, and the explicit journal keys of their `Custom::Dpi*` resources are read from their processed
 * templates (GetTemplate, one call per nested stack that holds such a resource). With `templates`, the properties of
 * every stack's `Custom::Dpi*` resources are read the same way (one GetTemplate per stack that holds one).
 */
export async function deployedResources(stackNames: Iterable<string>, cfn: CloudFormationSender,
  opts: { nested?: boolean; templates?: boolean } = {}): Promise<Map<string, DeployedStack | undefined>> {
  const out = new Map<string, DeployedStack | undefined>();
  const queue: Array<{ ref: string; parent?: string }> = [...new Set(stackNames)].map((ref) => ({ ref }));
  const seenIds = new Set<string>();
  while (queue.length > 0) {
    const { ref, parent } = queue.shift()!;
    if (parent === undefined && out.has(ref)) continue;
    const stack = await readStack(ref, cfn, parent, opts.templates === true);
    if (!stack) {
      if (parent === undefined) out.set(ref, undefined);
      continue;
    }
    if (seenIds.has(stack.stackId)) {
      if (parent === undefined) out.set(ref, out.get(stack.stackName));
      continue;
    }
    seenIds.add(stack.stackId);
    out.set(parent === undefined ? ref : stack.stackName, stack);
    if (!opts.nested) continue;
    for (const r of stack.resources.values()) {
      if (r.type === 'AWS::CloudFormation::Stack' && r.status !== 'DELETE_COMPLETE' && r.physicalId) queue.push({ ref: r.physicalId, parent: stack.stackName });
    }
  }
  return out;
}

/** One stack (by name or ARN) with its resources; a nested stack also with its explicit journal keys. */
async function readStack(ref: string, cfn: CloudFormationSender, parent: string | undefined, templates: boolean): Promise<DeployedStack | undefined> {
  const m = sdk();
  let described: cfnSdk.Stack | undefined;
  try {
    const res = await cfn.send(new m.DescribeStacksCommand({ StackName: ref })) as cfnSdk.DescribeStacksCommandOutput;
    described = (res.Stacks ?? []).find((x) => x.StackName === ref || x.StackId === ref) ?? res.Stacks?.[0];
  } catch (e) {
    if (!doesNotExist(e)) throw cfnError('DescribeStacks', ref, e);
  }
  if (!described || described.StackStatus === 'DELETE_COMPLETE') return undefined;
  const name = described.StackName ?? ref;
  const resources = new Map<string, DeployedResource>();
  let token: string | undefined;
  do {
    let page: cfnSdk.ListStackResourcesCommandOutput;
    try {
      page = await cfn.send(new m.ListStackResourcesCommand({ StackName: ref, NextToken: token })) as cfnSdk.ListStackResourcesCommandOutput;
    } catch (e) {
      throw cfnError('ListStackResources', ref, e);
    }
    for (const r of page.StackResourceSummaries ?? []) {
      if (!r.LogicalResourceId) continue;
      resources.set(r.LogicalResourceId, {
        logicalId: r.LogicalResourceId,
        physicalId: r.PhysicalResourceId,
        type: r.ResourceType ?? '',
        status: r.ResourceStatus ?? '',
      });
    }
    token = page.NextToken;
  } while (token);
  // A nested stack named directly (not through its parent) is one too: DescribeStacks gives its parent's ARN.
  const parentName = parent ?? (described.ParentId ? /:stack\/([^/]+)\//.exec(described.ParentId)?.[1] ?? described.ParentId : undefined);
  let journalKeys: Map<string, string> | undefined;
  let dpiProperties: Map<string, Record<string, unknown>> | undefined;
  if ((parentName !== undefined || templates) && [...resources.values()].some((r) => r.type.startsWith('Custom::Dpi') && r.status !== 'DELETE_COMPLETE')) {
    let body: string | undefined;
    try {
      const t = await cfn.send(new m.GetTemplateCommand({ StackName: ref, TemplateStage: 'Processed' })) as cfnSdk.GetTemplateCommandOutput;
      body = t.TemplateBody;
    } catch (e) {
      throw cfnError('GetTemplate', name, e);
    }
    journalKeys = journalKeysOfTemplate(name, body ?? '{}');
    dpiProperties = dpiPropertiesOf(body ?? '{}');
  }
  return {
    stackName: name,
    stackId: described.StackId ?? ref,
    status: described.StackStatus ?? 'UNKNOWN',
    resources,
    ...(parentName !== undefined ? { parentStack: parentName } : {}),
    ...(described.Parameters && described.Parameters.length > 0
      ? { parameters: new Map(described.Parameters.filter((x) => x.ParameterKey !== undefined).map((x) => [x.ParameterKey!, x.ResolvedValue ?? x.ParameterValue ?? ''])) }
      : {}),
    ...(journalKeys ? { journalKeys } : {}),
    ...(dpiProperties ? { dpiProperties } : {}),
  };
}

/** The properties of the `Custom::Dpi*` resources of a template (JSON) by logical ID (none when it is not JSON). */
function dpiPropertiesOf(body: string): Map<string, Record<string, unknown>> {
  const out = new Map<string, Record<string, unknown>>();
  let parsed: { Resources?: Record<string, { Type?: string; Properties?: Record<string, unknown> }> };
  try {
    parsed = JSON.parse(body) as typeof parsed;
  } catch {
    return out;
  }
  for (const [id, r] of Object.entries(parsed.Resources ?? {})) {
    if (typeof r?.Type === 'string' && r.Type.startsWith('Custom::Dpi')) out.set(id, r.Properties ?? {});
  }
  return out;
}

/** The resources of a deployed stack's processed template (GetTemplate): type and properties by logical ID. */
export async function templateResources(stackName: string, cfn: CloudFormationSender):
Promise<Record<string, { Type?: string; Properties?: Record<string, unknown> }>> {
  const m = sdk();
  let body: string | undefined;
  try {
    const t = await cfn.send(new m.GetTemplateCommand({ StackName: stackName, TemplateStage: 'Processed' })) as cfnSdk.GetTemplateCommandOutput;
    body = t.TemplateBody;
  } catch (e) {
    throw cfnError('GetTemplate', stackName, e);
  }
  let parsed: { Resources?: Record<string, { Type?: string; Properties?: Record<string, unknown> }> };
  try {
    parsed = JSON.parse(body ?? '{}') as typeof parsed;
  } catch {
    throw new Error(`CloudFormation GetTemplate of stack ${stackName}: the template is not JSON`);
  }
  return parsed.Resources ?? {};
}

/**
 * The account and region's exported output values by export name (ListExports, every page), for a
 * `{"Fn::ImportValue": "<name>"}` in a deployed template (e.g. a journal table defined in another stack).
 */
export async function exportedValues(cfn: CloudFormationSender): Promise<Map<string, string>> {
  const m = sdk();
  const out = new Map<string, string>();
  let token: string | undefined;
  do {
    let page: cfnSdk.ListExportsCommandOutput;
    try {
      page = await cfn.send(new m.ListExportsCommand({ NextToken: token })) as cfnSdk.ListExportsCommandOutput;
    } catch (e) {
      const err = e as { name?: string; message?: string };
      throw new Error(`CloudFormation ListExports failed: ${err.name ?? 'Error'}: ${err.message ?? String(e)}; check the AWS credentials and region `
        + '(--profile, --region)');
    }
    for (const x of page.Exports ?? []) if (x.Name !== undefined && x.Value !== undefined) out.set(x.Name, x.Value);
    token = page.NextToken;
  } while (token);
  return out;
}

function cfnError(call: string, stack: string, e: unknown): Error {
  const err = e as { name?: string; message?: string };
  return new Error(`CloudFormation ${call} of stack ${stack} failed: ${err.name ?? 'Error'}: ${err.message ?? String(e)}; `
    + 'check the AWS credentials and region (--profile, --region)');
}
