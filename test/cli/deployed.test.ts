/**
 * src/cli/deployed.ts: the deployed stacks and their resources, read through a fake CloudFormation client (the SDK's
 * command objects reach `send`; no AWS traffic).
 */
import { CloudFormationSender, deployedResources, stackExists } from '../../src/cli/deployed';

interface Cmd { constructor: { name: string }; input: { StackName?: string; NextToken?: string } }

function fake(stacks: Record<string, { status: string; pages: Array<Array<[string, string, string]>> }>, calls: string[]): CloudFormationSender {
  return {
    send: async (command: object) => {
      const c = command as Cmd;
      calls.push(`${c.constructor.name} ${c.input.StackName}${c.input.NextToken ? ` ${c.input.NextToken}` : ''}`);
      const s = stacks[c.input.StackName ?? ''];
      if (c.input.StackName === 'Broken') throw Object.assign(new Error('Rate exceeded'), { name: 'Throttling' });
      if (!s) throw Object.assign(new Error(`Stack with id ${c.input.StackName} does not exist`), { name: 'ValidationError' });
      if (c.constructor.name === 'DescribeStacksCommand') {
        return { Stacks: [{ StackName: c.input.StackName, StackId: `arn:stack/${c.input.StackName}/1`, StackStatus: s.status }] };
      }
      const i = c.input.NextToken ? Number(c.input.NextToken) : 0;
      return {
        StackResourceSummaries: s.pages[i].map(([LogicalResourceId, PhysicalResourceId, ResourceStatus]) => ({
          LogicalResourceId, PhysicalResourceId, ResourceStatus, ResourceType: 'Custom::DpiSubscription',
        })),
        NextToken: i + 1 < s.pages.length ? String(i + 1) : undefined,
      };
    },
  };
}

test('deployedResources reads every page of every stack; a stack that does not exist (or is DELETE_COMPLETE) maps to undefined', async () => {
  const calls: string[] = [];
  const cfn = fake({
    A: { status: 'UPDATE_COMPLETE', pages: [[['Sub1', '9001', 'CREATE_COMPLETE']], [['Sub2', '9002', 'DELETE_COMPLETE']]] },
    Old: { status: 'DELETE_COMPLETE', pages: [] },
  }, calls);
  const out = await deployedResources(['A', 'Gone', 'A', 'Old'], cfn);
  expect([...out.keys()]).toEqual(['A', 'Gone', 'Old']);
  expect(out.get('Gone')).toBeUndefined();
  expect(out.get('Old')).toBeUndefined();
  const a = out.get('A')!;
  expect(a.status).toBe('UPDATE_COMPLETE');
  expect([...a.resources.values()].map((r) => `${r.logicalId}=${r.physicalId} ${r.status}`)).toEqual(['Sub1=9001 CREATE_COMPLETE', 'Sub2=9002 DELETE_COMPLETE']);
  expect(calls).toEqual([
    'DescribeStacksCommand A', 'ListStackResourcesCommand A', 'ListStackResourcesCommand A 1', 'DescribeStacksCommand Gone', 'DescribeStacksCommand Old',
  ]);
});

test('stackExists answers the status or undefined; any other failure is named with the stack and what to check', async () => {
  const cfn = fake({ A: { status: 'CREATE_COMPLETE', pages: [] } }, []);
  expect(await stackExists('A', cfn)).toBe('CREATE_COMPLETE');
  expect(await stackExists('Nope', cfn)).toBeUndefined();
  await expect(stackExists('Broken', cfn)).rejects.toThrow('CloudFormation DescribeStacks of stack Broken failed: Throttling: Rate exceeded; '
    + 'check the AWS credentials and region (--profile, --region)');
  await expect(deployedResources(['Broken'], cfn)).rejects.toThrow('CloudFormation DescribeStacks of stack Broken failed');
});
