/**
 * A fake CloudFormation client for the CLI tests (the SDK's command objects reach `send`; no AWS traffic): stacks by
 * name or ARN (DescribeStacks, ListStackResources in pages, GetTemplate), nested stacks included.
 */
import { CloudFormationSender } from '../../src/cli/deployed';
import { LocalState } from '../../src/local/state';

/** A resource of a fake stack. */
export interface FakeResource {
  readonly logicalId: string;
  readonly physicalId?: string;
  readonly type: string;
  /** @default CREATE_COMPLETE */
  readonly status?: string;
  /** Template properties (GetTemplate). */
  readonly properties?: Record<string, unknown>;
}

/** A fake stack. */
export interface FakeStack {
  readonly name: string;
  /** @default arn:aws:cloudformation:us-east-1:123456789012:stack/<name>/fake */
  readonly id?: string;
  /** @default UPDATE_COMPLETE */
  readonly status?: string;
  /** The parent's ARN (a nested stack). */
  readonly parentId?: string;
  readonly resources: FakeResource[];
  /** ListStackResources page size. @default 100 */
  readonly pageSize?: number;
}

interface Cmd { constructor: { name: string }; input: { StackName?: string; NextToken?: string; TemplateStage?: string } }

export const stackArn = (name: string): string => `arn:aws:cloudformation:us-east-1:123456789012:stack/${name}/fake`;

/** The fake client; `calls` receives `<Command> <StackName>[ <NextToken>]` per call. */
export function fakeCloudFormation(stacks: FakeStack[], calls: string[] = []): CloudFormationSender {
  const find = (ref: string): FakeStack | undefined => stacks.find((s) => s.name === ref || (s.id ?? stackArn(s.name)) === ref);
  return {
    send: async (command: object) => {
      const c = command as Cmd;
      const ref = c.input.StackName ?? '';
      calls.push(`${c.constructor.name} ${ref}${c.input.NextToken ? ` ${c.input.NextToken}` : ''}`);
      const s = find(ref);
      if (!s) throw Object.assign(new Error(`Stack with id ${ref} does not exist`), { name: 'ValidationError' });
      switch (c.constructor.name) {
        case 'DescribeStacksCommand':
          return { Stacks: [{ StackName: s.name, StackId: s.id ?? stackArn(s.name), StackStatus: s.status ?? 'UPDATE_COMPLETE', ParentId: s.parentId }] };
        case 'ListStackResourcesCommand': {
          const size = s.pageSize ?? 100;
          const i = c.input.NextToken ? Number(c.input.NextToken) : 0;
          return {
            StackResourceSummaries: s.resources.slice(i, i + size).map((r) => ({
              LogicalResourceId: r.logicalId, PhysicalResourceId: r.physicalId, ResourceType: r.type, ResourceStatus: r.status ?? 'CREATE_COMPLETE',
            })),
            NextToken: i + size < s.resources.length ? String(i + size) : undefined,
          };
        }
        case 'GetTemplateCommand':
          if (c.input.TemplateStage !== 'Processed') throw new Error('GetTemplate without TemplateStage Processed');
          return {
            TemplateBody: JSON.stringify({
              Resources: Object.fromEntries(s.resources.map((r) =>
                [r.logicalId, { Type: r.type, ...(r.properties ? { Properties: r.properties } : {}) }])),
            }),
          };
        default:
          throw new Error(`unexpected ${c.constructor.name}`);
      }
    },
  };
}

/**
 * The stacks of a `dpi local-deploy` state as CloudFormation would show them: each nested stack as an
 * `AWS::CloudFormation::Stack` resource of its parent (physical ID: its ARN), the resources with their recorded
 * properties in the templates.
 */
export function stacksOfLocalState(state: LocalState): FakeStack[] {
  return state.stacks.map((st) => ({
    name: st.stackName,
    id: st.stackId,
    parentId: st.parentStack ? state.stacks.find((p) => p.stackName === st.parentStack)?.stackId : undefined,
    pageSize: 2,
    resources: [
      ...state.stacks.filter((n) => n.parentStack === st.stackName).map((n) => ({
        logicalId: `${n.stackName.slice(st.stackName.length + 1)}`, physicalId: n.stackId, type: 'AWS::CloudFormation::Stack',
      })),
      ...Object.values(state.resources).filter((r) => r.stack === st.stackName).map((r) => ({
        logicalId: r.logicalId, physicalId: r.physicalId, type: r.type, properties: r.properties,
      })),
    ],
  }));
}
