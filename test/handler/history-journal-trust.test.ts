/**
 * A HistoryRequest Create that finds its request already made in the journal (a duplicate delivery, a poll of a
 * continued Create) trusts the journal no further than a handler could have written it: the request must be claimed
 * by this resource (or unclaimed: claimed now), and a `madeAt` that is not a time, or one from the future, does not
 * decide how long the request has been waited for.
 */
import { DynamoDBClient, UpdateItemCommand } from '@aws-sdk/client-dynamodb';
import { left, polled, useContinuingProvider } from './continuation-helpers';
import { delay } from './delivery-helpers';
import { daysAgo, HandlerHarness, useHandlerHarness } from './helpers';
import { CfnEvent, isComplete, onEvent, OnEventResult } from '../../src/handler';
import { ResourceTypes } from '../../src/kinds';

const HIST = ResourceTypes.HISTORY_REQUEST;
let h: HandlerHarness;
useHandlerHarness((s) => { h = s; }, { resetEach: true });

useContinuingProvider(() => h);

/** Sets one string attribute of a journal item, as any writer of the table can. */
async function setAttribute(pk: string, sk: string, name: string, value: string): Promise<void> {
  const c = new DynamoDBClient({ endpoint: h.journal.endpoint, region: 'us-east-1', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } });
  try {
    await c.send(new UpdateItemCommand({
      TableName: h.journalTable,
      Key: { pk: { S: pk }, sk: { S: sk } },
      UpdateExpression: 'SET #n = :v',
      ExpressionAttributeNames: { '#n': name },
      ExpressionAttributeValues: { ':v': { S: value } },
    }));
  } finally {
    c.destroy();
  }
}

/** A continued Create whose first poll made the request (pending): the event, its answer and the request's ID. */
async function continuedAndMade(timeoutSeconds: string): Promise<{ event: CfnEvent; answer: OnEventResult; id: string }> {
  const subId = await h.subscribe(3001, 362, { marketplace_id: 'ATVPDKIKX0DER' });
  await h.admin('POST', '/faults', { method: 'POST', pathPrefix: '/service/history/', status: 429, retryAfter: 20, count: 1 });
  const event = h.event(HIST, 'Create', { SubscriptionId: subId, StartDate: daysAgo(10), EndDate: daysAgo(5), StageId: '1000', WaitForCompletion: 'true', TimeoutSeconds: timeoutSeconds });
  const answer = await onEvent(event, left(15_000));
  expect(await isComplete(polled(event, answer), left(600_000))).toEqual({ IsComplete: false });
  expect(h.state().history).toHaveLength(1);
  return { event, answer, id: String(h.state().history[0].id) };
}

test('a recorded request that another resource claims is not taken: the poll fails, nothing is changed', async () => {
  const { event, answer, id } = await continuedAndMade('3000');
  await setAttribute(`claim#history#${id}`, 'claim', 'owner', 'OtherStack/Backfill');
  await expect(isComplete(polled(event, answer), left(600_000))).rejects.toThrow(/OtherStack\/Backfill claims it: it is not taken/);
  expect(h.state().history.map((x: any) => x.status)).toEqual(['pending']);
}, 120_000);

test.each([['not a time', 'zzz'], ['from the future', '2999-01-01T00:00:00.000Z']])(
  'a madeAt %s does not decide the wait: TimeoutSeconds counts from the record', async (_what, planted) => {
    const { event, answer } = await continuedAndMade('2');
    const [rec] = await h.journalRecords();
    await setAttribute(rec.pk, rec.sk, 'doc', JSON.stringify({ ...rec.doc, madeAt: planted }));
    expect(await isComplete(polled(event, answer), left(600_000))).toEqual({ IsComplete: false });
    await delay(2_400);
    await expect(isComplete(polled(event, answer), left(600_000))).rejects.toThrow(/still pending after 2 s/);
  }, 120_000);
