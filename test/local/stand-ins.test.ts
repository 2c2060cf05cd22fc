/**
 * References to resources local-deploy does not deploy (SNS topics, KMS keys, buckets, queues, alarms, any other type)
 * resolve to deterministic stand-ins, also across nested stack parameters and outputs.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { dpiResource, fakeCalls, providerResources, resetFakeCalls, tempDir, writeAssembly } from './helpers';
import { RunningEmulator, startEmulator } from '../../src/emulator';
import { runLocalDeploy } from '../../src/local';
import { resolveValue, ResolveContext } from '../../src/local/intrinsics';
import { fallbackIdentity, RESOURCE_IDS } from '../../src/local/resource-ids';
import { Template } from '../../src/local/template';

const template: Template = {
  Resources: {
    OnCall: { Type: 'AWS::SNS::Topic' },
    NamedTopic: { Type: 'AWS::SNS::Topic', Properties: { TopicName: { 'Fn::Join': ['-', ['alerts', { Ref: 'AWS::Region' }]] } } },
    Queue: { Type: 'AWS::SQS::Queue' },
    Bucket: { Type: 'AWS::S3::Bucket' },
    NamedBucket: { Type: 'AWS::S3::Bucket', Properties: { BucketName: 'my-data' } },
    Key: { Type: 'AWS::KMS::Key' },
    Alarm: { Type: 'AWS::CloudWatch::Alarm' },
    Thing: { Type: 'AWS::Glue::Database' },
    Foreign: { Type: 'Custom::SomethingElse' },
    Role: { Type: 'AWS::IAM::Role', Properties: { RoleName: 'r' } },
    Child: { Type: 'AWS::CloudFormation::Stack' },
  },
};
const env = { stackName: 'Shop', stackId: 'arn:aws:cloudformation:us-east-1:123456789012:stack/Shop/abc', account: '123456789012', region: 'us-east-1' };
const ctx: ResolveContext = { env, template };
const r = (v: unknown, c: ResolveContext = ctx): unknown => resolveValue(v, 'Res', c);

describe('stand-ins of resources local-deploy does not deploy', () => {
  test.each<[string, unknown, unknown]>([
    ['Ref of an SNS topic is its ARN', { Ref: 'OnCall' }, 'arn:aws:sns:us-east-1:123456789012:Shop-OnCall'],
    ['a named topic keeps its (resolved) name', { Ref: 'NamedTopic' }, 'arn:aws:sns:us-east-1:123456789012:alerts-us-east-1'],
    ['TopicName of a topic', { 'Fn::GetAtt': ['OnCall', 'TopicName'] }, 'Shop-OnCall'],
    ['Ref of an SQS queue is its URL', { Ref: 'Queue' }, 'https://sqs.us-east-1.amazonaws.com/123456789012/Shop-Queue'],
    ['Arn of an SQS queue', { 'Fn::GetAtt': ['Queue', 'Arn'] }, 'arn:aws:sqs:us-east-1:123456789012:Shop-Queue'],
    ['Ref of a bucket is its (lower-case) name', { Ref: 'Bucket' }, 'shop-bucket'],
    ['Arn of a named bucket', { 'Fn::GetAtt': ['NamedBucket', 'Arn'] }, 'arn:aws:s3:::my-data'],
    ['RegionalDomainName of a bucket', { 'Fn::GetAtt': ['NamedBucket', 'RegionalDomainName'] }, 'my-data.s3.us-east-1.amazonaws.com'],
    ['Ref of a KMS key is a key ID', { Ref: 'Key' }, expect.stringMatching(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/)],
    ['Arn of a KMS key', { 'Fn::GetAtt': ['Key', 'Arn'] }, expect.stringMatching(/^arn:aws:kms:us-east-1:123456789012:key\/[0-9a-f-]{36}$/)],
    ['Ref of an alarm is its name', { Ref: 'Alarm' }, 'Shop-Alarm'],
    ['Arn of an alarm', { 'Fn::GetAtt': ['Alarm', 'Arn'] }, 'arn:aws:cloudwatch:us-east-1:123456789012:alarm:Shop-Alarm'],
    ['any other type: Ref a generated name', { Ref: 'Thing' }, 'Shop-Thing'],
    ['any other type: Arn in its service namespace', { 'Fn::GetAtt': ['Thing', 'Arn'] }, 'arn:aws:glue:us-east-1:123456789012:database/Shop-Thing'],
    ['an unknown attribute: a placeholder', { 'Fn::GetAtt': ['Thing', 'Endpoint'] }, expect.stringMatching(/^Shop-Thing\.Endpoint-[a-z0-9]{8}$/)],
    ['a custom resource of another provider', { Ref: 'Foreign' }, 'Shop-Foreign'],
    ['a kind handled before keeps its value', { 'Fn::GetAtt': ['Role', 'Arn'] }, 'arn:aws:iam::123456789012:role/r'],
    ['Ref of a nested stack from elsewhere is a stack ARN', { Ref: 'Child' }, expect.stringMatching(/^arn:aws:cloudformation:us-east-1:123456789012:stack\/Shop-Child\/[a-z0-9]{8}$/)],
    ['in Fn::Sub', { 'Fn::Sub': '${OnCall}|${Key.Arn}' }, expect.stringMatching(/^arn:aws:sns:us-east-1:123456789012:Shop-OnCall\|arn:aws:kms:/)],
  ])('%s', (_name, input, expected) => {
    expect(r(input)).toEqual(expected);
  });

  test('deterministic: the same input gives the same value; another stack, account or region another', () => {
    const refs = ['Key', 'Thing'].flatMap((id) => [{ Ref: id }, { 'Fn::GetAtt': [id, 'Arn'] }, { 'Fn::GetAtt': [id, 'Whatever'] }]);
    const a = refs.map((v) => r(v));
    expect(refs.map((v) => r(v))).toEqual(a);
    const other = refs.map((v) => r(v, { ...ctx, env: { ...env, stackName: 'Other' } }));
    other.forEach((v, i) => expect(v).not.toEqual(a[i]));
    expect(r({ 'Fn::GetAtt': ['Key', 'Arn'] }, { ...ctx, env: { ...env, region: 'eu-west-1', account: '999999999999' } }))
      .toMatch(/^arn:aws:kms:eu-west-1:999999999999:key\//);
  });

  test('the table covers the common types; the fallback any other', () => {
    for (const t of ['AWS::SNS::Topic', 'AWS::SQS::Queue', 'AWS::S3::Bucket', 'AWS::KMS::Key', 'AWS::CloudWatch::Alarm']) expect(RESOURCE_IDS[t]).toBeDefined();
    const fb = fallbackIdentity('AWS::Foo::BarBaz');
    const fenv = { partition: 'aws', region: 'us-east-1', account: '1', urlSuffix: 'amazonaws.com', stackName: 'S', logicalId: 'X', type: 'AWS::Foo::BarBaz' };
    expect(fb.attributes!.Arn('n', fenv, () => undefined)).toBe('arn:aws:foo:us-east-1:1:barbaz/n');
  });

  test('a nested stack: Ref is its stack ID, Outputs.<Name> its output', () => {
    const c: ResolveContext = {
      ...ctx,
      nestedStack: (id) => (id === 'Child' ? { stackId: 'arn:child', output: (name) => `out-${name}` } : undefined),
    };
    expect(r({ Ref: 'Child' }, c)).toBe('arn:child');
    expect(r({ 'Fn::GetAtt': ['Child', 'Outputs.TopicArn'] }, c)).toBe('out-TopicArn');
    expect(r({ 'Fn::GetAtt': 'Child.Outputs.TopicArn' }, c)).toBe('out-TopicArn');
  });
});

// ---------------------------------------------------------------------------------------------------------------
// Through the runner: a parent passes stand-ins to a nested stack's parameters, and reads a nested stack's output.

const FAKE = join(__dirname, 'fixtures', 'fake-handler.js');
const calls = fakeCalls;

let emulator: RunningEmulator;
let tmp: { dir: string; cleanup: () => void };
beforeAll(async () => {
  emulator = await startEmulator({ port: 0 });
});
afterAll(async () => {
  await emulator.stop();
  resetFakeCalls();
});
beforeEach(() => {
  resetFakeCalls();
  tmp = tempDir();
});
afterEach(() => tmp.cleanup());

/** A parent with an SNS topic, a KMS key and a bucket, and a nested stack (template beside it) that takes them as parameters. */
function nestedAssembly(): string {
  const dir = join(tmp.dir, 'cdk.out');
  const nested = {
    Parameters: { TopicArn: { Type: 'String' }, KeyArn: { Type: 'String' }, BucketName: { Type: 'String' } },
    Resources: {
      ...providerResources(),
      Audit: { Type: 'AWS::SNS::Topic' },
      Pipe: dpiResource('Custom::DpiSubscription', {
        Key: 'nested', AlarmTopic: { Ref: 'TopicArn' }, KeyArn: { Ref: 'KeyArn' }, Bucket: { Ref: 'BucketName' },
      }),
    },
    Outputs: { AuditArn: { Value: { Ref: 'Audit' } } },
  };
  writeAssembly(dir, [{
    name: 'Parent',
    template: {
      Resources: {
        ...providerResources(),
        OnCall: { Type: 'AWS::SNS::Topic' },
        Key: { Type: 'AWS::KMS::Key' },
        Bucket: { Type: 'AWS::S3::Bucket' },
        Child: {
          Type: 'AWS::CloudFormation::Stack',
          Properties: {
            TemplateURL: 'https://example.com/Child.nested.template.json',
            Parameters: { TopicArn: { Ref: 'OnCall' }, KeyArn: { 'Fn::GetAtt': ['Key', 'Arn'] }, BucketName: { Ref: 'Bucket' } },
          },
          Metadata: { 'aws:asset:path': 'Child.nested.template.json' },
        },
        Reader: dpiResource('Custom::DpiSubscription', { Key: 'parent', AuditTopic: { 'Fn::GetAtt': ['Child', 'Outputs.AuditArn'] } }),
      },
    },
  }]);
  writeFileSync(join(dir, 'Child.nested.template.json'), JSON.stringify(nested));
  return dir;
}

test('nested stack parameters referencing a parent topic, key and bucket, and a nested output read by the parent, deploy and destroy', async () => {
  const app = nestedAssembly();
  const lines: string[] = [];
  const opts = {
    app,
    emulatorUrl: emulator.url,
    stateFile: join(tmp.dir, 'state', 'local-state.json'),
    refreshToken: 'rt-x',
    handlerPath: FAKE,
    progress: (l: string) => lines.push(l),
    output: (l: string) => lines.push(l),
  };
  const first = await runLocalDeploy(opts);
  expect(first.error).toBeUndefined();
  expect(first.success).toBe(true);
  const creates = calls().filter((c) => c.event.RequestType === 'Create');
  const nested = creates.find((c) => c.event.ResourceProperties.Key === 'nested')!.event.ResourceProperties;
  expect(nested.AlarmTopic).toBe('arn:aws:sns:us-east-1:123456789012:Parent-OnCall');
  expect(nested.KeyArn).toMatch(/^arn:aws:kms:us-east-1:123456789012:key\/[0-9a-f-]{36}$/);
  expect(nested.Bucket).toBe('parent-bucket');
  // The nested stack's name is derived from its parent's and its logical ID: its topic's ARN names it.
  const parent = creates.find((c) => c.event.ResourceProperties.Key === 'parent')!.event.ResourceProperties;
  expect(parent.AuditTopic).toBe('arn:aws:sns:us-east-1:123456789012:Parent-Child-Audit');

  // A second run resolves the same values: nothing changes.
  const again = await runLocalDeploy(opts);
  expect(again.success).toBe(true);
  expect(again.events.filter((e) => e.type !== 'AWS::CloudFormation::Stack')).toEqual([]);

  const destroyed = await runLocalDeploy({ ...opts, destroy: true });
  expect(destroyed.success).toBe(true);
  expect(calls().filter((c) => c.event.RequestType === 'Delete' && c.fn === 'onEvent').map((c) => c.event.ResourceProperties.Key).sort())
    .toEqual(['nested', 'parent']);
});
