import { daysAgo, HandlerHarness, SELLER_PIPELINE, useHandlerHarness } from './helpers';
import { CfnEvent } from '../../src/handler';
import { dynamoJournal } from '../../src/handler/journal';
import { ResourceTypes } from '../../src/kinds';

/**
 * Counts the service calls the handler makes per lifecycle event (from the emulator's request log) and
 * prints them as a table (docs/handler.md reports these numbers). The Connection carries AccountId/UserId;
 * the token exchange (one per warm container) is counted separately.
 */
let h: HandlerHarness;
useHandlerHarness((started) => {
  h = started;
});

interface Row { resource: string; event: string; reads: number; writes: number; calls: string[] }

describe('service calls per lifecycle event', () => {
  test('table', async () => {
    const rows: Row[] = [];
    let auth = 0;
    const conn = (): Record<string, string> => ({ ...h.connection, AccountId: '1001', UserId: '2001' });
    const ev = (type: string, rt: CfnEvent['RequestType'], props: Record<string, unknown>, extra: Partial<CfnEvent> = {}): CfnEvent => {
      const e = h.event(type, rt, props, extra);
      e.ResourceProperties.Connection = conn();
      if (e.OldResourceProperties) e.OldResourceProperties.Connection = conn();
      return e;
    };
    // The steady state: the journal already knows that the service narrows its lists to an identity (learned by the
    // first subscription create of a product, with two more lists: src/handler/narrowing.ts, test/handler/ownership.test.ts).
    const journal = dynamoJournal({ create: true, table: h.journalTable, endpoint: h.journal.endpoint, sleep: async () => undefined });
    for (const product of [107, 3001]) await journal.setFact(`sub#${product}`, `narrows#${h.emu.url}`, 'yes');
    const measure = async (resource: string, event: string, e: CfnEvent, complete = false): Promise<string> => {
      await h.clearRequests();
      const r = await h.onEvent(e);
      if (complete) await h.isComplete({ ...e, PhysicalResourceId: r.PhysicalResourceId, Data: r.Data });
      const reqs = await h.requests();
      auth += reqs.filter((x) => x.path === '/auth/api/ref').length;
      const calls = reqs.filter((x) => x.path !== '/auth/api/ref');
      rows.push({
        resource,
        event,
        reads: calls.filter((x) => x.method === 'GET').length,
        writes: calls.filter((x) => x.method !== 'GET').length,
        calls: calls.map((x) => `${x.method} ${x.path.replace(/\/\d{4,}|\/h-\d+|\/j-\d+/g, '/{id}')}`),
      });
      return r.PhysicalResourceId;
    };

    // Notification pipeline.
    const NP = ResourceTypes.NOTIFICATION_PIPELINE;
    const np = { ...SELLER_PIPELINE };
    const np2 = { ...np, NotificationTypes: ['ORDER_CHANGE', 'FEED_PROCESSING_FINISHED'] };
    const npId = await measure('NotificationPipeline', 'Create', ev(NP, 'Create', np));
    await measure('NotificationPipeline', 'Update (no change)', ev(NP, 'Update', np, { PhysicalResourceId: npId, OldResourceProperties: np }));
    await measure('NotificationPipeline', 'Update (types)', ev(NP, 'Update', np2, { PhysicalResourceId: npId, OldResourceProperties: np }));
    await measure('NotificationPipeline', 'Delete', ev(NP, 'Delete', np2, { PhysicalResourceId: npId }));

    // Legacy pipeline.
    const LP = ResourceTypes.LEGACY_NOTIFICATION_PIPELINE;
    const lp = { SubscriptionId: '8601', RemoteIdentityId: '364', QueueArn: 'arn:aws:sqs:us-east-1:123456789012:legacy-notifications', NotificationTypes: ['ORDER_CHANGE'], Retired: 'false' };
    await measure('LegacyNotificationPipeline', 'Create (adopt)', ev(LP, 'Create', lp));
    await measure('LegacyNotificationPipeline', 'Update (no change)', ev(LP, 'Update', lp, { PhysicalResourceId: '8601', OldResourceProperties: lp }));
    await measure('LegacyNotificationPipeline', 'Update (retire)', ev(LP, 'Update', { ...lp, Retired: 'true' }, { PhysicalResourceId: '8601', OldResourceProperties: lp }));
    await measure('LegacyNotificationPipeline', 'Delete (retired)', ev(LP, 'Delete', { ...lp, Retired: 'true' }, { PhysicalResourceId: '8601' }));

    // Subscription.
    const S = ResourceTypes.SUBSCRIPTION;
    const sp = { ProductId: '3001', RemoteIdentityId: '362', StorageGroupId: '501', ProductParameters: { marketplace_id: 'ATVPDKIKX0DER' }, StageIds: ['1000'], Status: 'active', OnDelete: 'invalid' };
    const subId = await measure('Subscription', 'Create', ev(S, 'Create', sp));
    await measure('Subscription', 'Update (no change)', ev(S, 'Update', sp, { PhysicalResourceId: subId, OldResourceProperties: sp }));
    await measure('Subscription', 'Update (pause)', ev(S, 'Update', { ...sp, Status: 'paused' }, { PhysicalResourceId: subId, OldResourceProperties: sp }));
    await measure('Subscription', 'Update (parameters)', ev(S, 'Update', { ...sp, Status: 'paused', StageIds: ['1001'] },
      { PhysicalResourceId: subId, OldResourceProperties: { ...sp, Status: 'paused' } }));
    await h.onEvent(ev(S, 'Update', sp, { PhysicalResourceId: subId, OldResourceProperties: { ...sp, Status: 'paused' } }));

    // History request (waits for completion: one isComplete poll after the clock moved on).
    const H = ResourceTypes.HISTORY_REQUEST;
    const hp = { SubscriptionId: subId, StartDate: daysAgo(6), EndDate: daysAgo(5), WaitForCompletion: 'false', TimeoutSeconds: '600' };
    const hId = await measure('HistoryRequest', 'Create (no wait)', ev(H, 'Create', hp), true);
    await measure('HistoryRequest', 'Update (no change)', ev(H, 'Update', { ...hp, TimeoutSeconds: '900' }, { PhysicalResourceId: hId, OldResourceProperties: hp }));
    await measure('HistoryRequest', 'Delete (pending)', ev(H, 'Delete', hp, { PhysicalResourceId: hId }));
    const hw = { ...hp, StartDate: daysAgo(4), EndDate: daysAgo(4), WaitForCompletion: 'true' };
    const e = ev(H, 'Create', hw, { LogicalResourceId: 'Waiting' });
    await h.clearRequests();
    const r = await h.onEvent(e);
    await h.admin('POST', '/clock', { advance: 400 });
    await h.clearRequests();
    expect(await h.isComplete({ ...e, PhysicalResourceId: r.PhysicalResourceId, Data: r.Data })).toMatchObject({ IsComplete: true });
    // The clock back: the order jobs below send today's date (the handler's), which the emulator checks by its clock
    // (moved 400 s on, it would be tomorrow in the last minutes of a day).
    await h.admin('POST', '/clock', { advance: -400 });
    const polls = (await h.requests()).filter((x) => x.path !== '/auth/api/ref');
    rows.push({ resource: 'HistoryRequest', event: 'isComplete (one poll)', reads: polls.length, writes: 0, calls: polls.map((x) => `${x.method} ${x.path.replace(/\/\d{4,}|\/h-\d+/g, '/{id}')}`) });

    // Order jobs.
    const O = ResourceTypes.PRODUCT_ORDER_JOBS;
    const ids = (n: number, from = 0): string[] => Array.from({ length: n }, (_, i) => `123-${1000000 + from + i}-${7000000 + from + i}`);
    const op = { SubscriptionId: subId, OrderIds: ids(250) };
    const jobId = await measure('ProductOrderJobs', 'Create (250 IDs)', ev(O, 'Create', op));
    await measure('ProductOrderJobs', 'Update (+10 IDs)', ev(O, 'Update', { ...op, OrderIds: [...op.OrderIds, ...ids(10, 900)] }, { PhysicalResourceId: jobId, OldResourceProperties: op }));
    await measure('ProductOrderJobs', 'Delete', ev(O, 'Delete', op, { PhysicalResourceId: jobId }));
    await measure('Subscription', 'Delete', ev(S, 'Delete', sp, { PhysicalResourceId: subId }));

    const lines = [
      '| Resource | Event | Reads | Writes | Calls |',
      '|---|---|---|---|---|',
      ...rows.map((x) => `| ${x.resource} | ${x.event} | ${x.reads} | ${x.writes} | ${summarize(x.calls)} |`),
    ];
    // eslint-disable-next-line no-console
    console.info(`${lines.join('\n')}\n\nToken exchanges over all ${rows.length} events (one warm container): ${auth}`);

    const counts = Object.fromEntries(rows.map((x) => [`${x.resource} ${x.event}`, [x.reads, x.writes]]));
    expect(counts).toEqual(EXPECTED);
    // Which calls: no decision reads more than a subscription's status (`GET /sub/{id}`); the rest comes from the journal.
    expect(Object.fromEntries(rows.map((x) => [`${x.resource} ${x.event}`, summarize(x.calls)]))).toEqual(EXPECTED_CALLS);
    expect(auth).toBe(1);
  });
});

function summarize(calls: string[]): string {
  const out: string[] = [];
  for (const c of calls) {
    const last = out[out.length - 1];
    const m = last ? /^(.*?)(?: x(\d+))?$/.exec(last)! : undefined;
    if (m && m[1] === c) out[out.length - 1] = `${c} x${Number(m[2] ?? 1) + 1}`;
    else out.push(c);
  }
  return out.join(', ');
}

const EXPECTED: Record<string, [number, number]> = {
  'NotificationPipeline Create': [3, 2],
  'NotificationPipeline Update (no change)': [1, 0],
  'NotificationPipeline Update (types)': [1, 2],
  'NotificationPipeline Delete': [1, 2],
  'LegacyNotificationPipeline Create (adopt)': [2, 0],
  'LegacyNotificationPipeline Update (no change)': [1, 0],
  'LegacyNotificationPipeline Update (retire)': [1, 2],
  'LegacyNotificationPipeline Delete (retired)': [0, 0],
  'Subscription Create': [4, 1],
  'Subscription Update (no change)': [1, 0],
  'Subscription Update (pause)': [1, 1],
  'Subscription Update (parameters)': [3, 1],
  'HistoryRequest Create (no wait)': [3, 1],
  'HistoryRequest Update (no change)': [1, 0],
  'HistoryRequest Delete (pending)': [1, 1],
  'HistoryRequest isComplete (one poll)': [1, 0],
  'ProductOrderJobs Create (250 IDs)': [1, 3],
  'ProductOrderJobs Update (+10 IDs)': [1, 1],
  'ProductOrderJobs Delete': [0, 0],
  'Subscription Delete': [2, 1],
};

const EXPECTED_CALLS: Record<string, string> = {
  'NotificationPipeline Create': 'GET /v2/product/107, GET /ri/362, POST /service/sp/notifications-unified/362, GET /v2/sub, POST /v2/sub',
  'NotificationPipeline Update (no change)': 'GET /sub/{id}',
  'NotificationPipeline Update (types)': 'GET /sub/{id}, PATCH /service/sp/notifications-unified/362/{id}, PATCH /v2/sub/{id}',
  'NotificationPipeline Delete': 'GET /sub/{id}, DELETE /service/sp/notifications-unified/362/{id}, PATCH /v2/sub/{id}',
  'LegacyNotificationPipeline Create (adopt)': 'GET /sub/{id}, GET /v2/sub',
  'LegacyNotificationPipeline Update (no change)': 'GET /sub/{id}',
  'LegacyNotificationPipeline Update (retire)': 'GET /sub/{id}, DELETE /service/sp/notifications/364/{id}, PATCH /v2/sub/{id}',
  'LegacyNotificationPipeline Delete (retired)': '',
  'Subscription Create': 'GET /v2/product/{id}, GET /service/products/product/{id}/payloads, GET /ri/362, GET /v2/sub, POST /v2/sub',
  'Subscription Update (no change)': 'GET /sub/{id}',
  'Subscription Update (pause)': 'GET /sub/{id}, PATCH /v2/sub/{id}',
  'Subscription Update (parameters)': 'GET /sub/{id}, GET /v2/product/{id}, GET /service/products/product/{id}/payloads, PATCH /v2/sub/{id}',
  'HistoryRequest Create (no wait)': 'GET /sub/{id}, GET /service/product-cards/card/{id}, GET /service/history/production/history/status/{id}, POST /service/history/production/history/{id}',
  'HistoryRequest Update (no change)': 'GET /service/history/production/history/{id}',
  'HistoryRequest Delete (pending)': 'GET /service/history/production/history/{id}, PATCH /service/history/production/history/{id}',
  'HistoryRequest isComplete (one poll)': 'GET /service/history/production/history/{id}',
  'ProductOrderJobs Create (250 IDs)': 'GET /service/jobs/jobs, POST /service/jobs/jobs/{id} x3',
  'ProductOrderJobs Update (+10 IDs)': 'GET /service/jobs/jobs, POST /service/jobs/jobs/{id}',
  'ProductOrderJobs Delete': '',
  'Subscription Delete': 'GET /sub/{id}, PATCH /v2/sub/{id}, GET /service/history/production/history/status/{id}',
};
