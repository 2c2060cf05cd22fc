import { Harness, useHarness } from './helpers';

let h: Harness;
useHarness((started) => {
  h = started;
}, {}, { reset: true });

const L = '/service/sp/notifications';
const QUEUE = 'arn:aws:sqs:us-east-1:123456789012:my-queue';
const body = (attrs: Record<string, unknown>) => ({ data: { type: 'Service', attributes: { queue_arn: QUEUE, ...attrs } } });

describe('legacy notifications (product 86)', () => {
  test('default fixtures hold an existing legacy pipeline for identity 364', async () => {
    const st = await h.state();
    expect(st.legacyPipelines).toHaveLength(1);
    expect(st.upstreamSubscriptions.filter((u: any) => u.legacySubscriptionId === 8601).map((u: any) => u.notificationType).sort())
      .toEqual(['FEED_PROCESSING_FINISHED', 'ORDER_CHANGE']);
  });

  test('list types requires account_type', async () => {
    const r = await h.api('GET', `${L}/list-notification-types?account_type=seller`);
    expect(r.body.data.attributes.notification_types).toContain('ORDER_CHANGE');
    expect((await h.api('GET', `${L}/list-notification-types`)).status).toBe(400);
  });

  test('PATCH deletes and re-creates: new destination and subscriptions', async () => {
    const before = await h.state();
    const oldDest = before.legacyPipelines[0].destinationId;
    const r = await h.api('PATCH', `${L}/364/8601`, body({ notification_types: ['REPORT_PROCESSING_FINISHED'] }));
    expect(r.status).toBe(200);
    expect(r.body.data.type).toBe('SPAPINotifications');
    expect(Object.keys(r.body.data.attributes.subscriptions)).toEqual(['REPORT_PROCESSING_FINISHED']);
    expect(r.body.data.attributes.destination_id).not.toBe(oldDest);
    const st = await h.state();
    expect(st.destinations.find((d: any) => d.id === oldDest)).toBeUndefined();
    expect(st.destinations.find((d: any) => d.id === r.body.data.attributes.destination_id).arn).toBe(QUEUE);
    expect(st.upstreamSubscriptions.filter((u: any) => u.legacySubscriptionId === 8601)).toHaveLength(1);
  });

  test('every type must be valid for the account type; queue_arn required', async () => {
    const r = await h.api('PATCH', `${L}/364/8601`, body({ notification_types: ['ORDER_CHANGE', 'ITEM_SALES_EVENT_CHANGE'] }));
    expect(r.status).toBe(400);
    expect(r.body.errors[0].detail).toMatch(/ITEM_SALES_EVENT_CHANGE/);
    expect((await h.state()).upstreamSubscriptions.filter((u: any) => u.legacySubscriptionId === 8601)).toHaveLength(2);
    expect((await h.api('PATCH', `${L}/364/8601`, body({ queue_arn: undefined, notification_types: ['ORDER_CHANGE'] }))).status).toBe(400);
    expect((await h.api('PATCH', `${L}/364/8601`, body({ queue_arn: 'not-an-arn', notification_types: ['ORDER_CHANGE'] }))).status).toBe(400);
  });

  test('non-seller identities are treated as vendor', async () => {
    await h.admin('POST', '/fixtures', {
      subscriptions: [{ id: 8602, account: 1001, user: 2001, product: 86, status: 'active', remote_identity: 365, product_parameters: { remote_identity_id: '365' } }],
    });
    expect((await h.api('PATCH', `${L}/365/8602`, body({ notification_types: ['ORDER_CHANGE'] }))).status).toBe(400);
    expect((await h.api('PATCH', `${L}/365/8602`, body({ notification_types: ['ITEM_SALES_EVENT_CHANGE'] }))).status).toBe(200);
  });

  test('ownership: other account 403, wrong identity 403, wrong product 403', async () => {
    const b = body({ notification_types: ['ORDER_CHANGE'] });
    expect((await h.other('PATCH', `${L}/364/8601`, b)).status).toBe(403);
    expect((await h.api('PATCH', `${L}/362/8601`, b)).status).toBe(403);
    expect((await h.other('PATCH', `${L}/372/8701`, b)).status).toBe(403);
    expect((await h.other('DELETE', `${L}/364/8601`)).status).toBe(403);
  });

  test('DELETE removes upstream subscriptions and the destination -> 204', async () => {
    const r = await h.api('DELETE', `${L}/364/8601`);
    expect(r.status).toBe(204);
    const st = await h.state();
    expect(st.legacyPipelines).toHaveLength(0);
    expect(st.upstreamSubscriptions.filter((u: any) => u.legacySubscriptionId === 8601)).toHaveLength(0);
    expect(st.destinations.filter((d: any) => d.legacySubscriptionId === 8601)).toHaveLength(0);
  });
});
