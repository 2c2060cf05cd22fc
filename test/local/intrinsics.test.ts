import {
  generatedName, referencedResources, resolveValue, ResolveContext, stringifyScalars,
} from '../../src/local/intrinsics';
import { roleTrustsService } from '../../src/local/runner';
import { Template } from '../../src/local/template';

const template: Template = {
  Parameters: {
    Stage: { Type: 'String', Default: 'prod' },
    NoDefault: { Type: 'String' },
    Ssm: { Type: 'AWS::SSM::Parameter::Value<String>', Default: '/cdk-bootstrap/version' },
  },
  Conditions: {
    IsProd: { 'Fn::Equals': [{ Ref: 'Stage' }, 'prod'] },
    NotProd: { 'Fn::Not': [{ Condition: 'IsProd' }] },
    Both: { 'Fn::And': [{ Condition: 'IsProd' }, { 'Fn::Or': [{ Condition: 'NotProd' }, true] }] },
  },
  Mappings: { Regions: { 'us-east-1': { Short: 'use1' } } },
  Resources: {
    NamedRole: { Type: 'AWS::IAM::Role', Properties: { RoleName: 'service-spapi-firehose-role' } },
    PathRole: { Type: 'AWS::IAM::Role', Properties: { Path: '/dpi/', RoleName: { 'Fn::Join': ['-', ['r', { Ref: 'Stage' }]] } } },
    GenRole: { Type: 'AWS::IAM::Role', Properties: {} },
    Secret: { Type: 'AWS::SecretsManager::Secret', Properties: { Name: 'dpi/token' } },
    Fn: { Type: 'AWS::Lambda::Function', Properties: {} },
    Queue: { Type: 'AWS::SQS::Queue' },
    Pipeline: { Type: 'Custom::DpiNotificationPipeline', Properties: {} },
    Pending: { Type: 'Custom::DpiSubscription', Properties: {} },
    Foreign: { Type: 'Custom::SomethingElse', Properties: {} },
  },
};

const ctx: ResolveContext = {
  env: { stackName: 'Shop', stackId: 'arn:aws:cloudformation:us-east-1:123456789012:stack/Shop/abc', account: '123456789012', region: 'us-east-1' },
  template,
  deployed: (id) => (id === 'Pipeline' ? { physicalId: '9001', attributes: { BucketName: 'spapi-bucket', Count: 3 } } : undefined),
  importValue: (name) => (name === 'SharedQueueArn' ? 'arn:aws:sqs:us-east-1:123456789012:shared' : undefined),
};

describe('resolveValue', () => {
  const cases: Array<[string, unknown, unknown]> = [
    ['a literal', 'x', 'x'],
    ['Arn of a queue (a stand-in)', { 'Fn::GetAtt': ['Queue', 'Arn'] }, 'arn:aws:sqs:us-east-1:123456789012:Shop-Queue'],
    ['Ref of a custom resource of another provider (a stand-in)', { Ref: 'Foreign' }, 'Shop-Foreign'],
    ['AWS::AccountId', { Ref: 'AWS::AccountId' }, '123456789012'],
    ['AWS::Region', { Ref: 'AWS::Region' }, 'us-east-1'],
    ['AWS::Partition', { Ref: 'AWS::Partition' }, 'aws'],
    ['AWS::StackName', { Ref: 'AWS::StackName' }, 'Shop'],
    ['AWS::StackId', { Ref: 'AWS::StackId' }, 'arn:aws:cloudformation:us-east-1:123456789012:stack/Shop/abc'],
    ['AWS::URLSuffix', { Ref: 'AWS::URLSuffix' }, 'amazonaws.com'],
    ['AWS::NoValue removes a key', { a: 1, b: { Ref: 'AWS::NoValue' } }, { a: 1 }],
    ['a parameter default', { Ref: 'Stage' }, 'prod'],
    ['Fn::Join', { 'Fn::Join': [':', ['a', { Ref: 'AWS::Region' }, 'b']] }, 'a:us-east-1:b'],
    ['Fn::Split', { 'Fn::Split': [',', 'a,b,c'] }, ['a', 'b', 'c']],
    ['Fn::Select over Fn::Split', { 'Fn::Select': [1, { 'Fn::Split': ['/', 'x/y/z'] }] }, 'y'],
    ['Fn::Select with a string index', { 'Fn::Select': ['2', ['a', 'b', 'c']] }, 'c'],
    ['Fn::Sub with pseudo parameters', { 'Fn::Sub': 'arn:${AWS::Partition}:s3:::b-${AWS::AccountId}' }, 'arn:aws:s3:::b-123456789012'],
    ['Fn::Sub with variables', { 'Fn::Sub': ['${A}-${B}', { A: 'x', B: { Ref: 'Stage' } }] }, 'x-prod'],
    ['Fn::Sub with a literal ${!x}', { 'Fn::Sub': '${!Literal}-${AWS::Region}' }, '${Literal}-us-east-1'],
    ['Fn::Sub with Resource.Attr', { 'Fn::Sub': 's3://${Pipeline.BucketName}/' }, 's3://spapi-bucket/'],
    ['Fn::FindInMap', { 'Fn::FindInMap': ['Regions', { Ref: 'AWS::Region' }, 'Short'] }, 'use1'],
    ['Fn::Base64', { 'Fn::Base64': 'hi' }, 'aGk='],
    ['Fn::If true branch', { 'Fn::If': ['IsProd', 'p', 'np'] }, 'p'],
    ['Fn::If false branch', { 'Fn::If': ['NotProd', 'p', 'np'] }, 'np'],
    ['nested conditions', { 'Fn::If': ['Both', 'yes', 'no'] }, 'yes'],
    ['Fn::ImportValue', { 'Fn::ImportValue': 'SharedQueueArn' }, 'arn:aws:sqs:us-east-1:123456789012:shared'],
    ['Ref of a named role', { Ref: 'NamedRole' }, 'service-spapi-firehose-role'],
    ['Arn of a named role', { 'Fn::GetAtt': ['NamedRole', 'Arn'] }, 'arn:aws:iam::123456789012:role/service-spapi-firehose-role'],
    ['Arn of a role with a path and an intrinsic name', { 'Fn::GetAtt': ['PathRole', 'Arn'] }, 'arn:aws:iam::123456789012:role/dpi/r-prod'],
    ['Arn of a role with a generated name', { 'Fn::GetAtt': 'GenRole.Arn' }, 'arn:aws:iam::123456789012:role/Shop-GenRole'],
    ['Ref of a secret', { Ref: 'Secret' }, expect.stringMatching(/^arn:aws:secretsmanager:us-east-1:123456789012:secret:dpi\/token-[A-Za-z]{6}$/)],
    ['Arn of a function', { 'Fn::GetAtt': ['Fn', 'Arn'] }, 'arn:aws:lambda:us-east-1:123456789012:function:Shop-Fn'],
    ['Ref of a deployed custom resource', { Ref: 'Pipeline' }, '9001'],
    ['an attribute of a deployed custom resource', { 'Fn::GetAtt': ['Pipeline', 'BucketName'] }, 'spapi-bucket'],
    ['lists and objects recursively', { l: [{ Ref: 'AWS::Region' }, 2], o: { k: { Ref: 'Stage' } } }, { l: ['us-east-1', 2], o: { k: 'prod' } }],
  ];
  test.each(cases)('%s', (_name, input, expected) => {
    expect(resolveValue(input, 'Res', ctx)).toEqual(expected);
  });

  const failures: Array<[string, unknown, RegExp]> = [
    ['an unknown logical ID', { Ref: 'Nope' }, /^Shop\/Res: Ref Nope: no resource or parameter named 'Nope'/],
    ['an unknown attribute target', { 'Fn::GetAtt': ['Nope', 'Arn'] }, /^Shop\/Res: Fn::GetAtt Nope\.Arn: no resource/],
    ['a custom resource not deployed yet', { 'Fn::GetAtt': ['Pending', 'SubscriptionId'] }, /Pending \(Custom::DpiSubscription\) has not been deployed/],
    ['a missing attribute in Data', { 'Fn::GetAtt': ['Pipeline', 'Nope'] }, /Vendor response doesn't contain Nope attribute/],
    ['a parameter without default', { Ref: 'NoDefault' }, /parameter has no default value/],
    ['an SSM parameter', { Ref: 'Ssm' }, /SSM parameter values are not available locally/],
    ['an unknown pseudo parameter', { Ref: 'AWS::Nope' }, /unknown pseudo parameter AWS::Nope/],
    ['an unsupported function', { 'Fn::Cidr': ['10.0.0.0/16', 2, 8] }, /unsupported intrinsic function Fn::Cidr/],
    ['Fn::Select out of range', { 'Fn::Select': [5, ['a']] }, /out of range/],
    ['an unknown import', { 'Fn::ImportValue': 'Nope' }, /Fn::ImportValue 'Nope': no stack deployed in this run exports that name/],
    ['Fn::Join of a non-string', { 'Fn::Join': ['', [{ a: 1 }]] }, /must resolve to a string/],
  ];
  test.each(failures)('fails on %s', (_name, input, message) => {
    expect(() => resolveValue(input, 'Res', ctx)).toThrow(message);
  });

  test('placeholders stand in for custom resources not deployed yet (validation mode)', () => {
    expect(resolveValue({ 'Fn::GetAtt': ['Pending', 'SubscriptionId'] }, 'Res', { ...ctx, placeholders: true })).toBe('<<deploy-time:Pending.SubscriptionId>>');
  });

  test('partition and URL suffix follow the region', () => {
    const cn = { ...ctx, env: { ...ctx.env, region: 'cn-north-1' } };
    expect(resolveValue({ 'Fn::Sub': '${AWS::Partition} ${AWS::URLSuffix}' }, 'Res', cn)).toBe('aws-cn amazonaws.com.cn');
  });
});

describe('stringifyScalars (as CloudFormation delivers properties)', () => {
  test.each<[unknown, unknown]>([
    [5, '5'],
    [1.5, '1.5'],
    [true, 'true'],
    [false, 'false'],
    ['s', 's'],
    [[1, 'a', false], ['1', 'a', 'false']],
    [{ a: 1, b: { c: true }, d: null }, { a: '1', b: { c: 'true' } }],
  ])('%j -> %j', (input, expected) => {
    expect(stringifyScalars(input)).toEqual(expected);
  });
});

describe('referencedResources', () => {
  test('finds Ref, Fn::GetAtt (both forms) and Fn::Sub references, not pseudo parameters or variables', () => {
    const refs = referencedResources({
      a: { Ref: 'NamedRole' },
      b: { 'Fn::GetAtt': ['Secret', 'Id'] },
      c: { 'Fn::GetAtt': 'Fn.Arn' },
      d: { 'Fn::Sub': ['${Pipeline.BucketName}/${AWS::Region}/${Var}/${!Lit}', { Var: { Ref: 'Queue' } }] },
      e: { Ref: 'AWS::AccountId' },
      f: { Ref: 'Stage' },
    }, template);
    expect([...refs].sort()).toEqual(['Fn', 'NamedRole', 'Pipeline', 'Queue', 'Secret']);
  });
});

describe('generatedName', () => {
  test('stack-logicalId when it fits, truncated with a stable hash otherwise', () => {
    expect(generatedName('Shop', 'Role1', 64)).toBe('Shop-Role1');
    const long = generatedName('MarketplaceDataStackWithAVeryLongName', 'PipelineRolesManagementRole7A0F55C9Extra', 64);
    expect(long.length).toBeLessThanOrEqual(64);
    expect(long).toBe(generatedName('MarketplaceDataStackWithAVeryLongName', 'PipelineRolesManagementRole7A0F55C9Extra', 64));
    expect(long).toMatch(/-[A-Z0-9]{12}$/);
  });
});

describe('roleTrustsService', () => {
  const role = (statement: object): any => ({ Type: 'AWS::IAM::Role', Properties: { AssumeRolePolicyDocument: { Statement: [statement] } } });
  test('an AWS account principal trusts the service, with or without sts:ExternalId; a service principal does not', () => {
    expect(roleTrustsService(role({ Effect: 'Allow', Action: 'sts:AssumeRole', Principal: { AWS: 'arn:aws:iam::111122223333:root' } }))).toBe(true);
    expect(roleTrustsService(role({
      Effect: 'Allow', Action: 'sts:AssumeRole', Principal: { AWS: 'arn:aws:iam::111122223333:root' }, Condition: { StringEquals: { 'sts:ExternalId': 'x' } },
    }))).toBe(true);
    expect(roleTrustsService(role({ Effect: 'Allow', Action: 'sts:AssumeRole', Principal: { Service: 'lambda.amazonaws.com' } }))).toBe(false);
    expect(roleTrustsService(role({ Effect: 'Deny', Action: 'sts:AssumeRole', Principal: { AWS: '*' } }))).toBe(false);
  });
});
