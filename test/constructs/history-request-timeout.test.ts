/**
 * HistoryRequest's timeout: CloudFormation waits at most one hour for a custom resource, and the wait for a free
 * slot (up to the onEvent Lambda's 10 minutes), the waiter's 30 s interval and the provider's start-up share that
 * hour with the wait for completion, so the timeout is at most 45 minutes, checked at synth time.
 */
import { Duration, Token } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { fixture } from './helpers';
import { HistoryRequest, HistoryRequestProps, Subscription } from '../../src';

function backfill(timeout: Duration | undefined, extra: Partial<HistoryRequestProps> = {}): Template {
  const f = fixture();
  new HistoryRequest(f.stack, 'Backfill', {
    connection: f.connection,
    subscription: Subscription.fromSubscriptionId(f.stack, 'S', '77'),
    dates: ['2026-11-01'],
    waitForCompletion: true,
    ...(timeout !== undefined ? { timeout } : {}),
    ...extra,
  });
  return Template.fromStack(f.stack);
}

test.each([
  [Duration.minutes(45), '2700'],
  [Duration.seconds(2700), '2700'],
  [Duration.minutes(1), '60'],
  [undefined, '1800'],
])('%s is accepted (TimeoutSeconds %s)', (timeout, seconds) => {
  backfill(timeout).hasResourceProperties('Custom::DpiHistoryRequest', { TimeoutSeconds: seconds, WaitForCompletion: 'true' });
});

test.each([
  [Duration.seconds(2701), "MyStack/Backfill: timeout '45 minutes 1 second' is out of range (2701 s; at most 2700 s); use at most 45 minutes: CloudFormation waits at most one hour"],
  [Duration.minutes(50), "MyStack/Backfill: timeout '50 minutes' is out of range (3000 s; at most 2700 s)"],
  [Duration.hours(1), "MyStack/Backfill: timeout '1 hour' is out of range (3600 s; at most 2700 s)"],
  [Duration.hours(2), "MyStack/Backfill: timeout '2 hours' is out of range (7200 s; at most 2700 s)"],
])('%s is rejected at synth time, naming the construct path and the value', (timeout, message) => {
  expect(() => backfill(timeout)).toThrow(message);
});

test('the limit holds without waitForCompletion too (the wait for a free slot uses the same timeout)', () => {
  expect(() => backfill(Duration.hours(1), { waitForCompletion: false })).toThrow("MyStack/Backfill: timeout '1 hour' is out of range");
});

test('below 1 minute is rejected as before', () => {
  expect(() => backfill(Duration.seconds(59))).toThrow("MyStack/Backfill: timeout '59 seconds' is out of range (59 s; at least 60 s); use at least 1 minute");
});

test('an unresolved timeout is left to deploy time', () => {
  const f = fixture();
  expect(() => new HistoryRequest(f.stack, 'Backfill', {
    connection: f.connection,
    subscription: Subscription.fromSubscriptionId(f.stack, 'S', '77'),
    dates: ['2026-11-01'],
    timeout: Duration.seconds(Token.asNumber({ Ref: 'Timeout' })),
  })).not.toThrow();
});
