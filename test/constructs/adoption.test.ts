import { Match, Template } from 'aws-cdk-lib/assertions';
import { fixture, roles, sellerPipeline } from './helpers';
import { HistoryRequest, Subscription } from '../../src';

describe('adoption props (existing records)', () => {
  test('existingSubscriptionId / existingHistoryTransactionId become AdoptId; absent by default', () => {
    const f = fixture();
    const sub = new Subscription(f.stack, 'Orders', { connection: f.connection, productId: 3001, remoteIdentityId: 362, existingSubscriptionId: 9123 });
    new Subscription(f.stack, 'New', { connection: f.connection, productId: 3003 });
    new HistoryRequest(f.stack, 'Backfill', {
      connection: f.connection, subscription: sub, startDate: '2026-11-01', endDate: '2026-11-02', existingHistoryTransactionId: 'h-17',
    });
    sellerPipeline(f, roles(f.stack), 'Seller', { existingSubscriptionId: 9200 });
    const t = Template.fromStack(f.stack);
    t.hasResourceProperties('Custom::DpiSubscription', { ProductId: '3001', AdoptId: '9123' });
    t.hasResourceProperties('Custom::DpiSubscription', { ProductId: '3003', AdoptId: Match.absent() });
    t.hasResourceProperties('Custom::DpiHistoryRequest', { AdoptId: 'h-17' });
    t.hasResourceProperties('Custom::DpiNotificationPipeline', { AdoptId: '9200' });
  });

  test.each([0, -3, 1.5, Number.MAX_SAFE_INTEGER + 2])('Subscription existingSubscriptionId %p is refused naming the path and value', (bad) => {
    const f = fixture();
    expect(() => new Subscription(f.stack, 'Orders', { connection: f.connection, productId: 3001, existingSubscriptionId: bad }))
      .toThrow(`MyStack/Orders: existingSubscriptionId '${bad}' is not a subscription ID; use the numeric ID of the existing subscription`);
  });

  test('NotificationPipeline existingSubscriptionId must be a subscription ID', () => {
    const f = fixture();
    expect(() => sellerPipeline(f, roles(f.stack), 'Seller', { existingSubscriptionId: 12.5 }))
      .toThrow("MyStack/Seller: existingSubscriptionId '12.5' is not a subscription ID");
  });

  test.each([[107, 'NotificationPipeline'], [86, 'LegacyNotificationPipeline']])('a Subscription of pipeline product %p is refused, naming the construct to use', (product, kind) => {
    const f = fixture();
    expect(() => new Subscription(f.stack, 'Pipe', { connection: f.connection, productId: product, remoteIdentityId: 362 }))
      .toThrow(`MyStack/Pipe: productId '${product}' is a notification pipeline's product; declare a ${kind} instead`);
  });

  test('NotificationPipeline rebuildOnAdoption renders RebuildOnAdoption only when set, and only with an adoption', () => {
    const f = fixture();
    const r = roles(f.stack);
    sellerPipeline(f, r, 'Asis', { existingSubscriptionId: 9200 });
    sellerPipeline(f, r, 'Rebuilt', { existingSubscriptionId: 9201, rebuildOnAdoption: true, remoteIdentityId: 363 });
    const t = Template.fromStack(f.stack);
    t.hasResourceProperties('Custom::DpiNotificationPipeline', { AdoptId: '9200', RebuildOnAdoption: Match.absent() });
    t.hasResourceProperties('Custom::DpiNotificationPipeline', { AdoptId: '9201', RebuildOnAdoption: 'true' });
    const g = fixture();
    expect(() => sellerPipeline(g, roles(g.stack), 'Seller', { rebuildOnAdoption: true }))
      .toThrow("MyStack/Seller: rebuildOnAdoption 'true' applies only to an adoption; set existingSubscriptionId, or drop rebuildOnAdoption");
  });

  test.each(['', 'h 1', 'a/b', 'x'.repeat(65)])('HistoryRequest existingHistoryTransactionId %p is refused', (bad) => {
    const f = fixture();
    const sub = Subscription.fromSubscriptionId(f.stack, 'Sub', '9001');
    expect(() => new HistoryRequest(f.stack, 'Backfill', {
      connection: f.connection, subscription: sub, startDate: '2026-11-01', endDate: '2026-11-02', existingHistoryTransactionId: bad,
    })).toThrow(`MyStack/Backfill: existingHistoryTransactionId '${bad}' is not a history transaction ID`);
  });
});
