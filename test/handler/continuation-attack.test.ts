/** A principal of the account who can invoke isComplete or write the journal: forged continuations and planted leases change nothing and stall nothing past the hour. */
import { DynamoDBClient, PutItemCommand } from '@aws-sdk/client-dynamodb';
import { delay, SUB_PROPS } from './delivery-helpers';
import { HandlerHarness, useHandlerHarness } from './helpers';
import { CONTINUATION_ENV, REQUEST_BUDGET_ENV } from '../../src/contract';
import { configureLocalRuntime, isComplete, onEvent } from '../../src/handler';
import { CONTINUATION_KEY } from '../../src/handler/continuation';
import { DEADLINE_MARGIN_MS } from '../../src/handler/runtime';
import { ResourceTypes } from '../../src/kinds';

jest.setTimeout(120_000);
const SUB = ResourceTypes.SUBSCRIPTION;
let h: HandlerHarness;
useHandlerHarness((started) => { h = started; }, { resetEach: true });
const left = (ms: number): { getRemainingTimeInMillis: () => number } => ({ getRemainingTimeInMillis: () => DEADLINE_MARGIN_MS + ms });
function provider(seconds: number): void {
  configureLocalRuntime({ ...h.runtime(), environment: () => ({ ...h.environment(), [REQUEST_BUDGET_ENV]: `1/${seconds}`, [CONTINUATION_ENV]: '1' }) });
}
beforeEach(() => { h.onSleep = (ms) => delay(ms); });
afterEach(() => { h.onSleep = undefined; h.configure(); });
const S = (v: string): { S: string } => ({ S: v });

test('a forged continuation with a request type onEvent refuses is refused by isComplete too', async () => {
  provider(0.5);
  const made = await onEvent(h.event(SUB, 'Create', SUB_PROPS), left(600_000));
  const before = JSON.stringify(h.state().subscriptions);
  const bogus = {
    ...h.event(SUB, 'Create', { ...SUB_PROPS, Status: 'paused' }),
    RequestType: 'Bogus' as any,
    PhysicalResourceId: made.PhysicalResourceId,
    Data: { [CONTINUATION_KEY]: 'waiting' },
  };
  await expect(onEvent({ ...bogus, Data: undefined } as any, left(600_000))).rejects.toThrow(/unknown request type/);
  const r = await isComplete(bogus, left(600_000)).then((x) => `ok ${JSON.stringify(x)}`, (e: Error) => `failed: ${e.message}`);
  expect(r).toMatch(/unknown request type/);
  expect(JSON.stringify(h.state().subscriptions)).toBe(before);
});

test('a planted live lease (journal write) past CloudFormation\'s hour: the continuation fails, it does not poll on', async () => {
  provider(0.5);
  const event = h.event(SUB, 'Create', SUB_PROPS);
  const answer = await onEvent(event, left(800));
  expect(answer.Data).toEqual({ [CONTINUATION_KEY]: 'waiting' });
  const t = Date.now();
  const c = new DynamoDBClient({ endpoint: h.journal.endpoint, region: 'us-east-1', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } });
  // Same request ID (looks like a second waiter), since = now, expiry 10 min ahead, request started 2 hours ago.
  await c.send(new PutItemCommand({
    TableName: h.journalTable,
    Item: {
      pk: S(`lease#HandlerTest/${event.LogicalResourceId}`),
      sk: S('lease'),
      holder: S(`${event.RequestId}|planted`),
      requestId: S(event.RequestId),
      requestType: S('Create'),
      since: S(new Date(t).toISOString()),
      requestSince: S(new Date(t - 2 * 3600_000).toISOString()),
      expiresAt: S(new Date(t + 10 * 60_000).toISOString()),
      version: { N: '99' },
    },
  }));
  c.destroy();
  const r = await isComplete({ ...event, PhysicalResourceId: answer.PhysicalResourceId, Data: answer.Data }, left(600_000))
    .then((x) => `ok ${JSON.stringify(x)}`, (e: Error) => `failed: ${e.message}`);
  expect(r).toMatch(/failed: .*waited/);
});
