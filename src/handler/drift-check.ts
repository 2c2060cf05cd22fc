/**
 * The scheduled drift check (`index.drift`): run by `DriftMonitor`, it lists its own stack's resources
 * (CloudFormation `ListStackResources` on the stack's ARN) and those of its nested stacks, recursively (the physical ID
 * of an `AWS::CloudFormation::Stack` resource is the nested stack's ARN; a nested stack's explicit journal keys come
 * from its processed template, `GetTemplate`), checks every `Custom::Dpi*` one against the lifecycle
 * journal and the service's reads exactly as `dpi drift` does (src/handler/drift.ts), and publishes `DriftedResources`
 * and `DriftCheckFailed` (dimension `StackName`) in CloudWatch embedded metric format. Each drifted resource is one log
 * line (declared -> live; never a secret). Makes no changing call.
 */
import { ConnectionProperties } from '../contract';
import { checkDrift, describeRow, DriftResource, isDpiType, isDrifted } from './drift';
import { messageOf } from './errors';
import { journalKeysOfTemplate } from './journal-keys';
import { log } from './log';
import { emitMetricLine, MONITOR_NAMESPACE } from './monitor';
import { loopbackHttpAllowed, runtimeFor, scheduledEnvironment } from './runtime';
import { refuseUnboundRun } from './scheduled-binding';
import { LambdaContextLike } from './types';

/** The event the schedule sends (the rule's input). */
export interface DriftEvent {
  readonly Connection: ConnectionProperties;
  /** The ARN of the stack whose resources are checked. */
  readonly StackId: string;
  readonly Namespace?: string;
}

/** A resource as CloudFormation lists it. */
export interface ListedStackResource {
  readonly LogicalResourceId?: string;
  readonly PhysicalResourceId?: string;
  readonly ResourceType?: string;
  readonly ResourceStatus?: string;
}

/** Lists every resource of a stack (all pages). */
export type StackResourceLister = (stackId: string) => Promise<ListedStackResource[]>;

let lister: StackResourceLister | undefined;

/** Replaces how the drift check lists the stack's resources (tests); undefined restores CloudFormation. Returns the previous one. */
export function setStackResourceLister(next: StackResourceLister | undefined): StackResourceLister | undefined {
  const prev = lister;
  lister = next;
  return prev;
}

/** Reads a stack's processed template body (GetTemplate). */
export type StackTemplateReader = (stackId: string) => Promise<string>;

let templateReader: StackTemplateReader | undefined;

/** Replaces how the drift check reads a nested stack's template (tests); undefined restores CloudFormation. Returns the previous one. */
export function setStackTemplateReader(next: StackTemplateReader | undefined): StackTemplateReader | undefined {
  const prev = templateReader;
  templateReader = next;
  return prev;
}

type CfnModule = typeof import('@aws-sdk/client-cloudformation');

/** CloudFormation `GetTemplate` (processed) of a stack. */
async function cloudFormationTemplate(stackId: string): Promise<string> {
  // eslint-disable-next-line @typescript-eslint/no-require-imports, import/no-extraneous-dependencies
  const m = require('@aws-sdk/client-cloudformation') as CfnModule;
  const out = await new m.CloudFormationClient({}).send(new m.GetTemplateCommand({ StackName: stackId, TemplateStage: 'Processed' }));
  return out.TemplateBody ?? '{}';
}

/**
 * The `Custom::Dpi*` resources of a stack and of its nested stacks (recursively), each with the name of the stack that
 * holds it and its journal key (a nested stack's explicit `JournalKey`, else `<stack name>/<logical ID>`).
 */
export async function stackDpiResources(stackId: string): Promise<DriftResource[]> {
  const list = lister ?? cloudFormationResources;
  const read = templateReader ?? cloudFormationTemplate;
  const out: DriftResource[] = [];
  const queue: Array<{ id: string; nested: boolean }> = [{ id: stackId, nested: false }];
  const seen = new Set<string>();
  while (queue.length > 0) {
    const { id, nested } = queue.shift()!;
    if (seen.has(id)) continue;
    seen.add(id);
    const name = stackNameOf(id);
    const listed = (await list(id)).filter((r) => r.ResourceStatus !== 'DELETE_COMPLETE');
    for (const r of listed) {
      if (r.ResourceType === 'AWS::CloudFormation::Stack' && r.PhysicalResourceId) queue.push({ id: r.PhysicalResourceId, nested: true });
    }
    const dpi = listed.filter((r) => r.ResourceType !== undefined && isDpiType(r.ResourceType));
    const keys = nested && dpi.length > 0 ? journalKeysOfTemplate(name, await read(id)) : new Map<string, string>();
    for (const r of dpi) {
      const logicalId = r.LogicalResourceId ?? '';
      const key = keys.get(logicalId);
      out.push({ stack: name, logicalId, type: r.ResourceType!, physicalId: r.PhysicalResourceId ?? '', ...(key ? { key } : {}) });
    }
  }
  return out;
}

/** CloudFormation `ListStackResources` (the Lambda runtime provides the SDK). */
async function cloudFormationResources(stackId: string): Promise<ListedStackResource[]> {
  // eslint-disable-next-line @typescript-eslint/no-require-imports, import/no-extraneous-dependencies
  const m = require('@aws-sdk/client-cloudformation') as CfnModule;
  const client = new m.CloudFormationClient({});
  const out: ListedStackResource[] = [];
  let next: string | undefined;
  do {
    const page = await client.send(new m.ListStackResourcesCommand({ StackName: stackId, NextToken: next }));
    out.push(...(page.StackResourceSummaries ?? []));
    next = page.NextToken;
  } while (next);
  return out;
}

/** The stack name of a stack ARN (`arn:aws:cloudformation:<region>:<account>:stack/<name>/<uuid>`). */
export function stackNameOf(stackId: string): string {
  return /:stack\/([^/]+)\//.exec(stackId)?.[1] ?? stackId;
}

/** The embedded-metric-format line of one run. */
export function driftEmfLine(namespace: string, stackName: string, m: { drifted: number; failed: number; checked: number },
  timestampMs: number): string {
  return JSON.stringify({
    _aws: {
      Timestamp: timestampMs,
      CloudWatchMetrics: [{
        Namespace: namespace,
        Dimensions: [['StackName']],
        Metrics: [{ Name: 'DriftedResources', Unit: 'Count' }, { Name: 'DriftCheckFailed', Unit: 'Count' }, { Name: 'CheckedResources', Unit: 'Count' }],
      }],
    },
    StackName: stackName,
    // A failed run publishes no DriftedResources value (missing data, not a false zero).
    ...(m.failed ? {} : { DriftedResources: m.drifted }),
    DriftCheckFailed: m.failed,
    CheckedResources: m.checked,
  });
}

/** The result of one run. */
export interface DriftRunResult {
  readonly stackName: string;
  readonly checked: number;
  readonly drifted: number;
  readonly failed: boolean;
  readonly error?: string;
}

/** Handles one scheduled run. */
export async function drift(event: DriftEvent, context?: LambdaContextLike): Promise<DriftRunResult> {
  // Before anything is read or published: the run must be the one its rule sends (src/handler/scheduled-binding.ts).
  refuseUnboundRun('drift check', event, scheduledEnvironment(), loopbackHttpAllowed());
  const namespace = event.Namespace || MONITOR_NAMESPACE;
  const stackId = String(event.StackId ?? '');
  const stackName = stackNameOf(stackId);
  const now = Date.now();
  try {
    const rt = runtimeFor(event.Connection, context, scheduledEnvironment());
    const resources = await stackDpiResources(stackId);
    const rows = await checkDrift(resources, { client: rt.client, journal: rt.journal, pipelineSubscriptionsKey: rt.metadataKeys.subscriptions });
    const drifted = rows.filter(isDrifted);
    for (const r of drifted) {
      log({ level: 'WARNING', msg: 'drift', resource: r.key, type: r.type, physicalId: r.physicalId, status: r.status, differences: r.differences, reason: r.reason, detail: describeRow(r) });
    }
    const notChecked = rows.filter((r) => r.status === 'NOT_CHECKED').map((r) => `${r.key}: ${r.reason}`);
    emitMetricLine(driftEmfLine(namespace, stackName, { drifted: drifted.length, failed: 0, checked: rows.length }, now));
    log({ msg: 'drift check run', stackName, checked: rows.length, drifted: drifted.length, ...(notChecked.length > 0 ? { notChecked } : {}) });
    return { stackName, checked: rows.length, drifted: drifted.length, failed: false };
  } catch (e) {
    const error = messageOf(e);
    log({ level: 'ERROR', msg: 'the drift check could not run', stackName, error });
    emitMetricLine(driftEmfLine(namespace, stackName, { drifted: 0, failed: 1, checked: 0 }, now));
    return { stackName, checked: 0, drifted: 0, failed: true, error };
  }
}
