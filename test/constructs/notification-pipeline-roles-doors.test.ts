/**
 * The cross-account doors of NotificationPipelineRoles that a condition can close are closed: one test per door, on
 * the synthesized template (issue 31, item 2).
 */
import * as fs from 'fs';
import * as path from 'path';
import { App, Annotations as CoreAnnotations, Stack } from 'aws-cdk-lib';
import { Annotations, Match, Template } from 'aws-cdk-lib/assertions';
import { NotificationPipelineRoles, NotificationPipelineRolesProps } from '../../src';

interface Statement {
  readonly Sid?: string;
  readonly Effect: string;
  readonly Action: string | string[];
  readonly Resource: unknown;
  readonly Principal?: unknown;
  readonly Condition?: Record<string, Record<string, unknown>>;
}

const ACCT = '123456789012';
const asArray = <T>(v: T | T[]): T[] => (Array.isArray(v) ? v : [v]);
const join = (tail: string) => ({ 'Fn::Join': ['', ['arn:', { Ref: 'AWS::Partition' }, tail]] });

function synth(props: Partial<NotificationPipelineRolesProps> = {}, env: { account?: string; region?: string } | 'agnostic' = { account: ACCT, region: 'us-east-1' }) {
  const stack = new Stack(new App(), 'RolesStack', env === 'agnostic' ? {} : { env });
  const roles = new NotificationPipelineRoles(stack, 'Roles', { serviceAccountId: '111122223333', externalId: 'ext-123', ...props });
  return { stack, roles, template: Template.fromStack(stack) };
}

function statementsOf(template: Template, logicalIdPrefix: string): Statement[] {
  const found = template.findResources('AWS::IAM::Role');
  const id = Object.keys(found).find((k) => k.startsWith(logicalIdPrefix))!;
  expect(id).toBeDefined();
  return (found[id].Properties.Policies as Array<{ PolicyDocument: { Statement: Statement[] } }>).flatMap((p) => p.PolicyDocument.Statement);
}

function trustOf(template: Template): Statement[] {
  const found = template.findResources('AWS::IAM::Role');
  const id = Object.keys(found).find((k) => k.startsWith('RolesManagementRole'))!;
  return found[id].Properties.AssumeRolePolicyDocument.Statement;
}

const { template } = synth();
const management = statementsOf(template, 'RolesManagementRole');
const delivery = statementsOf(template, 'RolesDeliveryRole');
const allowed = (statements: Statement[]) => statements.filter((s) => s.Effect === 'Allow');
const actionsOf = (s: Statement) => asArray(s.Action);

describe('NotificationPipelineRoles: cross-account doors', () => {
  test('s3:ResourceAccount: every S3 statement of both roles is limited to buckets of this account', () => {
    const s3 = [...allowed(management), ...allowed(delivery)].filter((s) => actionsOf(s).some((a) => a.startsWith('s3:')));
    expect(s3.map((s) => s.Sid).sort()).toEqual(['SharedBucket', 'SharedBucket', 'SharedBucketObjects', 'SharedBucketSetupCheck']);
    for (const s of s3) {
      expect(s.Condition).toEqual({ StringEquals: { 's3:ResourceAccount': ACCT } });
    }
    // The object writes are among the conditioned statements.
    const writes = s3.filter((s) => actionsOf(s).includes('s3:PutObject'));
    expect(writes.map((s) => s.Sid).sort()).toEqual(['SharedBucketObjects', 'SharedBucketSetupCheck']);
    expect(writes.every((s) => s.Condition !== undefined)).toBe(true);
  });

  test('s3:ResourceAccount follows the stack\'s account (a token in an environment-agnostic stack)', () => {
    const { template: agnostic } = synth({ regions: ['us-east-1'] }, 'agnostic');
    const bucket = statementsOf(agnostic, 'RolesDeliveryRole').find((s) => s.Sid === 'SharedBucketObjects')!;
    expect(bucket.Condition).toEqual({ StringEquals: { 's3:ResourceAccount': { Ref: 'AWS::AccountId' } } });
  });

  test('no bucket policy or public-access-block call: nothing the service documents needs them', () => {
    const all = [...management, ...delivery, ...statementsOf(template, 'RolesEventBusRole')].flatMap(actionsOf);
    for (const a of ['s3:PutBucketPolicy', 's3:DeleteBucketPolicy', 's3:PutBucketPublicAccessBlock', 's3:PutBucketAcl', 's3:PutObjectAcl', 's3:PutAccountPublicAccessBlock']) {
      expect(all).not.toContain(a);
    }
  });

  test('event-bus rules: only on the service\'s partner event bus, never the default bus or any other bus', () => {
    const rules = allowed(management).filter((s) => actionsOf(s).some((a) => /^events:(PutRule|DeleteRule|DescribeRule|EnableRule|DisableRule|PutTargets|RemoveTargets|ListTargetsByRule|TagResource)$/.test(a)));
    expect(rules.map((s) => s.Sid)).toEqual(['PartnerBusRules', 'PartnerBusTargets']);
    for (const s of rules) {
      expect(asArray(s.Resource)).toEqual([join(`:events:us-east-1:${ACCT}:rule/aws.partner/sellingpartnerapi.amazon/*/spapi-*`)]);
    }
  });

  test('events:PutTargets: every target must be a delivery stream or queue of the prefix in this account (events:TargetArn)', () => {
    const putTargets = allowed(management).filter((s) => actionsOf(s).includes('events:PutTargets'));
    expect(putTargets).toHaveLength(1);
    expect(putTargets[0].Action).toBe('events:PutTargets');
    expect(putTargets[0].Condition).toEqual({
      'ForAllValues:ArnLike': {
        'events:TargetArn': [join(`:firehose:us-east-1:${ACCT}:deliverystream/spapi-*`), join(`:sqs:us-east-1:${ACCT}:spapi-*`)],
      },
      // ForAllValues holds for a request without the key: the key must be present.
      'Null': { 'events:TargetArn': 'false' },
    });
  });

  test('iam:PassRole: pipe roles only under the pipe role path, each PassRole only to the service that needs it', () => {
    const pass = allowed(management).filter((s) => actionsOf(s).includes('iam:PassRole'));
    expect(pass.map((s) => s.Action)).toEqual(['iam:PassRole', 'iam:PassRole', 'iam:PassRole']);
    expect(pass.map((s) => s.Condition)).toEqual([
      { StringEquals: { 'iam:PassedToService': 'pipes.amazonaws.com' } },
      { StringEquals: { 'iam:PassedToService': 'firehose.amazonaws.com' } },
      { StringEquals: { 'iam:PassedToService': 'events.amazonaws.com' } },
    ]);
    expect(pass[0].Resource).toEqual(join(`:iam::${ACCT}:role/spapi-pipe-roles/spapi-*`));
    // No IAM statement names a role at the root path by prefix (e.g. a role of yours called spapi-admin).
    const iamResources = allowed(management).filter((s) => actionsOf(s).some((a) => a.startsWith('iam:'))).flatMap((s) => asArray(s.Resource));
    expect(JSON.stringify(iamResources)).not.toContain(':role/spapi-*');
  });

  test('pipeRolePath: a custom path narrows create, change and pass; an invalid path is a synth error naming path and value', () => {
    const { template: custom } = synth({ pipeRolePath: '/dpi/pipes/' });
    const statements = statementsOf(custom, 'RolesManagementRole');
    for (const sid of ['PipeRolesWithBoundary', 'PipeRoles', 'PassPipeRole']) {
      expect(statements.find((s) => s.Sid === sid)!.Resource).toEqual(join(`:iam::${ACCT}:role/dpi/pipes/spapi-*`));
    }
    for (const bad of ['/', 'pipes/', '/pipes', '/pi*pes/', '/a//b/']) {
      expect(() => synth({ pipeRolePath: bad })).toThrow(`RolesStack/Roles: pipeRolePath '${bad}' is not accepted`);
    }
  });

  test('regions: a stack region the service does not accept is a synth error naming the construct path and the value', () => {
    expect(() => synth({}, { account: ACCT, region: 'eu-west-1' }))
      .toThrow("RolesStack/Roles: region 'eu-west-1' (the stack's region) is not an accepted deployment region; deploy the stack to one of us-east-1, us-east-2, us-west-1, us-west-2, af-south-1, ap-east-1, or set regions");
  });

  test('regions: an entry that is not accepted (a wildcard included) is a synth error naming it', () => {
    expect(() => synth({ regions: ['us-east-1', 'eu-central-1'] })).toThrow("RolesStack/Roles: regions 'eu-central-1' is not an accepted deployment region");
    expect(() => synth({ regions: ['*'] })).toThrow("RolesStack/Roles: regions '*' is not an accepted deployment region");
    expect(() => synth({ regions: ['us-*'] })).toThrow("RolesStack/Roles: regions 'us-*' is not an accepted deployment region");
  });

  test('regions: accepted regions narrow every regional ARN, and no ARN has a wildcard region', () => {
    const { template: two } = synth({ regions: ['us-west-2', 'ap-east-1', 'us-west-2'] });
    const json = JSON.stringify(two.toJSON());
    expect(json).toContain(`:sqs:us-west-2:${ACCT}:spapi-*`);
    expect(json).toContain(`:sqs:ap-east-1:${ACCT}:spapi-*`);
    expect(json).not.toContain(`:sqs:us-east-1:${ACCT}`);
    expect(json).not.toMatch(/:(sqs|firehose|events|pipes|logs):\*:/);
    // Duplicates are listed once.
    const queues = statementsOf(two, 'RolesManagementRole').find((s) => s.Sid === 'Queues')!;
    expect(asArray(queues.Resource)).toHaveLength(2);
    expect(Object.keys(two.toJSON().Rules ?? {}).filter((k) => k.includes('AcceptedDeploymentRegion'))).toEqual([]);
  });

  test('regions: a token region stays the deployment region in the ARNs and a CloudFormation rule checks it at deploy time', () => {
    const { template: agnostic } = synth({}, 'agnostic');
    const queues = statementsOf(agnostic, 'RolesManagementRole').find((s) => s.Sid === 'Queues')!;
    expect(queues.Resource).toEqual({ 'Fn::Join': ['', ['arn:', { Ref: 'AWS::Partition' }, ':sqs:', { Ref: 'AWS::Region' }, ':', { Ref: 'AWS::AccountId' }, ':spapi-*']] });
    expect(JSON.stringify(agnostic.toJSON())).not.toMatch(/:(sqs|firehose|events|pipes|logs):\*:/);
    const rules = agnostic.toJSON().Rules as Record<string, { Assertions: unknown[] }>;
    const rule = rules[Object.keys(rules).find((k) => k.startsWith('RolesAcceptedDeploymentRegion'))!];
    expect(rule.Assertions).toEqual([{
      Assert: { 'Fn::Contains': [['us-east-1', 'us-east-2', 'us-west-1', 'us-west-2', 'af-south-1', 'ap-east-1'], { Ref: 'AWS::Region' }] },
      AssertDescription: 'RolesStack/Roles: the deployment region is not one the service accepts (us-east-1, us-east-2, us-west-1, us-west-2, af-south-1, ap-east-1)',
    }]);
  });
});

describe('NotificationPipelineRoles: the trust', () => {
  test('without externalId: a synth-time warning names the confused-deputy risk', () => {
    const { stack, template: t } = synth({ externalId: undefined });
    expect(trustOf(t)[0].Condition).toBeUndefined();
    Annotations.fromStack(stack).hasWarning('/RolesStack/Roles', Match.stringLikeRegexp(
      'trusts the service\'s whole account 111122223333 without an sts:ExternalId condition: another customer of the service .*confused deputy'));
  });

  test('the warning can be acknowledged by its ID once the risk is accepted', () => {
    const stack = new Stack(new App(), 'RolesStack', { env: { account: ACCT, region: 'us-east-1' } });
    const roles = new NotificationPipelineRoles(stack, 'Roles', { serviceAccountId: '111122223333' });
    Annotations.fromStack(stack).hasWarning('/RolesStack/Roles', Match.stringLikeRegexp('confused deputy'));
    CoreAnnotations.of(roles).acknowledgeWarning('data-pipeline-integration-cdk:roles-without-external-id', 'no external ID from the service yet');
    expect(Annotations.fromStack(stack).findWarning('*', Match.anyValue())).toEqual([]);
  });

  test('with externalId: sts:ExternalId is required and there is no warning', () => {
    const { stack, template: t } = synth({ externalId: 'ext-123' });
    expect(trustOf(t)[0].Condition).toEqual({ StringEquals: { 'sts:ExternalId': 'ext-123' } });
    expect(Annotations.fromStack(stack).findWarning('*', Match.anyValue())).toEqual([]);
  });

  test('serviceRoleArn: only that principal of the service\'s account (aws:PrincipalArn), with the external ID', () => {
    const { template: t } = synth({ serviceRoleArn: 'arn:aws:iam::111122223333:role/service/pipeline-provisioner' });
    const trust = trustOf(t);
    expect(trust).toHaveLength(1);
    expect(trust[0].Principal).toEqual({ AWS: join(':iam::111122223333:root') });
    expect(trust[0].Condition).toEqual({
      StringEquals: { 'sts:ExternalId': 'ext-123' },
      ArnEquals: { 'aws:PrincipalArn': 'arn:aws:iam::111122223333:role/service/pipeline-provisioner' },
    });
  });

  test('serviceRoleArn: not a role ARN, or a role of another account, is a synth error naming path and value', () => {
    expect(() => synth({ serviceRoleArn: 'pipeline-provisioner' }))
      .toThrow("RolesStack/Roles: serviceRoleArn 'pipeline-provisioner' is not an IAM role ARN");
    expect(() => synth({ serviceRoleArn: 'arn:aws:iam::210987654321:role/provisioner' }))
      .toThrow("RolesStack/Roles: serviceRoleArn 'arn:aws:iam::210987654321:role/provisioner' is not a role of the service's account 111122223333");
  });

  test('the README\'s security section states the confused-deputy risk of a trust without sts:ExternalId', () => {
    const readme = fs.readFileSync(path.join(__dirname, '..', '..', 'README.md'), 'utf8');
    const section = readme.split(/^## /m).find((s) => s.startsWith('Security'));
    expect(section).toBeDefined();
    expect(section).toMatch(/confused deputy/i);
    expect(section).toContain('sts:ExternalId');
    expect(section).toContain('externalId');
  });
});
