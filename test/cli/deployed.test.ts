/**
 * src/cli/deployed.ts: the deployed stacks and their resources, read through a fake CloudFormation client (the SDK's
 * command objects reach `send`; no AWS traffic).
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FakeStack, fakeCloudFormation, stackArn } from './fake-cloudformation';
import { CloudFormationSender, deployedResources, journalKeyOf, journalKeysOfTemplate, resourcesByJournalKey, stackExists } from '../../src/cli/deployed';
import { synthFleetApp } from '../local/fleet-app';

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

describe('nested stacks and journal keys', () => {
  const parentArn = stackArn('Fleet');
  const nestedArn = stackArn('Fleet-SellersPipelines0NestedStackResourceE748AB95-1XYZ');
  const nested: FakeStack = {
    name: 'Fleet-SellersPipelines0NestedStackResourceE748AB95-1XYZ',
    parentId: parentArn,
    resources: [
      { logicalId: 'Identity2003AB', physicalId: '9004', type: 'Custom::DpiNotificationPipeline', properties: { JournalKey: 'Fleet/Sellers/Pipelines0/Identity2003' } },
      { logicalId: 'PlainSub', physicalId: '77', type: 'Custom::DpiSubscription' },
    ],
  };
  const parent: FakeStack = {
    name: 'Fleet',
    resources: [
      { logicalId: 'SellersPipelines0NestedStackResourceE748AB95', physicalId: nestedArn, type: 'AWS::CloudFormation::Stack' },
      { logicalId: 'Orders', physicalId: '55', type: 'Custom::DpiSubscription' },
    ],
  };

  test('followed through AWS::CloudFormation::Stack resources (only with nested); JournalKey from the nested template, else <own stack name>/<logical ID>', async () => {
    const calls: string[] = [];
    const flat = await deployedResources(['Fleet'], fakeCloudFormation([parent, nested], calls));
    expect([...flat.keys()]).toEqual(['Fleet']);
    expect(calls.some((c) => c.startsWith('GetTemplate'))).toBe(false);
    calls.length = 0;
    const out = await deployedResources(['Fleet'], fakeCloudFormation([parent, nested], calls), { nested: true });
    expect([...out.keys()]).toEqual(['Fleet', nested.name]);
    expect(out.get(nested.name)?.parentStack).toBe('Fleet');
    expect(calls).toEqual(['DescribeStacksCommand Fleet', 'ListStackResourcesCommand Fleet', `DescribeStacksCommand ${nestedArn}`,
      `ListStackResourcesCommand ${nestedArn}`, `GetTemplateCommand ${nestedArn}`]);
    const keys = [...resourcesByJournalKey(out).values()].map((r) => `${r.key} = ${r.stackName} ${r.logicalId} ${r.physicalId}`);
    expect(keys).toEqual([
      `Fleet/SellersPipelines0NestedStackResourceE748AB95 = Fleet SellersPipelines0NestedStackResourceE748AB95 ${nestedArn}`,
      'Fleet/Orders = Fleet Orders 55',
      `Fleet/Sellers/Pipelines0/Identity2003 = ${nested.name} Identity2003AB 9004`,
      `${nested.name}/PlainSub = ${nested.name} PlainSub 77`,
    ]);
    // A nested stack named directly is known as one (DescribeStacks names its parent): its template is read too.
    const direct = await deployedResources([nested.name], fakeCloudFormation([parent, nested]), { nested: true });
    expect(direct.get(nested.name)?.journalKeys?.get('Identity2003AB')).toBe('Fleet/Sellers/Pipelines0/Identity2003');
  });

  test('a JournalKey that is not a literal string is an error naming the stack and resource; the journal key of a local resource', async () => {
    const bad: FakeStack = { ...nested, resources: [{ ...nested.resources[0], properties: { JournalKey: { 'Fn::Join': ['', ['a', 'b']] } } }] };
    await expect(deployedResources(['Fleet'], fakeCloudFormation([parent, bad]), { nested: true }))
      .rejects.toThrow(`stack ${nested.name}: resource Identity2003AB has a JournalKey that is not a literal string`);
    expect(journalKeyOf('Fleet-X', 'Identity1', { JournalKey: 'Fleet/Sellers/Pipelines0/Identity1' })).toBe('Fleet/Sellers/Pipelines0/Identity1');
    expect(journalKeyOf('Fleet-X', 'Identity1', {})).toBe('Fleet-X/Identity1');
  });

  test('the synthesized fleet\'s nested templates carry literal journal keys', () => {
    const dir = mkdtempSync(join(tmpdir(), 'dpi-deployed-'));
    try {
      synthFleetApp(dir, { identities: [2001, 2002, 2003], nestedStackCount: 2 });
      const keys = readdirSync(dir).filter((f) => f.endsWith('.nested.template.json'))
        .flatMap((f) => [...journalKeysOfTemplate(f, readFileSync(join(dir, f), 'utf8')).values()]).sort((a, b) => a.slice(-4).localeCompare(b.slice(-4)));
      expect(keys).toEqual([2001, 2002, 2003].map((id) => expect.stringMatching(new RegExp(`^Fleet/Sellers/Pipelines[01]/Identity${id}$`))));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
