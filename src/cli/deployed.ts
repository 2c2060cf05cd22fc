/**
 * What CloudFormation has deployed: the stacks and their resources (physical IDs), read with
 * `@aws-sdk/client-cloudformation` (DescribeStacks, ListStackResources; the standard AWS credential chain).
 * Shared by the commands that compare the journal or the declared properties with what is deployed
 * (`dpi orphans`, `dpi drift`). The SDK is required only when a client is made, so the start-up of other
 * commands does not load it; tests pass a fake client (`send` receives the SDK's command objects).
 */
import type * as cfnSdk from '@aws-sdk/client-cloudformation';

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
 * not exist maps to undefined.
 */
export async function deployedResources(stackNames: Iterable<string>, cfn: CloudFormationSender): Promise<Map<string, DeployedStack | undefined>> {
  const m = sdk();
  const out = new Map<string, DeployedStack | undefined>();
  for (const name of new Set(stackNames)) {
    let described: cfnSdk.Stack | undefined;
    try {
      const res = await cfn.send(new m.DescribeStacksCommand({ StackName: name })) as cfnSdk.DescribeStacksCommandOutput;
      described = (res.Stacks ?? []).find((x) => x.StackName === name) ?? res.Stacks?.[0];
    } catch (e) {
      if (!doesNotExist(e)) throw cfnError('DescribeStacks', name, e);
    }
    if (!described || described.StackStatus === 'DELETE_COMPLETE') {
      out.set(name, undefined);
      continue;
    }
    const resources = new Map<string, DeployedResource>();
    let token: string | undefined;
    do {
      let page: cfnSdk.ListStackResourcesCommandOutput;
      try {
        page = await cfn.send(new m.ListStackResourcesCommand({ StackName: name, NextToken: token })) as cfnSdk.ListStackResourcesCommandOutput;
      } catch (e) {
        throw cfnError('ListStackResources', name, e);
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
    out.set(name, { stackName: name, stackId: described.StackId ?? name, status: described.StackStatus ?? 'UNKNOWN', resources });
  }
  return out;
}

function cfnError(call: string, stack: string, e: unknown): Error {
  const err = e as { name?: string; message?: string };
  return new Error(`CloudFormation ${call} of stack ${stack} failed: ${err.name ?? 'Error'}: ${err.message ?? String(e)}; `
    + 'check the AWS credentials and region (--profile, --region)');
}
