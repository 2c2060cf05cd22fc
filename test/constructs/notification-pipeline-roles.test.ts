import { App, Stack } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import * as iam from 'aws-cdk-lib/aws-iam';
import { fixture, roles, sellerPipeline } from './helpers';
import { AccountType, NotificationPipeline, NotificationPipelineRoles, NotificationType } from '../../src';

type Statement = { Sid?: string; Effect?: string; Action: string | string[]; Resource: unknown; Condition?: Record<string, unknown> };

function inlineStatements(t: Template, logicalIdPrefix: string): Statement[] {
  const rolesFound = t.findResources('AWS::IAM::Role');
  const id = Object.keys(rolesFound).find((k) => k.startsWith(logicalIdPrefix))!;
  expect(id).toBeDefined();
  return (rolesFound[id].Properties.Policies as Array<{ PolicyDocument: { Statement: Statement[] } }>)
    .flatMap((p) => p.PolicyDocument.Statement);
}

function roleOf(t: Template, logicalIdPrefix: string) {
  const found = t.findResources('AWS::IAM::Role');
  return found[Object.keys(found).find((k) => k.startsWith(logicalIdPrefix))!];
}

const asArray = <T>(v: T | T[]): T[] => (Array.isArray(v) ? v : [v]);

const boundaryIdOf = (t: Template): string => Object.keys(t.findResources('AWS::IAM::ManagedPolicy'))[0];

describe('NotificationPipelineRoles', () => {
  const app = new App();
  const stack = new Stack(app, 'RolesStack', { env: { account: '123456789012', region: 'us-east-1' } });
  const r = new NotificationPipelineRoles(stack, 'Roles', { serviceAccountId: '111122223333', externalId: 'ext-123' });
  const t = Template.fromStack(stack);

  test('management role: trusted only by the service account root, with sts:ExternalId', () => {
    const role = roleOf(t, 'RolesManagementRole');
    expect(role.Properties.AssumeRolePolicyDocument.Statement).toEqual([{
      Action: 'sts:AssumeRole',
      Effect: 'Allow',
      Principal: { AWS: { 'Fn::Join': ['', ['arn:', { Ref: 'AWS::Partition' }, ':iam::111122223333:root']] } },
      Condition: { StringEquals: { 'sts:ExternalId': 'ext-123' } },
    }]);
    expect(role.Properties.ManagedPolicyArns).toBeUndefined();
  });

  test('management policy: no wildcard action, every resource prefixed and account/region scoped', () => {
    const statements = inlineStatements(t, 'RolesManagementRole');
    const actions = statements.flatMap((s) => asArray(s.Action));
    expect(actions.filter((a) => a.includes('*'))).toEqual([]);
    for (const service of ['firehose:CreateDeliveryStream', 'sqs:CreateQueue', 'events:PutRule', 'events:PutTargets', 'pipes:CreatePipe', 's3:PutBucketNotification', 's3:GetBucketNotification', 'logs:CreateLogGroup', 'iam:PassRole',
      's3:CreateBucket', 'events:CreateEventBus', 'iam:CreateRole']) {
      expect(actions).toContain(service);
    }
    // Deny statements (tested below) may name every role of the account.
    for (const s of statements.filter((x) => x.Effect === 'Allow' && !(asArray(x.Action)[0] === 'iam:PassRole' && x.Sid !== 'PassPipeRole'))) {
      for (const res of asArray(s.Resource)) {
        const text = JSON.stringify(res);
        expect(text).not.toBe('"*"');
        if (s.Sid === 'PartnerEventBus') {
          expect(text).toMatch(/:event-bus\/aws\.partner\/sellingpartnerapi\.amazon\/\*"/);
        } else {
          expect(text).toMatch(/spapi-\*/);
        }
        if (text.includes(':iam::')) {
          expect(text).toContain(':iam::123456789012:role/spapi-pipe-roles/spapi-*');
        } else if (!text.includes(':s3:::')) {
          expect(text).toContain(':us-east-1:123456789012:');
        }
      }
    }
  });

  test('shared bucket: created and configured by the service; the only object it writes is the setup check', () => {
    const statements = inlineStatements(t, 'RolesManagementRole');
    const bucket = statements.find((s) => s.Sid === 'SharedBucket')!;
    expect(asArray(bucket.Action).sort()).toEqual([
      's3:CreateBucket', 's3:GetBucketLocation', 's3:GetBucketNotification', 's3:GetBucketPolicy', 's3:ListBucket',
      's3:PutBucketNotification', 's3:PutBucketOwnershipControls', 's3:PutBucketTagging', 's3:PutEncryptionConfiguration',
    ]);
    expect(bucket.Resource).toEqual({ 'Fn::Join': ['', ['arn:', { Ref: 'AWS::Partition' }, ':s3:::spapi-*']] });
    const objects = statements.filter((s) => asArray(s.Resource).some((res) => JSON.stringify(res).includes(':s3:::spapi-*/')));
    expect(objects).toEqual([expect.objectContaining({
      Sid: 'SharedBucketSetupCheck',
      Action: 's3:PutObject',
      Resource: { 'Fn::Join': ['', ['arn:', { Ref: 'AWS::Partition' }, ':s3:::spapi-*/*/_setup-check.json']] },
    })]);
  });

  test('partner event bus: create and describe only, in the pipeline region and account', () => {
    const bus = inlineStatements(t, 'RolesManagementRole').find((s) => s.Sid === 'PartnerEventBus')!;
    expect(bus.Action).toEqual(['events:CreateEventBus', 'events:DescribeEventBus']);
    expect(bus.Resource).toEqual({
      'Fn::Join': ['', ['arn:', { Ref: 'AWS::Partition' }, ':events:us-east-1:123456789012:event-bus/aws.partner/sellingpartnerapi.amazon/*']],
    });
  });

  test('pipe roles: created under the path and prefix only with the boundary, passed only to pipes', () => {
    const statements = inlineStatements(t, 'RolesManagementRole');
    const prefixed = { 'Fn::Join': ['', ['arn:', { Ref: 'AWS::Partition' }, ':iam::123456789012:role/spapi-pipe-roles/spapi-*']] };
    const boundaryArn = { 'Fn::Join': ['', ['arn:', { Ref: 'AWS::Partition' }, ':iam::123456789012:policy/spapi-pipe-role-boundary']] };
    const withBoundary = statements.find((s) => s.Sid === 'PipeRolesWithBoundary')!;
    expect(withBoundary).toEqual({
      Sid: 'PipeRolesWithBoundary',
      Effect: 'Allow',
      Action: ['iam:CreateRole', 'iam:PutRolePolicy', 'iam:DeleteRolePolicy'],
      Resource: prefixed,
      Condition: { StringEquals: { 'iam:PermissionsBoundary': boundaryArn } },
    });
    const pipeRoles = statements.find((s) => s.Sid === 'PipeRoles')!;
    expect(pipeRoles.Action).toEqual(['iam:DeleteRole', 'iam:GetRole', 'iam:TagRole']);
    expect(pipeRoles.Resource).toEqual(prefixed);
    expect(pipeRoles.Condition).toBeUndefined();
    // Creating a role or changing its inline policy is allowed only in the conditioned statement.
    const allowIam = statements.filter((s) => s.Effect === 'Allow' && asArray(s.Action).some((a) => a.startsWith('iam:')));
    expect(allowIam.map((s) => s.Sid)).toEqual(['PipeRolesWithBoundary', 'PipeRoles', 'PassPipeRole', 'PassDeliveryRole', 'PassEventBusRole']);
    const allowed = allowIam.flatMap((s) => asArray(s.Action));
    for (const a of ['iam:AttachRolePolicy', 'iam:UpdateAssumeRolePolicy', 'iam:CreatePolicy', 'iam:CreatePolicyVersion', 'iam:PutRolePermissionsBoundary', 'iam:DeleteRolePermissionsBoundary']) {
      expect(allowed).not.toContain(a);
    }
    expect(statements.find((s) => s.Sid === 'PassPipeRole')).toEqual(expect.objectContaining({
      Action: 'iam:PassRole',
      Resource: prefixed,
      Condition: { StringEquals: { 'iam:PassedToService': 'pipes.amazonaws.com' } },
    }));
  });

  test('deny statements: no boundary removal or change on any role, the boundary policy cannot be changed', () => {
    const statements = inlineStatements(t, 'RolesManagementRole');
    const denies = statements.filter((s) => s.Effect === 'Deny');
    expect(denies).toEqual([{
      Sid: 'DenyBoundaryChange',
      Effect: 'Deny',
      Action: ['iam:DeleteRolePermissionsBoundary', 'iam:PutRolePermissionsBoundary'],
      Resource: { 'Fn::Join': ['', ['arn:', { Ref: 'AWS::Partition' }, ':iam::123456789012:role/*']] },
    }, {
      Sid: 'DenyBoundaryPolicyChange',
      Effect: 'Deny',
      Action: ['iam:CreatePolicyVersion', 'iam:DeletePolicy', 'iam:DeletePolicyVersion', 'iam:SetDefaultPolicyVersion'],
      Resource: { 'Fn::Join': ['', ['arn:', { Ref: 'AWS::Partition' }, ':iam::123456789012:policy/spapi-pipe-role-boundary']] },
    }]);
    // The management role is created after the boundary its policy names.
    const role = roleOf(t, 'RolesManagementRole');
    const boundaryId = Object.keys(t.findResources('AWS::IAM::ManagedPolicy'))[0];
    expect(role.DependsOn).toContain(boundaryId);
  });

  test('pipe role boundary: fixed name, exactly what a pipe needs, narrowed by prefix, account and region', () => {
    const policies = t.findResources('AWS::IAM::ManagedPolicy');
    expect(Object.keys(policies)).toHaveLength(1);
    const policy = Object.values(policies)[0];
    expect(policy.Properties.ManagedPolicyName).toBe('spapi-pipe-role-boundary');
    const statements = policy.Properties.PolicyDocument.Statement as Statement[];
    expect(statements.every((s) => s.Effect === 'Allow' && s.Condition === undefined)).toBe(true);
    const actions = statements.flatMap((s) => asArray(s.Action));
    expect(actions.filter((a) => a.includes('*'))).toEqual([]);
    const join = (tail: string) => ({ 'Fn::Join': ['', ['arn:', { Ref: 'AWS::Partition' }, tail]] });
    expect(statements.map((s) => [s.Sid, s.Action, s.Resource])).toEqual([
      ['SourceQueues', ['sqs:ReceiveMessage', 'sqs:DeleteMessage', 'sqs:GetQueueAttributes'], join(':sqs:us-east-1:123456789012:spapi-*')],
      ['DeliveryStreams', ['firehose:PutRecord', 'firehose:PutRecordBatch'], join(':firehose:us-east-1:123456789012:deliverystream/spapi-*')],
      ['PipeLogs', ['logs:CreateLogStream', 'logs:PutLogEvents'], join(':logs:us-east-1:123456789012:log-group:/aws/vendedlogs/pipes/spapi-*')],
    ]);
    // Not attached to any role of the construct (the service attaches it to the roles it creates).
    expect(policy.Properties.Roles).toBeUndefined();
    expect(r.pipeRoleBoundaryArn).toEqual(expect.stringContaining(':iam::123456789012:policy/spapi-pipe-role-boundary'));
    expect(stack.resolve(r.pipeRoleBoundary.managedPolicyArn)).toEqual({ Ref: boundaryIdOf(t) });
  });

  test('pipe role boundary: custom prefix and one resource per region', () => {
    const app2 = new App();
    const stack2 = new Stack(app2, 'Custom', { env: { account: '123456789012', region: 'us-east-1' } });
    const r2 = new NotificationPipelineRoles(stack2, 'Roles', {
      serviceAccountId: '111122223333', externalId: 'ext-123', resourceNamePrefix: 'acme-', regions: ['us-east-1', 'af-south-1'],
    });
    const t2 = Template.fromStack(stack2);
    const policy = Object.values(t2.findResources('AWS::IAM::ManagedPolicy'))[0];
    expect(policy.Properties.ManagedPolicyName).toBe('acme-pipe-role-boundary');
    const queues = (policy.Properties.PolicyDocument.Statement as Statement[]).find((s) => s.Sid === 'SourceQueues')!;
    expect(JSON.stringify(queues.Resource)).toContain(':sqs:us-east-1:123456789012:acme-*');
    expect(JSON.stringify(queues.Resource)).toContain(':sqs:af-south-1:123456789012:acme-*');
    expect(stack2.resolve(r2.pipeRoleBoundaryArn)).toEqual({ 'Fn::Join': ['', ['arn:', { Ref: 'AWS::Partition' }, ':iam::123456789012:policy/acme-pipe-role-boundary']] });
    const create = inlineStatements(t2, 'RolesManagementRole').find((s) => s.Sid === 'PipeRolesWithBoundary')!;
    expect(create.Condition).toEqual({ StringEquals: { 'iam:PermissionsBoundary': stack2.resolve(r2.pipeRoleBoundaryArn) } });
  });

  test('iam:PassRole is limited to the pipe roles under their path and the two roles, each with iam:PassedToService', () => {
    const pass = inlineStatements(t, 'RolesManagementRole').filter((s) => asArray(s.Action).includes('iam:PassRole'));
    expect(pass).toHaveLength(3);
    expect(pass.map((s) => [JSON.stringify(s.Resource), s.Condition])).toEqual([
      [JSON.stringify({ 'Fn::Join': ['', ['arn:', { Ref: 'AWS::Partition' }, ':iam::123456789012:role/spapi-pipe-roles/spapi-*']] }), { StringEquals: { 'iam:PassedToService': 'pipes.amazonaws.com' } }],
      [JSON.stringify({ 'Fn::GetAtt': [Object.keys(t.findResources('AWS::IAM::Role')).find((k) => k.startsWith('RolesDeliveryRole')), 'Arn'] }), { StringEquals: { 'iam:PassedToService': 'firehose.amazonaws.com' } }],
      [JSON.stringify({ 'Fn::GetAtt': [Object.keys(t.findResources('AWS::IAM::Role')).find((k) => k.startsWith('RolesEventBusRole')), 'Arn'] }), { StringEquals: { 'iam:PassedToService': 'events.amazonaws.com' } }],
    ]);
  });

  test('delivery role has the fixed name and writes only to the shared bucket prefix', () => {
    t.hasResourceProperties('AWS::IAM::Role', {
      RoleName: 'service-spapi-firehose-role',
      AssumeRolePolicyDocument: { Statement: [Match.objectLike({ Principal: { Service: 'firehose.amazonaws.com' } })] },
    });
    const statements = inlineStatements(t, 'RolesDeliveryRole');
    expect(statements.flatMap((s) => asArray(s.Action))).toContain('s3:PutObject');
    for (const s of statements) {
      for (const res of asArray(s.Resource)) {
        expect(JSON.stringify(res)).toMatch(/spapi-\*/);
      }
    }
    expect(NotificationPipelineRoles.DELIVERY_ROLE_NAME).toBe('service-spapi-firehose-role');
  });

  test('event-bus role: trusted by events, PutRecord(Batch) on prefixed delivery streams', () => {
    const role = roleOf(t, 'RolesEventBusRole');
    expect(role.Properties.AssumeRolePolicyDocument.Statement[0].Principal).toEqual({ Service: 'events.amazonaws.com' });
    const statements = inlineStatements(t, 'RolesEventBusRole');
    expect(statements).toEqual([expect.objectContaining({
      Action: ['firehose:PutRecord', 'firehose:PutRecordBatch'],
      Resource: { 'Fn::Join': ['', ['arn:', { Ref: 'AWS::Partition' }, ':firehose:us-east-1:123456789012:deliverystream/spapi-*']] },
    })]);
  });

  test('attributes are role ARNs', () => {
    expect(stack.resolve(r.managementRoleArn)).toEqual({ 'Fn::GetAtt': [expect.stringMatching(/^RolesManagementRole/), 'Arn'] });
    expect(stack.resolve(r.eventBusRoleArn)).toEqual({ 'Fn::GetAtt': [expect.stringMatching(/^RolesEventBusRole/), 'Arn'] });
    expect(stack.resolve(r.deliveryRoleArn)).toEqual({ 'Fn::GetAtt': [expect.stringMatching(/^RolesDeliveryRole/), 'Arn'] });
  });

  test('custom prefixes and regions narrow the resources', () => {
    const a = new App();
    const s = new Stack(a, 'S', { env: { account: '123456789012', region: 'us-east-1' } });
    new NotificationPipelineRoles(s, 'R', {
      serviceAccountId: '111122223333', externalId: 'x-1', resourceNamePrefix: 'acme-', sharedBucketNamePrefix: 'acme-shared-', regions: ['us-east-1', 'us-west-2'],
    });
    const json = JSON.stringify(Template.fromStack(s).toJSON());
    expect(json).toContain(':sqs:us-west-2:123456789012:acme-*');
    expect(json).toContain(':s3:::acme-shared-*');
    expect(json).toContain(':s3:::acme-shared-*/*/_setup-check.json');
    expect(json).toContain(':iam::123456789012:role/acme-pipe-roles/acme-*');
    expect(json).toContain(':events:us-west-2:123456789012:event-bus/aws.partner/sellingpartnerapi.amazon/*');
    expect(json.split('service-spapi-firehose-role').join('')).not.toContain('spapi-');
  });

  test('a second declaration in the same app is a synth error naming both paths', () => {
    const a = new App();
    const s1 = new Stack(a, 'First');
    const s2 = new Stack(a, 'Second');
    new NotificationPipelineRoles(s1, 'Roles', { serviceAccountId: '111122223333', externalId: 'e-1' });
    let message = '';
    try {
      new NotificationPipelineRoles(s2, 'MoreRoles', { serviceAccountId: '111122223333', externalId: 'e-1' });
    } catch (e) {
      message = (e as Error).message;
    }
    expect(message).toMatch(/^Second\/MoreRoles: a second NotificationPipelineRoles in this app \(the first is 'First\/Roles'\); /);
    // The construct path is named once.
    expect(message.split('Second/MoreRoles')).toHaveLength(2);
    // a different app may declare its own
    expect(() => roles(new Stack(new App(), 'X'))).not.toThrow();
  });

  test('fromRoleArns references roles of another stack', () => {
    const f = fixture();
    const imported = NotificationPipelineRoles.fromRoleArns(f.stack, 'Shared', {
      managementRoleArn: 'arn:aws:iam::123456789012:role/dpi-management',
      eventBusRoleArn: 'arn:aws:iam::123456789012:role/dpi-eventbus',
    });
    expect(imported.managementRole.roleArn).toBe('arn:aws:iam::123456789012:role/dpi-management');
    sellerPipeline(f, imported as NotificationPipelineRoles, 'Orders');
    const t2 = Template.fromStack(f.stack);
    t2.hasResourceProperties('Custom::DpiNotificationPipeline', {
      RoleArn: 'arn:aws:iam::123456789012:role/dpi-management',
      EbToFhRoleArn: 'arn:aws:iam::123456789012:role/dpi-eventbus',
    });
    expect(Object.keys(t2.findResources('AWS::IAM::Role')).filter((k) => k.includes('Shared'))).toEqual([]);

    const queueOnly = NotificationPipelineRoles.fromRoleArns(f.stack, 'QueueOnly', { managementRoleArn: 'arn:aws:iam::123456789012:role/dpi-management' });
    expect(() => new NotificationPipeline(f.stack, 'Vendor', {
      connection: f.connection,
      remoteIdentityId: 363,
      accountType: AccountType.VENDOR,
      roles: queueOnly,
      notificationTypes: [NotificationType.ITEM_SALES_EVENT_CHANGE],
    })).toThrow("MyStack/Vendor: notificationTypes 'ITEM_SALES_EVENT_CHANGE' use the event-bus path but roles.eventBusRoleArn is not set");
    expect(() => new NotificationPipeline(f.stack, 'VendorQ', {
      connection: f.connection,
      remoteIdentityId: 363,
      accountType: AccountType.VENDOR,
      roles: queueOnly,
      notificationTypes: [NotificationType.REPORT_PROCESSING_FINISHED],
    })).not.toThrow();
    expect(() => NotificationPipelineRoles.fromRoleArns(f.stack, 'Bad', { managementRoleArn: 'dpi-management' }))
      .toThrow("MyStack/Bad: managementRoleArn 'dpi-management' is not an IAM role ARN");
  });
});

describe('NotificationPipelineRoles built on evidence', () => {
  const make = (props: Partial<ConstructorParameters<typeof NotificationPipelineRoles>[2]> = {}): { r: NotificationPipelineRoles; stack: Stack } => {
    const app = new App();
    const stack = new Stack(app, 'RolesStack', { env: { account: '123456789012', region: 'us-east-1' } });
    const r = new NotificationPipelineRoles(stack, 'Roles', { serviceAccountId: '111122223333', ...props });
    return { r, stack };
  };

  test('without externalId the trust names the service account and no sts:ExternalId condition', () => {
    const { stack } = make();
    const trust = roleOf(Template.fromStack(stack), 'RolesManagementRole').Properties.AssumeRolePolicyDocument.Statement;
    expect(trust).toHaveLength(1);
    expect(trust[0].Condition).toBeUndefined();
    expect(JSON.stringify(trust[0].Principal)).toContain('111122223333');
  });

  test('managementPolicy replaces the built-in document; addToManagementPolicy extends it', () => {
    const custom = new iam.PolicyDocument({
      statements: [new iam.PolicyStatement({ sid: 'Queues', actions: ['sqs:CreateQueue'], resources: ['arn:aws:sqs:us-east-1:123456789012:partner-*'] })],
    });
    const { r, stack } = make({ managementPolicy: custom });
    r.addToManagementPolicy(new iam.PolicyStatement({ sid: 'Extra', actions: ['sqs:TagQueue'], resources: ['arn:aws:sqs:us-east-1:123456789012:partner-*'] }));
    const statements = inlineStatements(Template.fromStack(stack), 'RolesManagementRole');
    expect(statements.map((s) => s.Sid)).toEqual(['Queues', 'Extra']);
    expect(r.managementPolicyDocument).toBe(custom);
  });

  test('addToManagementPolicy on the built-in document keeps every built-in statement', () => {
    const { r, stack } = make();
    const before = inlineStatements(Template.fromStack(make().stack), 'RolesManagementRole').map((s) => s.Sid);
    r.addToManagementPolicy(new iam.PolicyStatement({ sid: 'OtherPrefixQueues', actions: ['sqs:CreateQueue'], resources: ['arn:aws:sqs:us-east-1:123456789012:obx-*'] }));
    const after = inlineStatements(Template.fromStack(stack), 'RolesManagementRole').map((s) => s.Sid);
    expect(after).toEqual([...before, 'OtherPrefixQueues']);
  });
});

describe('NotificationPipeline and IAM propagation', () => {
  test('the provider may read the creation time of the pipeline roles (iam:GetRole on exactly those)', () => {
    const f = fixture();
    const r = roles(f.stack);
    sellerPipeline(f, r, 'Seller');
    const policies = Template.fromStack(f.stack).findResources('AWS::IAM::Policy');
    const getRole = Object.values(policies).flatMap((p: any) => p.Properties.PolicyDocument.Statement)
      .filter((s: any) => s.Action === 'iam:GetRole');
    expect(getRole).toHaveLength(1);
    expect(JSON.stringify(getRole[0].Resource)).toContain('RolesManagementRole');
  });
});
