/**
 * Stand-in physical IDs and attributes of the resources `dpi local-deploy` does not deploy (everything but the
 * `Custom::Dpi*` resources): what CloudFormation would hand on for a `Ref` or an `Fn::GetAtt`, made up
 * deterministically from the stack's account, region, stack name and the resource's logical ID (or the name the
 * template gives it), so that the same app resolves to the same values on every run.
 *
 * `RESOURCE_IDS` is the table of the common types; any other type resolves through the general fallback
 * (`fallbackIdentity`): `Ref` a generated name, `Arn` an ARN in the service namespace of the type
 * (`AWS::<Service>::<Kind>`), any other attribute a deterministic placeholder.
 */
import { createHash } from 'node:crypto';

/** What a stand-in needs to know about the stack and the resource. */
export interface FakeResourceEnv {
  readonly partition: string;
  readonly region: string;
  readonly account: string;
  readonly urlSuffix: string;
  readonly stackName: string;
  readonly logicalId: string;
  readonly type: string;
}

/** The resolved value of another property of the resource (e.g. a role's `Path`), or undefined when it has none. */
export type PropertyOf = (name: string) => string | undefined;

/** Computes a value from the resource's name or ID. */
export type FakeValue = (name: string, env: FakeResourceEnv, prop: PropertyOf) => string;

/** How one resource type is handed on. */
export interface FakeIdentity {
  /** Property holding the name the template gives the resource (resolved by the caller when present). */
  readonly nameProperty?: string;
  /** Longest name CloudFormation generates for the type. @default 128 */
  readonly maxLength?: number;
  /** Generated names in lower case (S3 buckets). @default false */
  readonly lowerCase?: boolean;
  /** A generated ID instead of a name when the template gives none (e.g. a KMS key ID). */
  readonly generatedId?: (env: FakeResourceEnv) => string;
  /** What `Ref` returns. */
  readonly ref: FakeValue;
  /** Attributes by name (what `Fn::GetAtt X.<name>` returns); others resolve to a placeholder. */
  readonly attributes?: Readonly<Record<string, FakeValue>>;
}

/** A deterministic string of `length` characters of `alphabet` made from `text`. */
export function fakeHash(text: string, length: number, alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789'): string {
  const digest = createHash('sha256').update(text).digest();
  let out = '';
  for (let i = 0; i < length; i++) out += alphabet[digest[i % digest.length] % alphabet.length];
  return out;
}

const HEX = '0123456789abcdef';
const seed = (e: FakeResourceEnv, what = ''): string => `${e.account}/${e.region}/${e.stackName}/${e.logicalId}${what}`;
/** A UUID-shaped deterministic ID (KMS key IDs, subscription IDs). */
const uuidOf = (e: FakeResourceEnv, what = ''): string => {
  const h = fakeHash(seed(e, what), 32, HEX);
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
};
/** An EC2-style ID: `<prefix>-<17 hex>`. */
const ec2Id = (prefix: string) => (e: FakeResourceEnv): string => `${prefix}-${fakeHash(seed(e), 17, HEX)}`;
/** `arn:<partition>:<service>:<region>:<account>:<resource>`. */
const arn = (service: string, resource: (name: string, e: FakeResourceEnv) => string, global = false) =>
  (name: string, e: FakeResourceEnv): string => `arn:${e.partition}:${service}:${global ? '' : e.region}:${e.account}:${resource(name, e)}`;
const same = (name: string): string => name;

const LETTERS = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ';
const secretArn = arn('secretsmanager', (name, e) => `secret:${name}-${fakeHash(`${e.stackName}/${e.logicalId}`, 6, LETTERS)}`);
const stateMachineArn = arn('states', (name) => `stateMachine:${name}`);

/** The common resource types (`Ref` and attributes as CloudFormation documents them). */
export const RESOURCE_IDS: Readonly<Record<string, FakeIdentity>> = {
  // The kinds custom resources use most (a provider's functions, the pipeline roles, the refresh-token secret).
  'AWS::IAM::Role': {
    nameProperty: 'RoleName',
    maxLength: 64,
    ref: same,
    attributes: {
      Arn: (name, e, prop) => `arn:${e.partition}:iam::${e.account}:role${prop('Path') ?? '/'}${name}`,
      RoleId: (_name, e) => `AROA${fakeHash(`${e.stackName}/${e.logicalId}`, 17)}`,
    },
  },
  'AWS::SecretsManager::Secret': { nameProperty: 'Name', maxLength: 256, ref: secretArn, attributes: { Id: secretArn } },
  'AWS::Lambda::Function': { nameProperty: 'FunctionName', maxLength: 64, ref: same, attributes: { Arn: arn('lambda', (name) => `function:${name}`) } },
  'AWS::StepFunctions::StateMachine': {
    nameProperty: 'StateMachineName',
    maxLength: 80,
    ref: stateMachineArn,
    attributes: { Arn: stateMachineArn, Name: same },
  },
  'AWS::Logs::LogGroup': {
    nameProperty: 'LogGroupName',
    maxLength: 512,
    ref: same,
    attributes: { Arn: arn('logs', (name) => `log-group:${name}:*`) },
  },
  'AWS::SNS::Topic': {
    nameProperty: 'TopicName',
    maxLength: 256,
    ref: arn('sns', same),
    attributes: { TopicArn: arn('sns', same), TopicName: same },
  },
  'AWS::SNS::Subscription': {
    generatedId: (e) => uuidOf(e),
    ref: arn('sns', (id, e) => `${e.stackName}-subscription:${id}`),
  },
  'AWS::SQS::Queue': {
    nameProperty: 'QueueName',
    maxLength: 80,
    ref: (name, e) => `https://sqs.${e.region}.${e.urlSuffix}/${e.account}/${name}`,
    attributes: {
      Arn: arn('sqs', same),
      QueueName: same,
      QueueUrl: (name, e) => `https://sqs.${e.region}.${e.urlSuffix}/${e.account}/${name}`,
    },
  },
  'AWS::S3::Bucket': {
    nameProperty: 'BucketName',
    maxLength: 63,
    lowerCase: true,
    ref: same,
    attributes: {
      Arn: (name, e) => `arn:${e.partition}:s3:::${name}`,
      DomainName: (name) => `${name}.s3.amazonaws.com`,
      DualStackDomainName: (name, e) => `${name}.s3.dualstack.${e.region}.amazonaws.com`,
      RegionalDomainName: (name, e) => `${name}.s3.${e.region}.amazonaws.com`,
      WebsiteURL: (name, e) => `http://${name}.s3-website-${e.region}.amazonaws.com`,
    },
  },
  'AWS::KMS::Key': {
    generatedId: (e) => uuidOf(e),
    ref: same,
    attributes: { Arn: arn('kms', (id) => `key/${id}`), KeyId: same },
  },
  'AWS::KMS::Alias': { nameProperty: 'AliasName', ref: same },
  'AWS::CloudWatch::Alarm': {
    nameProperty: 'AlarmName',
    maxLength: 255,
    ref: same,
    attributes: { Arn: arn('cloudwatch', (name) => `alarm:${name}`) },
  },
  'AWS::CloudWatch::CompositeAlarm': {
    nameProperty: 'AlarmName',
    maxLength: 255,
    ref: same,
    attributes: { Arn: arn('cloudwatch', (name) => `alarm:${name}`) },
  },
  'AWS::CloudWatch::Dashboard': { nameProperty: 'DashboardName', ref: same },
  'AWS::Events::Rule': {
    nameProperty: 'Name',
    maxLength: 64,
    ref: same,
    attributes: { Arn: arn('events', (name) => `rule/${name}`) },
  },
  'AWS::Events::EventBus': {
    nameProperty: 'Name',
    maxLength: 256,
    ref: same,
    attributes: { Arn: arn('events', (name) => `event-bus/${name}`), Name: same },
  },
  'AWS::Scheduler::Schedule': {
    nameProperty: 'Name',
    maxLength: 64,
    ref: same,
    attributes: { Arn: arn('scheduler', (name) => `schedule/default/${name}`) },
  },
  'AWS::DynamoDB::Table': {
    nameProperty: 'TableName',
    maxLength: 255,
    ref: same,
    attributes: {
      Arn: arn('dynamodb', (name) => `table/${name}`),
      StreamArn: arn('dynamodb', (name) => `table/${name}/stream/1970-01-01T00:00:00.000`),
    },
  },
  'AWS::Kinesis::Stream': {
    nameProperty: 'Name',
    ref: same,
    attributes: { Arn: arn('kinesis', (name) => `stream/${name}`) },
  },
  'AWS::KinesisFirehose::DeliveryStream': {
    nameProperty: 'DeliveryStreamName',
    maxLength: 64,
    ref: same,
    attributes: { Arn: arn('firehose', (name) => `deliverystream/${name}`) },
  },
  'AWS::SSM::Parameter': { nameProperty: 'Name', ref: same, attributes: { Type: () => 'String', Value: (name) => `local-value-of-${name}` } },
  'AWS::IAM::ManagedPolicy': {
    nameProperty: 'ManagedPolicyName',
    ref: arn('iam', (name) => `policy/${name}`, true),
    attributes: { PolicyArn: arn('iam', (name) => `policy/${name}`, true) },
  },
  'AWS::IAM::Policy': { generatedId: (e) => `${e.stackName.slice(0, 5)}-${fakeHash(seed(e), 12)}`, ref: same },
  'AWS::IAM::User': {
    nameProperty: 'UserName',
    maxLength: 64,
    ref: same,
    attributes: { Arn: arn('iam', (name) => `user/${name}`, true) },
  },
  'AWS::IAM::InstanceProfile': {
    nameProperty: 'InstanceProfileName',
    ref: same,
    attributes: { Arn: arn('iam', (name) => `instance-profile/${name}`, true) },
  },
  'AWS::Lambda::Permission': { generatedId: (e) => `${e.stackName}-${e.logicalId}-${fakeHash(seed(e), 12)}`, ref: same },
  'AWS::Lambda::Alias': { nameProperty: 'Name', ref: arn('lambda', (name, e) => `function:${e.stackName}-${e.logicalId}:${name}`) },
  'AWS::Lambda::LayerVersion': {
    nameProperty: 'LayerName',
    ref: arn('lambda', (name) => `layer:${name}:1`),
  },
  'AWS::Lambda::EventSourceMapping': { generatedId: (e) => uuidOf(e), ref: same },
  'AWS::ApiGateway::RestApi': { generatedId: (e) => fakeHash(seed(e), 10, 'abcdefghijklmnopqrstuvwxyz0123456789'), ref: same },
  'AWS::EC2::VPC': { generatedId: ec2Id('vpc'), ref: same },
  'AWS::EC2::Subnet': { generatedId: ec2Id('subnet'), ref: same },
  'AWS::EC2::SecurityGroup': { generatedId: ec2Id('sg'), ref: same, attributes: { GroupId: same } },
  'AWS::CloudFormation::WaitConditionHandle': { generatedId: (e) => `https://cloudformation-waitcondition-${e.region}.s3.amazonaws.com/${e.logicalId}`, ref: same },
};

/**
 * The general fallback for a type the table does not list: `Ref` a generated name, `Arn` an ARN in the service
 * namespace of the type (`AWS::Foo::Bar` -> `arn:<partition>:foo:<region>:<account>:bar/<name>`).
 */
export function fallbackIdentity(type: string): FakeIdentity {
  const parts = type.split('::');
  const service = parts.length === 3 && parts[0] === 'AWS' ? parts[1].toLowerCase() : 'cloudformation';
  const kind = (parts.length === 3 ? parts[2] : 'resource').toLowerCase();
  const arnOf = arn(service, (name) => `${kind}/${name}`);
  return { ref: same, attributes: { Arn: arnOf } };
}

/** The identity of a type: its row of the table, else the fallback. */
export function identityOf(type: string): FakeIdentity {
  return RESOURCE_IDS[type] ?? fallbackIdentity(type);
}

/** A deterministic placeholder for an attribute the table does not know (`<stack>-<logicalId>.<attribute>-<hash>`). */
export function placeholderAttribute(env: FakeResourceEnv, attribute: string): string {
  return `${env.stackName}-${env.logicalId}.${attribute}-${fakeHash(seed(env, `.${attribute}`), 8).toLowerCase()}`;
}
