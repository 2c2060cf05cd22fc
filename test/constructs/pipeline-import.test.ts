import { Stack } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { fixture, roles, sellerPipeline } from './helpers';
import { INotificationPipeline, NotificationPipeline } from '../../src';

const ATTRS = {
  subscriptionId: '1201',
  bucketName: 'dpi-notifications-shared',
  prefix: 'pipelines/362/',
  notificationQueueArn: 'arn:aws:sqs:us-east-1:123456789012:dpi-notifications-362',
};

/** `arn:<partition><rest>` as aws-cdk-lib renders it. */
function arn(rest: string): unknown {
  return { 'Fn::Join': ['', ['arn:', { Ref: 'AWS::Partition' }, rest]] };
}

function consumerIn(stack: Stack, id = 'Consumer'): lambda.Function {
  return new lambda.Function(stack, id, {
    runtime: lambda.Runtime.NODEJS_22_X, handler: 'index.handler', code: lambda.Code.fromInline('exports.handler = async () => {}'),
  });
}

describe('NotificationPipeline.fromPipelineAttributes', () => {
  test('literal attributes in a second stack: consumer added, grant synthesized there', () => {
    const f = fixture();
    sellerPipeline(f, roles(f.stack), 'Orders');
    const consumers = new Stack(f.app, 'Consumers', { env: { account: '123456789012', region: 'us-east-1' } });
    const imported: INotificationPipeline = NotificationPipeline.fromPipelineAttributes(consumers, 'Orders', ATTRS);
    expect(imported.subscriptionId).toBe('1201');
    expect(imported.prefix).toBe('pipelines/362/');
    expect(imported.bucket.bucketName).toBe('dpi-notifications-shared');
    expect(imported.notificationQueue.queueArn).toBe(ATTRS.notificationQueueArn);
    imported.addConsumer(consumerIn(consumers), { batchSize: 5 });

    const t = Template.fromStack(consumers);
    t.resourceCountIs('Custom::DpiNotificationPipeline', 0);
    t.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      EventSourceArn: ATTRS.notificationQueueArn,
      FunctionName: { Ref: Match.stringLikeRegexp('^Consumer') },
      BatchSize: 5,
      FunctionResponseTypes: ['ReportBatchItemFailures'],
    });
    t.hasResourceProperties('AWS::IAM::Policy', {
      Roles: [{ Ref: Match.stringLikeRegexp('^ConsumerServiceRole') }],
      PolicyDocument: {
        Statement: Match.arrayWith([
          // The event source's consume grant comes first.
          Match.objectLike({ Action: Match.arrayWith(['sqs:ReceiveMessage', 'sqs:DeleteMessage']), Resource: ATTRS.notificationQueueArn }),
          { Action: 's3:GetObject', Effect: 'Allow', Resource: arn(':s3:::dpi-notifications-shared/pipelines/362/*') },
          {
            Action: 's3:ListBucket',
            Effect: 'Allow',
            Condition: { StringLike: { 's3:prefix': ['pipelines/362/*'] } },
            Resource: arn(':s3:::dpi-notifications-shared'),
          },
        ]),
      },
    });
  });

  test('the pipeline\'s own attributes from a second stack of the app: cross-stack references', () => {
    const f = fixture();
    const p = sellerPipeline(f, roles(f.stack), 'Orders');
    const consumers = new Stack(f.app, 'Consumers', { env: { account: '123456789012', region: 'us-east-1' } });
    const imported = NotificationPipeline.fromPipelineAttributes(consumers, 'Orders', {
      subscriptionId: p.subscriptionId,
      bucketName: p.bucket.bucketName,
      prefix: p.prefix,
      notificationQueueArn: p.notificationQueue.queueArn,
    });
    const role = new iam.Role(consumers, 'Reader', { assumedBy: new iam.ServicePrincipal('ec2.amazonaws.com') });
    imported.grantReadNotifications(role);
    imported.addConsumer(consumerIn(consumers));

    const producer = Template.fromStack(f.stack);
    const id = Object.keys(producer.findResources('Custom::DpiNotificationPipeline'))[0];
    const outputs = producer.toJSON().Outputs as Record<string, { Value: unknown; Export: { Name: string } }>;
    const exportOf = (att: string): string => {
      const found = Object.values(outputs).find((o) => JSON.stringify(o.Value) === JSON.stringify({ 'Fn::GetAtt': [id, att] }));
      if (!found) throw new Error(`no export of ${att} in ${JSON.stringify(outputs)}`);
      return found.Export.Name;
    };
    const imp = (att: string): unknown => ({ 'Fn::ImportValue': exportOf(att) });

    const t = Template.fromStack(consumers);
    t.hasResourceProperties('AWS::IAM::Policy', {
      Roles: [{ Ref: Match.stringLikeRegexp('^Reader') }],
      PolicyDocument: {
        Statement: Match.arrayWith([
          { Action: 's3:GetObject', Effect: 'Allow', Resource: { 'Fn::Join': ['', ['arn:', { Ref: 'AWS::Partition' }, ':s3:::', imp('BucketName'), '/', imp('Prefix'), '*']] } },
          {
            Action: 's3:ListBucket',
            Effect: 'Allow',
            Condition: { StringLike: { 's3:prefix': [{ 'Fn::Join': ['', [imp('Prefix'), '*']] }] } },
            Resource: { 'Fn::Join': ['', ['arn:', { Ref: 'AWS::Partition' }, ':s3:::', imp('BucketName')]] },
          },
          Match.objectLike({ Action: Match.arrayWith(['sqs:ReceiveMessage']), Resource: imp('NotificationQueueArn') }),
        ]),
      },
    });
    t.hasResourceProperties('AWS::Lambda::EventSourceMapping', { EventSourceArn: imp('NotificationQueueArn') });
  });

  test('a missing or malformed attribute is a synth error naming the path, the attribute and the value', () => {
    const f = fixture();
    expect(() => NotificationPipeline.fromPipelineAttributes(f.stack, 'NoQueue', { ...ATTRS, notificationQueueArn: '' }))
      .toThrow(/MyStack\/NoQueue.*notificationQueueArn/);
    expect(() => NotificationPipeline.fromPipelineAttributes(f.stack, 'BadPrefix', { ...ATTRS, prefix: 'pipelines/362' }))
      .toThrow(/MyStack\/BadPrefix.*prefix.*pipelines\/362.*does not end with \//);
    expect(() => NotificationPipeline.fromPipelineAttributes(f.stack, 'BadArn', { ...ATTRS, notificationQueueArn: 'dpi-notifications-362' }))
      .toThrow(/MyStack\/BadArn.*notificationQueueArn.*dpi-notifications-362.*not an SQS queue ARN/);
  });

  test('acceptedDeploymentRegions() returns a copy', () => {
    const regions = NotificationPipeline.acceptedDeploymentRegions();
    expect(regions).toContain('us-east-1');
    regions.push('eu-west-1');
    expect(NotificationPipeline.acceptedDeploymentRegions()).not.toContain('eu-west-1');
  });
});
