import { createSub, Harness, useHarness } from './helpers';

let h: Harness;
useHarness((started) => {
  h = started;
}, {}, { reset: true });

const ACCT = '123456789012';
const ROLE = `arn:aws:iam::${ACCT}:role/dpi-management`;
const EB_ROLE = `arn:aws:iam::${ACCT}:role/dpi-eventbus-to-firehose`;
const U = '/service/sp/notifications-unified';
const body = (attrs: Record<string, unknown>) => ({
  data: { type: 'Service', attributes: { role_arn: ROLE, eb_to_fh_role_arn: EB_ROLE, aws_region: 'us-east-1', ...attrs } },
});

/** What the handler does: POST, then store the result in a product-107 subscription. */
async function createPipeline(rid: number, types: string[], extra: Record<string, unknown> = {}): Promise<{ sid: number; res: any }> {
  const r = await h.api('POST', `${U}/${rid}`, body({ notification_types: types, ...extra }));
  expect(r.status).toBe(207);
  const a = r.body.data.attributes;
  const sid = await createSub(h, {
    product: 107,
    remote_identity: rid,
    product_parameters: { subscriptions: JSON.stringify(a.subscriptions), meta: JSON.stringify(a.meta), notification_types: JSON.stringify(types) },
  });
  return { sid, res: r.body };
}

describe('list types', () => {
  test('seller and vendor lists; 400 when missing or invalid', async () => {
    const s = await h.api('GET', `${U}/list-notification-types?account_type=seller`);
    expect(s.status).toBe(200);
    expect(s.body.data.type).toBe('SPAPINotifications');
    expect(s.body.data.attributes.notification_types).toEqual(expect.arrayContaining(['ORDER_CHANGE', 'FEED_PROCESSING_FINISHED', 'REPORT_PROCESSING_FINISHED']));
    expect(s.body.data.attributes.notification_types).not.toContain('ITEM_SALES_EVENT_CHANGE');
    const v = (await h.api('GET', `${U}/list-notification-types?account_type=vendor`)).body.data.attributes.notification_types;
    expect(v).toEqual(['REPORT_PROCESSING_FINISHED', 'DETAIL_PAGE_TRAFFIC_EVENT', 'ITEM_INVENTORY_EVENT_CHANGE', 'ITEM_SALES_EVENT_CHANGE']);
    expect((await h.api('GET', `${U}/list-notification-types`)).status).toBe(400);
    expect((await h.api('GET', `${U}/list-notification-types?account_type=buyer`)).status).toBe(400);
  });
});

describe('create', () => {
  test('207 with subscriptions, empty failed and the meta of both paths; resources recorded', async () => {
    const r = await h.api('POST', `${U}/362`, body({ notification_types: ['ORDER_CHANGE', 'FEED_PROCESSING_FINISHED'] }));
    expect(r.status).toBe(207);
    const a = r.body.data.attributes;
    expect(r.body.data.type).toBe('SPAPINotifications');
    expect(Object.keys(a.subscriptions).sort()).toEqual(['FEED_PROCESSING_FINISHED', 'ORDER_CHANGE']);
    expect(a.failed).toEqual({});
    for (const k of ['shared_pipeline_id', 's3_bucket_name', 's3_notification_prefix', 's3_notification_queue_arn', 's3_notification_configuration_id',
      'sqs_destination_id', 'eventbridge_destination_id', 'sqs_queue_arn', 'eventbridge_pipe_arn', 'firehose_arn', 'eventbridge_pipeline_id',
      'event_bus_name', 'eventbridge_rule_id', 'eventbridge_target_id']) {
      expect(typeof a.meta[k]).toBe('string');
    }
    const st = await h.state();
    const kinds = st.cloud.map((c: any) => c.kind).sort();
    expect(kinds).toEqual(expect.arrayContaining(['s3-bucket', 'event-bus', 'eventbridge-rule', 'eventbridge-target', 'pipe', 'firehose-delivery-stream',
      's3-notification-configuration', 'sqs-queue', 's3-object']));
    expect(st.upstreamSubscriptions.filter((u: any) => u.remoteIdentityId === 362 && u.enabled)).toHaveLength(2);
    const sqsSub = st.upstreamSubscriptions.find((u: any) => u.remoteIdentityId === 362 && u.notificationType === 'FEED_PROCESSING_FINISHED');
    expect(sqsSub.destinationId).toBe(a.meta.sqs_destination_id);
  });

  test('queue-only: no event-bus meta, eb_to_fh_role_arn not needed', async () => {
    const r = await h.api('POST', `${U}/362`, { data: { type: 'Service', attributes: { notification_types: ['FEED_PROCESSING_FINISHED'], role_arn: ROLE, aws_region: 'us-west-2' } } });
    expect(r.status).toBe(207);
    expect(r.body.data.attributes.meta.eventbridge_rule_id).toBeUndefined();
    expect(r.body.data.attributes.meta.sqs_destination_id).toBeDefined();
  });

  test('vendor identity gets vendor types only', async () => {
    expect((await h.api('POST', `${U}/363`, body({ notification_types: ['ITEM_SALES_EVENT_CHANGE', 'REPORT_PROCESSING_FINISHED'] }))).status).toBe(207);
    const bad = await h.api('POST', `${U}/363`, body({ notification_types: ['ORDER_CHANGE'] }));
    expect(bad.status).toBe(400);
    expect(bad.body.errors[0].detail).toMatch(/ORDER_CHANGE/);
  });

  test.each([
    ['empty types', { notification_types: [] }, 400, /notification_types/],
    ['unknown type', { notification_types: ['NOPE'] }, 400, /NOPE/],
    ['missing role', { notification_types: ['ORDER_CHANGE'], role_arn: undefined }, 400, /role_arn/],
    ['missing eb role for event-bus type', { notification_types: ['ORDER_CHANGE'], eb_to_fh_role_arn: undefined }, 400, /eb_to_fh_role_arn/],
    ['bad region', { notification_types: ['ORDER_CHANGE'], aws_region: 'eu-west-1' }, 400, /aws_region/],
    ['queue_arn is not unified', { notification_types: ['ORDER_CHANGE'], queue_arn: 'arn:aws:sqs:us-east-1:123456789012:q' }, 400, /queue_arn/],
    ['role not registered', { notification_types: ['ORDER_CHANGE'], role_arn: `arn:aws:iam::${ACCT}:role/unknown` }, 403, /assume/],
    ['role of another cloud account', { notification_types: ['ORDER_CHANGE'], role_arn: 'arn:aws:iam::999999999999:role/dpi-management' }, 403, /assume/],
  ])('%s', async (_n, attrs, status, msg) => {
    const r = await h.api('POST', `${U}/362`, body(attrs));
    expect(r.status).toBe(status);
    expect(r.body.errors[0].detail).toMatch(msg);
    expect((await h.state()).pipelines).toHaveLength(0);
  });

  test('identity checks: non-SP type 400, unknown 404, another account 403', async () => {
    expect((await h.api('POST', `${U}/365`, body({ notification_types: ['ORDER_CHANGE'] }))).status).toBe(400);
    expect((await h.api('POST', `${U}/999`, body({ notification_types: ['ORDER_CHANGE'] }))).status).toBe(404);
    expect((await h.api('POST', `${U}/372`, body({ notification_types: ['ORDER_CHANGE'] }))).status).toBe(403);
  });

  test('a role that does not trust the service -> 403', async () => {
    await h.admin('POST', '/fixtures', { cloudRoles: [{ accountId: ACCT, roleArn: `arn:aws:iam::${ACCT}:role/untrusting`, trustsService: false }] });
    const r = await h.api('POST', `${U}/362`, body({ notification_types: ['ORDER_CHANGE'], role_arn: `arn:aws:iam::${ACCT}:role/untrusting` }));
    expect(r.status).toBe(403);
  });

  test('active legacy pipeline (product 86) blocks creation', async () => {
    const r = await h.api('POST', `${U}/364`, body({ notification_types: ['ORDER_CHANGE'] }));
    expect(r.status).toBe(400);
    expect(r.body.errors[0].detail).toMatch(/legacy.*product 86/);
  });

  test('event-bus types need the service-spapi-firehose-role', async () => {
    // A second customer cloud account with the management and event-bus roles but no delivery role.
    const other = '210987654321';
    await h.admin('POST', '/fixtures', {
      cloudRoles: [
        { accountId: other, roleArn: `arn:aws:iam::${other}:role/mgmt`, trustsService: true },
        { accountId: other, roleArn: `arn:aws:iam::${other}:role/eb`, trustsService: true },
      ],
    });
    const r = await h.api('POST', `${U}/362`, body({
      notification_types: ['ORDER_CHANGE', 'FEED_PROCESSING_FINISHED'], role_arn: `arn:aws:iam::${other}:role/mgmt`, eb_to_fh_role_arn: `arn:aws:iam::${other}:role/eb`,
    }));
    expect(r.status).toBe(400);
    expect(r.body.errors[0].detail).toMatch(/service-spapi-firehose-role/);
    expect(r.body.failed.ORDER_CHANGE).toBeDefined();
    const after = await h.state();
    expect(after.cloud.filter((c: any) => c.accountId === other && !c.shared)).toHaveLength(0);
    expect(after.upstreamSubscriptions.filter((u: any) => u.remoteIdentityId === 362)).toHaveLength(0);
    // Queue-only still works in that account.
    const q = await h.api('POST', `${U}/362`, body({ notification_types: ['FEED_PROCESSING_FINISHED'], role_arn: `arn:aws:iam::${other}:role/mgmt` }));
    expect(q.status).toBe(207);
  });

  test('per-type failures: 207 with failed; a whole failed path -> 400', async () => {
    await h.admin('POST', '/fixtures', { failingNotificationTypes: ['LISTINGS_ITEM_STATUS_CHANGE'] });
    const r = await h.api('POST', `${U}/362`, body({ notification_types: ['ORDER_CHANGE', 'LISTINGS_ITEM_STATUS_CHANGE'] }));
    expect(r.status).toBe(207);
    expect(Object.keys(r.body.data.attributes.subscriptions)).toEqual(['ORDER_CHANGE']);
    expect(r.body.data.attributes.failed.LISTINGS_ITEM_STATUS_CHANGE.message).toMatch(/failed/);
    await h.admin('POST', '/fixtures', { failingNotificationTypes: ['FEED_PROCESSING_FINISHED'] });
    const all = await h.api('POST', `${U}/363`, body({ notification_types: ['REPORT_PROCESSING_FINISHED', 'ITEM_SALES_EVENT_CHANGE'] }));
    expect(all.status).toBe(207);
    const whole = await h.api('POST', `${U}/362`, body({ notification_types: ['FEED_PROCESSING_FINISHED', 'ORDER_CHANGE'] }));
    expect(whole.status).toBe(400);
    expect(whole.body.errors[0].detail).toMatch(/FEED_PROCESSING_FINISHED/);
  });

  test('reuses an upstream subscription at the expected destination; conflicts at another', async () => {
    const first = await h.api('POST', `${U}/362`, body({ notification_types: ['ORDER_CHANGE'] }));
    const again = await h.api('POST', `${U}/362`, body({ notification_types: ['ORDER_CHANGE'] }));
    expect(again.status).toBe(207);
    expect(again.body.data.attributes.subscriptions.ORDER_CHANGE).toBe(first.body.data.attributes.subscriptions.ORDER_CHANGE);
    // Queue types go to a per-pipeline destination: a second pipeline conflicts.
    await h.api('POST', `${U}/362`, body({ notification_types: ['FEED_PROCESSING_FINISHED'] }));
    const conflict = await h.api('POST', `${U}/362`, body({ notification_types: ['FEED_PROCESSING_FINISHED'] }));
    expect(conflict.status).toBe(400);
    expect(conflict.body.errors[0].detail).toMatch(/different destination/);
  });
});

describe('update and delete', () => {
  test('ownership: other account, identity or product -> 403; unknown -> 404', async () => {
    const { sid } = await createPipeline(362, ['ORDER_CHANGE']);
    const b = body({ notification_types: ['ORDER_CHANGE'] });
    expect((await h.other('PATCH', `${U}/362/${sid}`, b)).status).toBe(403);
    expect((await h.api('PATCH', `${U}/363/${sid}`, b)).status).toBe(403);
    expect((await h.api('PATCH', `${U}/364/8601`, b)).status).toBe(403);
    expect((await h.api('PATCH', `${U}/362/987654`, b)).status).toBe(404);
    expect((await h.other('DELETE', `${U}/362/${sid}`)).status).toBe(403);
    expect((await h.api('DELETE', `${U}/363/${sid}`)).status).toBe(403);
  });

  test('update keeps the queue path when account and region are unchanged and a queue type remains', async () => {
    const { sid, res } = await createPipeline(362, ['ORDER_CHANGE', 'FEED_PROCESSING_FINISHED']);
    const m0 = res.data.attributes.meta;
    const r = await h.api('PATCH', `${U}/362/${sid}`, body({ notification_types: ['FEED_PROCESSING_FINISHED', 'LISTINGS_ITEM_STATUS_CHANGE'] }));
    expect(r.status).toBe(207);
    const a = r.body.data.attributes;
    expect(a.meta.sqs_destination_id).toBe(m0.sqs_destination_id);
    expect(a.meta.sqs_queue_arn).toBe(m0.sqs_queue_arn);
    expect(a.meta.s3_notification_prefix).toBe(m0.s3_notification_prefix);
    expect(a.subscriptions.FEED_PROCESSING_FINISHED).toBe(res.data.attributes.subscriptions.FEED_PROCESSING_FINISHED);
    const st = await h.state();
    const ups = st.upstreamSubscriptions.filter((u: any) => u.remoteIdentityId === 362);
    expect(ups.map((u: any) => u.notificationType).sort()).toEqual(['FEED_PROCESSING_FINISHED', 'LISTINGS_ITEM_STATUS_CHANGE']);
    expect(ups.every((u: any) => u.enabled)).toBe(true);
  });

  test('update recreates the pipeline when the region changes', async () => {
    const { sid, res } = await createPipeline(362, ['FEED_PROCESSING_FINISHED']);
    const m0 = res.data.attributes.meta;
    const r = await h.api('PATCH', `${U}/362/${sid}`, body({ notification_types: ['FEED_PROCESSING_FINISHED'], aws_region: 'us-west-2' }));
    expect(r.status).toBe(207);
    const m1 = r.body.data.attributes.meta;
    expect(m1.sqs_destination_id).not.toBe(m0.sqs_destination_id);
    expect(m1.s3_bucket_name).toContain('us-west-2');
    const st = await h.state();
    expect(st.cloud.filter((c: any) => c.pipelineId === m0.pipeline_id)).toHaveLength(0);
    expect(st.destinations.find((d: any) => d.id === m0.sqs_destination_id)).toBeUndefined();
  });

  test('update without a queue type recreates the pipeline and re-enables the event-bus subscription at the shared destination', async () => {
    const { sid, res } = await createPipeline(362, ['ORDER_CHANGE', 'FEED_PROCESSING_FINISHED']);
    const a0 = res.data.attributes;
    const r = await h.api('PATCH', `${U}/362/${sid}`, body({ notification_types: ['ORDER_CHANGE'] }));
    expect(r.status).toBe(207);
    const a1 = r.body.data.attributes;
    expect(a1.meta.pipeline_id).not.toBe(a0.meta.pipeline_id);
    expect(a1.meta.sqs_destination_id).toBeUndefined();
    expect(a1.meta.eventbridge_destination_id).toBe(a0.meta.eventbridge_destination_id);
    expect(a1.subscriptions.ORDER_CHANGE).toBe(a0.subscriptions.ORDER_CHANGE);
    const st = await h.state();
    const ups = st.upstreamSubscriptions.filter((u: any) => u.remoteIdentityId === 362);
    expect(ups.map((u: any) => [u.notificationType, u.enabled])).toEqual([['ORDER_CHANGE', true]]);
    expect(st.cloud.filter((c: any) => c.pipelineId === a0.meta.pipeline_id)).toHaveLength(0);
  });

  test('update disables old upstream subscriptions first; a failing creation leaves them disabled (not atomic)', async () => {
    const { sid } = await createPipeline(362, ['ORDER_CHANGE']);
    await h.admin('POST', '/fixtures', { failingNotificationTypes: ['LISTINGS_ITEM_STATUS_CHANGE'] });
    const r = await h.api('PATCH', `${U}/362/${sid}`, body({ notification_types: ['LISTINGS_ITEM_STATUS_CHANGE'] }));
    expect(r.status).toBe(400);
    const st = await h.state();
    const old = st.upstreamSubscriptions.find((u: any) => u.remoteIdentityId === 362 && u.notificationType === 'ORDER_CHANGE');
    expect(old.enabled).toBe(false);
  });

  test('update: a cleanup failure is returned and creation not attempted', async () => {
    const { sid } = await createPipeline(362, ['ORDER_CHANGE']);
    await h.admin('POST', '/fixtures', { failingCleanupSubscriptions: [sid] });
    const before = await h.state();
    const r = await h.api('PATCH', `${U}/362/${sid}`, body({ notification_types: ['LISTINGS_ITEM_STATUS_CHANGE'] }));
    expect(r.status).toBe(400);
    expect(r.body.errors[0].detail).toMatch(/cleanup/);
    expect((await h.state()).upstreamSubscriptions).toEqual(before.upstreamSubscriptions);
    expect((await h.api('DELETE', `${U}/362/${sid}`)).status).toBe(400);
  });

  test('delete removes pipeline resources and upstream subscriptions, keeps the shared ones', async () => {
    const { sid, res } = await createPipeline(362, ['ORDER_CHANGE', 'FEED_PROCESSING_FINISHED']);
    const pid = res.data.attributes.meta.pipeline_id;
    const r = await h.api('DELETE', `${U}/362/${sid}`);
    expect(r.status).toBe(204);
    const st = await h.state();
    expect(st.cloud.filter((c: any) => c.pipelineId === pid)).toHaveLength(0);
    expect(st.cloud.filter((c: any) => c.accountId === ACCT).map((c: any) => c.kind).sort()).toEqual(['event-bus', 's3-bucket', 's3-object']);
    expect(st.upstreamSubscriptions.filter((u: any) => u.remoteIdentityId === 362)).toHaveLength(0);
    expect(st.destinations.filter((d: any) => d.kind === 'eventbridge' && d.shared)).toHaveLength(1);
    expect(st.destinations.find((d: any) => d.id === res.data.attributes.meta.sqs_destination_id)).toBeUndefined();
    expect(st.cloudRoles).toHaveLength(3);
  });

  test('delete answers 400 when the stored metadata is missing or invalid', async () => {
    // Product 107 requires its metadata on create; a record without it can only come from fixtures.
    expect((await h.api('POST', '/v2/sub', {
      data: { type: 'Subscription', attributes: { account: 1001, user: 2001, product: 107, status: 'active', date_start: '2026-01-01T00:00:00Z', remote_identity: 362 } },
    })).status).toBe(400);
    await h.admin('POST', '/fixtures', {
      subscriptions: [
        { id: 9501, account: 1001, user: 2001, product: 107, remote_identity: 362, product_parameters: { remote_identity_id: '362' } },
        { id: 9502, account: 1001, user: 2001, product: 107, remote_identity: 362, product_parameters: { remote_identity_id: '362', subscriptions: '{"ORDER_CHANGE":"upstream-1"}', meta: 'not json' } },
      ],
    });
    const none = await h.api('DELETE', `${U}/362/9501`);
    expect(none.status).toBe(400);
    expect(none.body.errors[0].detail).toMatch(/missing or invalid stored metadata \(subscriptions\)/);
    const r = await h.api('DELETE', `${U}/362/9502`);
    expect(r.status).toBe(400);
    expect(r.body.errors[0].detail).toMatch(/missing or invalid stored metadata \(meta\)/);
  });
});
