import { Duration, RemovalPolicy } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { fixture, SECRET_ARN } from './helpers';
import { HistoryRequest, ProductOrderJobs, Subscription, SubscriptionStatus } from '../../src';

describe('Subscription', () => {
  test('writes Custom::DpiSubscription with defaults', () => {
    const f = fixture();
    const sub = new Subscription(f.stack, 'Orders', {
      connection: f.connection,
      productId: 3001,
      storageGroupId: 501,
      remoteIdentityId: 362,
      productParameters: { marketplace_id: 'ATVPDKIKX0DER' },
      stageIds: [1001, 1002],
      name: 'orders-us',
    });
    const t = Template.fromStack(f.stack);
    t.hasResource('Custom::DpiSubscription', {
      DeletionPolicy: 'Delete',
      Properties: {
        ServiceToken: Match.anyValue(),
        Connection: Match.objectLike({ RefreshTokenSecretArn: SECRET_ARN }),
        ProductId: '3001',
        StorageGroupId: '501',
        RemoteIdentityId: '362',
        ProductParameters: { marketplace_id: 'ATVPDKIKX0DER' },
        StageIds: ['1001', '1002'],
        Status: 'active',
        Name: 'orders-us',
        OnDelete: 'invalid',
        DateStart: Match.absent(),
        RemovalPolicy: 'destroy',
      },
    });
    const id = Object.keys(t.findResources('Custom::DpiSubscription'))[0];
    expect(f.stack.resolve(sub.subscriptionId)).toEqual({ 'Fn::GetAtt': [id, 'SubscriptionId'] });
    expect(sub.status).toBe(SubscriptionStatus.ACTIVE);
  });

  test('paused, cancelled on delete, retained, dateStart', () => {
    const f = fixture();
    const sub = new Subscription(f.stack, 'S', {
      connection: f.connection,
      productId: 3002,
      status: SubscriptionStatus.PAUSED,
      onDelete: SubscriptionStatus.CANCELLED,
      removalPolicy: RemovalPolicy.RETAIN,
      dateStart: '2026-11-01T00:00:00Z',
    });
    Template.fromStack(f.stack).hasResource('Custom::DpiSubscription', {
      DeletionPolicy: 'Delete',
      Properties: Match.objectLike({
        Status: 'paused', OnDelete: 'cancelled', DateStart: '2026-11-01T00:00:00Z', StageIds: Match.absent(), RemovalPolicy: 'retain',
      }),
    });
    expect(sub.status).toBe(SubscriptionStatus.PAUSED);
  });

  test('fromSubscriptionId gives an ISubscription usable by HistoryRequest and ProductOrderJobs', () => {
    const f = fixture();
    const sub = Subscription.fromSubscriptionId(f.stack, 'Existing', '4242');
    expect(sub.subscriptionId).toBe('4242');
    new ProductOrderJobs(f.stack, 'Jobs', { connection: f.connection, subscription: sub, orderIds: ['111-1234567-1234567'] });
    Template.fromStack(f.stack).hasResourceProperties('Custom::DpiProductOrderJobs', { SubscriptionId: '4242', StageId: '1000' });
    expect(() => Subscription.fromSubscriptionId(f.stack, 'Bad', 'abc')).toThrow("MyStack/Bad: subscriptionId 'abc'");
  });
});

describe('HistoryRequest', () => {
  test('range request uses the waiting provider and references the subscription', () => {
    const f = fixture();
    const sub = new Subscription(f.stack, 'Orders', { connection: f.connection, productId: 3001 });
    const h = new HistoryRequest(f.stack, 'Backfill', {
      connection: f.connection,
      subscription: sub,
      startDate: '2026-11-15',
      endDate: '2026-11-17',
      stageId: 1001,
      productId: 3001,
      startTime: '2026-11-20 02:00:00',
      waitForCompletion: true,
      timeout: Duration.minutes(45),
    });
    const t = Template.fromStack(f.stack);
    const subId = Object.keys(t.findResources('Custom::DpiSubscription'))[0];
    t.hasResourceProperties('Custom::DpiHistoryRequest', {
      ServiceToken: { 'Fn::GetAtt': [Match.stringLikeRegexp('WaiterProvider'), 'Arn'] },
      SubscriptionId: { 'Fn::GetAtt': [subId, 'SubscriptionId'] },
      StartDate: '2026-11-15',
      EndDate: '2026-11-17',
      Dates: Match.absent(),
      StageId: '1001',
      ProductId: '3001',
      StartTime: '2026-11-20 02:00:00',
      WaitForCompletion: 'true',
      TimeoutSeconds: '2700',
    });
    expect(f.stack.resolve(h.historyTransactionId)['Fn::GetAtt'][1]).toBe('HistoryTransactionId');
    expect(f.stack.resolve(h.status)['Fn::GetAtt'][1]).toBe('Status');
  });

  test('dates request with defaults (no wait, 30 minutes)', () => {
    const f = fixture();
    const sub = Subscription.fromSubscriptionId(f.stack, 'S', '77');
    new HistoryRequest(f.stack, 'Days', { connection: f.connection, subscription: sub, dates: ['2026-11-01', '2026-11-03'] });
    Template.fromStack(f.stack).hasResourceProperties('Custom::DpiHistoryRequest', {
      Dates: ['2026-11-01', '2026-11-03'], StartDate: Match.absent(), WaitForCompletion: 'false', TimeoutSeconds: '1800',
    });
  });
});

describe('ProductOrderJobs', () => {
  test('any number of order IDs; batch count computed', () => {
    const f = fixture();
    const sub = Subscription.fromSubscriptionId(f.stack, 'S', '77');
    const ids = Array.from({ length: 250 }, (_, i) => `111-${String(1000000 + i)}-2000000`);
    const jobs = new ProductOrderJobs(f.stack, 'Jobs', { connection: f.connection, subscription: sub, orderIds: ids, stageId: 1001 });
    expect(jobs.batchCount).toBe(3);
    const t = Template.fromStack(f.stack);
    t.hasResourceProperties('Custom::DpiProductOrderJobs', { OrderIds: ids, StageId: '1001', SubscriptionId: '77' });
    const id = Object.keys(t.findResources('Custom::DpiProductOrderJobs'))[0];
    expect(f.stack.resolve(jobs.primaryJobId)).toEqual({ 'Fn::GetAtt': [id, 'PrimaryJobId'] });
    expect(f.stack.resolve(jobs.jobIds)).toEqual({ 'Fn::GetAtt': [id, 'JobIds'] });
  });
});
