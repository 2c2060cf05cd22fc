import { Duration, RemovalPolicy, Stack } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as sns from 'aws-cdk-lib/aws-sns';
import { fixture, LEGACY_QUEUE_ARN, legacyPipeline, roles, SECRET_ARN, sellerPipeline } from './helpers';
import {
  AccountType, NotificationPipeline, NotificationPipelineRoles, NotificationType, PartialFailure, ServiceConnection, ServiceEndpoints,
} from '../../src';

describe('NotificationPipeline', () => {
  test('writes Custom::DpiNotificationPipeline with the contract properties', () => {
    const f = fixture();
    const r = roles(f.stack);
    sellerPipeline(f, r, 'Orders', { storageGroupId: 501, name: 'orders', partialFailure: PartialFailure.ALLOW });
    const t = Template.fromStack(f.stack);
    t.hasResourceProperties('Custom::DpiNotificationPipeline', {
      ServiceToken: Match.anyValue(),
      Connection: Match.objectLike({ BaseUrl: 'https://api.example-dpi.com', RefreshTokenSecretArn: SECRET_ARN }),
      RemoteIdentityId: '362',
      AccountType: 'seller',
      NotificationTypes: ['ORDER_CHANGE', 'REPORT_PROCESSING_FINISHED'],
      RoleArn: { 'Fn::GetAtt': [Match.stringLikeRegexp('^RolesManagementRole'), 'Arn'] },
      EbToFhRoleArn: { 'Fn::GetAtt': [Match.stringLikeRegexp('^RolesEventBusRole'), 'Arn'] },
      DeploymentRegion: 'us-east-1',
      StorageGroupId: '501',
      Name: 'orders',
      PartialFailure: 'ALLOW',
    });
    // defaults: Delete policy, depends on the roles
    const res = Object.values(t.findResources('Custom::DpiNotificationPipeline'))[0];
    expect(res.DeletionPolicy).toBe('Delete');
    expect(res.DependsOn).toEqual(expect.arrayContaining([expect.stringMatching(/^RolesManagementRole/), expect.stringMatching(/^RolesDeliveryRole/)]));
  });

  test('typed handles for the whole pipeline: event bus, rule and delivery stream from the resource attributes', () => {
    const f = fixture();
    const r = roles(f.stack);
    const p = sellerPipeline(f, r, 'Orders');
    const stack = f.stack;
    const att = (name: string): unknown => ({ 'Fn::GetAtt': [stack.getLogicalId(p.node.findChild('Resource').node.defaultChild as any), name] });
    expect(stack.resolve(p.eventBus.eventBusName)).toEqual(att('EventBusName'));
    expect(stack.resolve(p.rule.ruleArn)).toEqual({
      'Fn::Join': ['', ['arn:', { Ref: 'AWS::Partition' }, ':events:us-east-1:123456789012:rule/', att('EventBusName'), '/', att('EventBridgeRuleId')]],
    });
    expect(stack.resolve(p.deliveryStream.deliveryStreamArn)).toEqual(att('DeliveryStreamArn'));
    expect(stack.resolve(p.eventBridgeDestinationId)).toEqual(att('EventBridgeDestinationId'));
    expect(stack.resolve(p.sqsDestinationId)).toEqual(att('SqsDestinationId'));
    // The same handle every time.
    expect(p.eventBus).toBe(p.eventBus);
    // A handle the selection cannot have is a synth error that names the selection.
    const ebOnly = new NotificationPipeline(stack, 'Sales', {
      connection: f.connection,
      remoteIdentityId: 363,
      accountType: AccountType.VENDOR,
      roles: r,
      notificationTypes: [NotificationType.ITEM_SALES_EVENT_CHANGE],
    });
    expect(() => ebOnly.deliveryStream).toThrow(/Sales: deliveryStream exists only for pipelines with a queue notification type; the selection \(ITEM_SALES_EVENT_CHANGE\) has none/);
    expect(ebOnly.eventBus).toBeDefined();
    const queueOnly = new NotificationPipeline(stack, 'Feeds', {
      connection: f.connection,
      remoteIdentityId: 364,
      accountType: AccountType.SELLER,
      roles: r,
      notificationTypes: [NotificationType.FEED_PROCESSING_FINISHED],
    });
    expect(() => queueOnly.eventBus).toThrow(/Feeds: eventBus exists only for pipelines with an event-bus notification type/);
    expect(() => queueOnly.rule).toThrow(/rule exists only for pipelines with an event-bus notification type/);
    expect(queueOnly.deliveryStream).toBeDefined();
  });

  test('metrics of the queue and the delivery stream; addAlarms() with defaults (event-bus-only: the queue alarm alone)', () => {
    const f = fixture();
    const r = roles(f.stack);
    const p = sellerPipeline(f, r, 'Orders');
    const stack = f.stack;
    const age = p.metricOldestMessageAge();
    expect(age.metricName).toBe('ApproximateAgeOfOldestMessage');
    expect(age.statistic).toBe('Maximum');
    expect(p.metricMessagesVisible().metricName).toBe('ApproximateNumberOfMessagesVisible');
    const success = p.metricDeliveryToS3Success();
    expect([success.namespace, success.metricName, success.statistic]).toEqual(['AWS/Firehose', 'DeliveryToS3.Success', 'Average']);
    const id = stack.getLogicalId(p.node.findChild('Resource').node.defaultChild as any);
    expect(stack.resolve(success.dimensions!.DeliveryStreamName))
      .toEqual({ 'Fn::Select': [1, { 'Fn::Split': ['/', { 'Fn::GetAtt': [id, 'DeliveryStreamArn'] }] }] });
    const topic = new sns.Topic(stack, 'Topic');
    const alarms = p.addAlarms({ alarmTopic: topic, maxMessageAge: Duration.minutes(30) });
    expect(alarms).toHaveLength(3);
    const t = Template.fromStack(stack);
    t.hasResourceProperties('AWS::CloudWatch::Alarm', {
      MetricName: 'ApproximateAgeOfOldestMessage', Threshold: 1800, AlarmActions: [{ Ref: Match.stringLikeRegexp('^Topic') }],
    });
    t.hasResourceProperties('AWS::CloudWatch::Alarm', { MetricName: 'DeliveryToS3.Success', Threshold: 1, ComparisonOperator: 'LessThanThreshold' });
    t.hasResourceProperties('AWS::CloudWatch::Alarm', { MetricName: 'DeliveryToS3.DataFreshness', Threshold: 900 });
    const sales = new NotificationPipeline(stack, 'Sales', {
      connection: f.connection,
      remoteIdentityId: 363,
      accountType: AccountType.VENDOR,
      roles: r,
      notificationTypes: [NotificationType.ITEM_SALES_EVENT_CHANGE],
    });
    expect(sales.addAlarms().map((a) => (a.metric as cloudwatch.Metric).metricName)).toEqual(['ApproximateAgeOfOldestMessage']);
    expect(() => sales.metricDeliveryToS3Success()).toThrow(/deliveryStream exists only for pipelines with a queue notification type/);
  });

  test('queue-only pipelines omit EbToFhRoleArn; defaults FAIL and no name/storage', () => {
    const f = fixture();
    new NotificationPipeline(f.stack, 'Feeds', {
      connection: f.connection,
      remoteIdentityId: 362,
      accountType: AccountType.SELLER,
      roles: roles(f.stack),
      notificationTypes: [NotificationType.FEED_PROCESSING_FINISHED],
      deploymentRegion: 'us-west-2',
    });
    Template.fromStack(f.stack).hasResourceProperties('Custom::DpiNotificationPipeline', {
      EbToFhRoleArn: Match.absent(), PartialFailure: 'FAIL', Name: Match.absent(), StorageGroupId: Match.absent(), DeploymentRegion: 'us-west-2',
    });
  });

  test('removalPolicy RETAIN keeps the pipeline on stack delete: the handler releases it (the resource itself is always Delete)', () => {
    const f = fixture();
    sellerPipeline(f, roles(f.stack), 'Kept', { removalPolicy: RemovalPolicy.RETAIN });
    Template.fromStack(f.stack).hasResource('Custom::DpiNotificationPipeline', {
      DeletionPolicy: 'Delete', UpdateReplacePolicy: 'Delete', Properties: Match.objectLike({ RemovalPolicy: 'retain' }),
    });
  });

  test('attributes are GetAtt tokens of the contract names', () => {
    const f = fixture();
    const p = sellerPipeline(f, roles(f.stack), 'Orders');
    const att = (v: string) => f.stack.resolve(v)['Fn::GetAtt'][1];
    expect([p.subscriptionId, p.subscribedTypes, p.bucket.bucketName, p.prefix, p.notificationQueue.queueArn, p.deliveryStream.deliveryStreamArn,
      p.failedTypes].map(att))
      .toEqual(['SubscriptionId', 'SubscribedTypes', 'BucketName', 'Prefix', 'NotificationQueueArn', 'DeliveryStreamArn', 'FailedTypes']);
  });

  test('grantReadNotifications: objects under the prefix, ListBucket with s3:prefix, queue consume', () => {
    const f = fixture();
    const p = sellerPipeline(f, roles(f.stack), 'Orders');
    const role = new iam.Role(f.stack, 'Reader', { assumedBy: new iam.ServicePrincipal('ec2.amazonaws.com') });
    p.grantReadNotifications(role);
    const t = Template.fromStack(f.stack);
    const id = Object.keys(t.findResources('Custom::DpiNotificationPipeline'))[0];
    t.hasResourceProperties('AWS::IAM::Policy', {
      Roles: [{ Ref: Match.stringLikeRegexp('^Reader') }],
      PolicyDocument: {
        Statement: Match.arrayWith([
          {
            Action: 's3:GetObject',
            Effect: 'Allow',
            Resource: { 'Fn::Join': ['', ['arn:', { Ref: 'AWS::Partition' }, ':s3:::', { 'Fn::GetAtt': [id, 'BucketName'] }, '/', { 'Fn::GetAtt': [id, 'Prefix'] }, '*']] },
          },
          {
            Action: 's3:ListBucket',
            Effect: 'Allow',
            Condition: { StringLike: { 's3:prefix': [{ 'Fn::Join': ['', [{ 'Fn::GetAtt': [id, 'Prefix'] }, '*']] }] } },
            Resource: { 'Fn::Join': ['', ['arn:', { Ref: 'AWS::Partition' }, ':s3:::', { 'Fn::GetAtt': [id, 'BucketName'] }]] },
          },
          Match.objectLike({
            Action: Match.arrayWith(['sqs:ReceiveMessage', 'sqs:DeleteMessage']),
            Resource: { 'Fn::GetAtt': [id, 'NotificationQueueArn'] },
          }),
        ]),
      },
    });
  });

  test('addConsumer: SQS event source mapping on the notification queue, with read grants', () => {
    const f = fixture();
    const p = sellerPipeline(f, roles(f.stack), 'Orders');
    const fn = new lambda.Function(f.stack, 'Consumer', {
      runtime: lambda.Runtime.NODEJS_22_X, handler: 'index.handler', code: lambda.Code.fromInline('exports.handler = async () => {}'),
    });
    p.addConsumer(fn, { batchSize: 5 });
    const t = Template.fromStack(f.stack);
    const id = Object.keys(t.findResources('Custom::DpiNotificationPipeline'))[0];
    t.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      EventSourceArn: { 'Fn::GetAtt': [id, 'NotificationQueueArn'] },
      FunctionName: { Ref: Match.stringLikeRegexp('^Consumer') },
      BatchSize: 5,
      FunctionResponseTypes: ['ReportBatchItemFailures'],
    });
    t.hasResourceProperties('AWS::IAM::Policy', {
      Roles: [{ Ref: Match.stringLikeRegexp('^ConsumerServiceRole') }],
      PolicyDocument: { Statement: Match.arrayWith([Match.objectLike({ Action: 's3:GetObject' })]) },
    });
  });
});

describe('LegacyNotificationPipeline', () => {
  test('adopts by subscription ID with Retired false by default', () => {
    const f = fixture();
    const legacy = legacyPipeline(f, 'Legacy');
    const t = Template.fromStack(f.stack);
    t.hasResource('Custom::DpiLegacyNotificationPipeline', {
      DeletionPolicy: 'Delete',
      Properties: {
        ServiceToken: Match.anyValue(),
        Connection: Match.objectLike({ RefreshTokenSecretArn: SECRET_ARN }),
        SubscriptionId: '9001',
        RemoteIdentityId: '362',
        QueueArn: LEGACY_QUEUE_ARN,
        NotificationTypes: ['ORDER_CHANGE'],
        Retired: 'false',
        // Adopted (it existed before the stack): retained by default.
        RemovalPolicy: 'retain',
      },
    });
    expect(legacy.retired).toBe(false);
    expect(f.stack.resolve(legacy.subscriptionId)).toEqual({ Ref: expect.stringMatching(/^Legacy/) });
  });

  test('migrateFrom: retired legacy, the unified pipeline depends on it', () => {
    const f = fixture();
    const legacy = legacyPipeline(f, 'Legacy', { retired: true });
    const unified = sellerPipeline(f, roles(f.stack), 'Unified');
    unified.migrateFrom(legacy);
    const t = Template.fromStack(f.stack);
    t.hasResourceProperties('Custom::DpiLegacyNotificationPipeline', { Retired: 'true' });
    const legacyId = Object.keys(t.findResources('Custom::DpiLegacyNotificationPipeline'))[0];
    const res = Object.values(t.findResources('Custom::DpiNotificationPipeline'))[0];
    expect(res.DependsOn).toContain(legacyId);
  });

  test('migrateFrom refuses an active legacy pipeline or another identity', () => {
    const f = fixture();
    const r = roles(f.stack);
    const active = legacyPipeline(f, 'Active');
    const other = legacyPipeline(f, 'Other', { subscriptionId: 9002, remoteIdentityId: 400, retired: true });
    const unified = sellerPipeline(f, r, 'Unified');
    expect(() => unified.migrateFrom(active)).toThrow("MyStack/Unified: migrateFrom 'MyStack/Active' is a legacy pipeline that is not retired; set retired: true");
    expect(() => unified.migrateFrom(other)).toThrow("MyStack/Unified: migrateFrom 'MyStack/Other' belongs to remote identity 400, not 362");
  });
});

describe('one unified pipeline per remote identity', () => {
  test('a second NotificationPipeline for the same identity in the app is a synth error naming both', () => {
    const f = fixture();
    const r = roles(f.stack);
    sellerPipeline(f, r, 'First');
    const other = new Stack(f.app, 'OtherStack', { env: { account: '123456789012', region: 'us-east-1' } });
    const c2 = new ServiceConnection(other, 'Dpi', { endpoints: ServiceEndpoints.singleOrigin('https://api.example-dpi.com'), refreshToken: f.connection.refreshToken, journalTableName: 'dpi-lifecycle-journal' });
    expect(() => new NotificationPipeline(other, 'Second', {
      connection: c2,
      roles: NotificationPipelineRoles.fromRoleArns(other, 'R', { managementRoleArn: 'arn:aws:iam::123456789012:role/m' }),
      remoteIdentityId: 362,
      accountType: AccountType.SELLER,
      notificationTypes: [NotificationType.REPORT_PROCESSING_FINISHED],
    })).toThrow("OtherStack/Second: remoteIdentityId '362' already has a notification pipeline in this app ('MyStack/First')");
  });
});
