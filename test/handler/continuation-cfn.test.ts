/** Continuations under CloudFormation, Lambda and Step Functions paths: a continuation never undoes, duplicates or leaks (issue 32). */
import { existsSync, readFileSync } from 'fs';
import { dirname, join } from 'path';
import { delay, Deliveries, INVENTED, SUB_PROPS } from './delivery-helpers';
import { HandlerHarness, SELLER_PIPELINE, useHandlerHarness } from './helpers';
import { CONTINUATION_ENV } from '../../src/contract';
import { CfnEvent, configureLocalRuntime, isComplete, onEvent, OnEventResult } from '../../src/handler';
import { CONTINUATION_KEY } from '../../src/handler/continuation';
import { DEADLINE_MARGIN_MS } from '../../src/handler/runtime';
import { ResourceTypes } from '../../src/kinds';

const SUB = ResourceTypes.SUBSCRIPTION;
let h: HandlerHarness;
useHandlerHarness((s) => { h = s; }, { resetEach: true });
const deliveries = new Deliveries(() => h);
const left = (ms: number) => ({ getRemainingTimeInMillis: () => DEADLINE_MARGIN_MS + ms });
const completeEvent = (event: CfnEvent, answer: OnEventResult): CfnEvent => ({
  ...event, PhysicalResourceId: answer.PhysicalResourceId, Data: answer.Data,
});
const posts = async (): Promise<number> => (await h.requests()).filter((r) => r.method === 'POST' && r.path.startsWith('/v2/sub') && r.status === 201).length;

beforeEach(() => {
  configureLocalRuntime({ ...h.runtime(), environment: () => ({ ...h.environment(), [CONTINUATION_ENV]: '1' }) });
  h.onSleep = (ms) => delay(ms);
});
afterEach(() => { h.onSleep = undefined; h.configure(); });

test('R1: a paused subscription whose PATCH after its POST waits past the deadline continues with the one subscription (not undone, not made twice)', async () => {
  // The PATCH to `paused` and settle()'s "set invalid" PATCH are both refused with a 429 whose wait passes the deadline.
  await h.admin('POST', '/faults', { method: 'PATCH', pathPrefix: '/v2/sub', status: 429, retryAfter: 20, count: 2 });
  const event = h.event(SUB, 'Create', { ...SUB_PROPS, Status: 'paused' });
  const answer = await onEvent(event, left(15_000));
  expect(answer.Data).toEqual({ [CONTINUATION_KEY]: 'waiting' });
  const done = await isComplete(completeEvent(event, answer), left(600_000));
  expect(done.IsComplete).toBe(true);
  expect(await posts()).toBe(1); // fails: 2 subscriptions were POSTed
  const live = h.state().subscriptions.filter((s: any) => s.id >= 9001 && s.status !== 'invalid').map((s: any) => String(s.id));
  expect(live).toEqual([done.PhysicalResourceId]); // fails: the first one is still active, its journal record says `deleted`
}, 120_000);

test('R2: a stale poll of the cancelled Create does not rewrite the lease: the continuing Delete ends what the Create made', async () => {
  const other = await deliveries.bystander();
  const create = h.event(SUB, 'Create', SUB_PROPS);
  // The Create finished in one run, but CloudFormation never learned it (a sibling failed first): its waiter still polls
  // (a second waiter of a duplicate delivery, or a history request's waiting polls).
  const made = await onEvent(create, left(600_000));
  expect(made.PhysicalResourceId).toMatch(/^\d+$/);
  // The cancellation Delete: its "set invalid" PATCH meets a 429 whose wait passes its deadline -> continuation.
  await h.admin('POST', '/faults', { method: 'PATCH', pathPrefix: '/v2/sub', status: 429, retryAfter: 20, count: 1 });
  const del = h.event(SUB, 'Delete', SUB_PROPS, { PhysicalResourceId: INVENTED });
  const delAnswer = await onEvent(del, left(15_000));
  expect(delAnswer).toEqual({ PhysicalResourceId: INVENTED, Data: { [CONTINUATION_KEY]: 'waiting' } });
  // The Create's waiter polls once more: stale, it fails ("moved on") -- but its lease take rewrote lastCreate.
  await expect(isComplete(completeEvent(create, { PhysicalResourceId: create.RequestId, Data: { [CONTINUATION_KEY]: 'waiting' } }), left(600_000)))
    .rejects.toThrow(/moved on/);
  const deleted = await isComplete(completeEvent(del, delAnswer), left(600_000));
  expect(deleted).toMatchObject({ IsComplete: true, PhysicalResourceId: INVENTED });
  expect(deliveries.activeMade()).toEqual([]); // fails: the Create's subscription is still active and claimed
  deliveries.unchanged(other);
}, 120_000);

test('R3: a replacing pipeline Update that continued after its unified POST, then UPDATE_ROLLBACK: the new pipeline is removed', async () => {
  const PIPE = ResourceTypes.NOTIFICATION_PIPELINE;
  const base = { ...SELLER_PIPELINE };
  const created = await onEvent(h.event(PIPE, 'Create', base), left(600_000));
  const vendor = { ...base, RemoteIdentityId: '363', AccountType: 'vendor', NotificationTypes: ['REPORT_PROCESSING_FINISHED', 'ITEM_SALES_EVENT_CHANGE'] };
  // The new pipeline's product-107 subscription POST meets a 429 whose wait passes the deadline: the Update continues.
  await h.admin('POST', '/faults', { method: 'POST', pathPrefix: '/v2/sub', status: 429, retryAfter: 20, count: 1 });
  const update = h.event(PIPE, 'Update', vendor, { PhysicalResourceId: created.PhysicalResourceId, OldResourceProperties: { Connection: h.connection, ...base } });
  const answer = await onEvent(update, left(15_000));
  expect(answer).toEqual({ PhysicalResourceId: created.PhysicalResourceId, Data: { [CONTINUATION_KEY]: 'waiting' } });
  expect(h.state().pipelines).toHaveLength(2);
  // A sibling fails: UPDATE_ROLLBACK sends the old properties back with the old physical ID, between two polls.
  await onEvent(h.event(PIPE, 'Update', base, { PhysicalResourceId: created.PhysicalResourceId, OldResourceProperties: { Connection: h.connection, ...vendor } }), left(600_000));
  await expect(isComplete(completeEvent(update, answer), left(600_000))).rejects.toThrow(/moved on/);
  // CloudFormation never learned of the vendor pipeline: nothing will ever send its Delete.
  expect(h.state().pipelines.map((p: any) => p.remoteIdentityId)).toEqual([362]); // fails: [362, 363]
}, 120_000);

test('R4: the installed provider framework starts its waiter without an execution name (a named one would fail a second delivery)', () => {
  // Where aws-cdk-lib keeps the framework's runtime (2.257-2.276: custom-resources/lib; other versions bundle it under
  // custom-resource-handlers/dist).
  const root = dirname(require.resolve('aws-cdk-lib/package.json'));
  const path = ['custom-resources/lib/provider-framework/runtime/framework.js', 'custom-resource-handlers/dist/custom-resources/provider-framework/framework.js']
    .map((f) => join(root, f)).find((f) => existsSync(f));
  expect(path).toBeDefined();
  const framework = readFileSync(path!, 'utf8');
  const waiter = /const waiter\s*=\s*\{([^}]*)\}/.exec(framework);
  expect(waiter?.[1]).toContain('stateMachineArn');
  // A name (aws-cdk-lib sources that use `name: resourceEvent.RequestId`) makes StartExecution fail with
  // ExecutionAlreadyExists when a second delivery's input differs: docs/handler.md relies on unnamed executions.
  expect(waiter?.[1]).not.toMatch(/\bname\s*:/);
});

test('R4: a second delivery of a Create that continued answers exactly as the first did (the waiter input is the same)', async () => {
  await h.admin('POST', '/faults', { method: 'POST', pathPrefix: '/v2/sub', status: 429, retryAfter: 20, count: 1 });
  const event = h.event(SUB, 'Create', SUB_PROPS);
  const first = await onEvent(event, left(15_000));
  expect(first.Data).toEqual({ [CONTINUATION_KEY]: 'waiting' });
  // Lambda's retry or a second delivery of the same request: the rate limit lets it through now, it finishes the work.
  const second = await onEvent(event, left(600_000));
  expect(second).toEqual(first);
  const done = await isComplete(completeEvent(event, second), left(600_000));
  expect(done).toMatchObject({ IsComplete: true, PhysicalResourceId: expect.stringMatching(/^\d+$/) });
  expect(await posts()).toBe(1);
}, 120_000);

test('a container stopped mid-continuation: the framework answers FAILED with the Create\'s request ID, and the rollback Delete ends what it made', async () => {
  const other = await deliveries.bystander();
  const before = await posts();
  await h.admin('POST', '/faults', { method: 'PATCH', pathPrefix: '/v2/sub', status: 429, retryAfter: 20, count: 1 });
  const create = h.event(SUB, 'Create', { ...SUB_PROPS, Status: 'paused' });
  const answer = await onEvent(create, left(15_000));
  expect(answer).toEqual({ PhysicalResourceId: create.RequestId, Data: { [CONTINUATION_KEY]: 'waiting' } });
  expect(await posts()).toBe(before + 1);
  // The isComplete container is stopped at its timeout: invokeUserFunction throws on the FunctionError and the framework
  // answers FAILED at once with the event's physical ID (the Create's request ID); no poll follows. CloudFormation's
  // rollback Delete carries that ID (not the CREATE_FAILED marker, so it reaches the handler: the non-numeric path).
  const del = h.event(SUB, 'Delete', { ...SUB_PROPS, Status: 'paused' }, { PhysicalResourceId: create.RequestId });
  expect(await onEvent(del, left(600_000))).toEqual({ PhysicalResourceId: create.RequestId });
  expect(deliveries.activeMade()).toEqual([]);
  expect(h.state().subscriptions.filter((s: any) => s.id >= 9001 && s.status !== 'invalid' && String(s.id) !== other.id)).toEqual([]);
  deliveries.unchanged(other);
}, 120_000);

test('a replacing subscription Update that continued after its POST, then UPDATE_ROLLBACK: the new subscription is ended', async () => {
  const created = await onEvent(h.event(SUB, 'Create', SUB_PROPS), left(600_000));
  // Another identity: a replacement. Its POST succeeds; the PATCH to `paused` meets a 429 whose wait passes the deadline.
  const moved = { ...SUB_PROPS, RemoteIdentityId: '363', Status: 'paused' };
  await h.admin('POST', '/faults', { method: 'PATCH', pathPrefix: '/v2/sub', status: 429, retryAfter: 20, count: 1 });
  const update = h.event(SUB, 'Update', moved, { PhysicalResourceId: created.PhysicalResourceId, OldResourceProperties: { Connection: h.connection, ...SUB_PROPS } });
  const answer = await onEvent(update, left(15_000));
  expect(answer).toEqual({ PhysicalResourceId: created.PhysicalResourceId, Data: { [CONTINUATION_KEY]: 'waiting' } });
  expect(await posts()).toBe(2);
  // A sibling fails: UPDATE_ROLLBACK sends the old properties back with the old physical ID, between two polls.
  await onEvent(h.event(SUB, 'Update', SUB_PROPS, { PhysicalResourceId: created.PhysicalResourceId, OldResourceProperties: { Connection: h.connection, ...moved } }), left(600_000));
  await expect(isComplete(completeEvent(update, answer), left(600_000))).rejects.toThrow(/moved on/);
  // CloudFormation never learned of the replacement: nothing will ever send its Delete, so the rollback ended it.
  const live = h.state().subscriptions.filter((s: any) => s.id >= 9001 && s.status !== 'invalid').map((s: any) => String(s.id));
  expect(live).toEqual([created.PhysicalResourceId]);
}, 120_000);
