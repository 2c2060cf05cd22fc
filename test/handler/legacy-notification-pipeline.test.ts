import { HandlerHarness, SELLER_PIPELINE, useHandlerHarness } from './helpers';
import { ResourceTypes } from '../../src/kinds';

const T = ResourceTypes.LEGACY_NOTIFICATION_PIPELINE;
const QUEUE = 'arn:aws:sqs:us-east-1:123456789012:legacy-notifications';
const QUEUE2 = 'arn:aws:sqs:us-east-1:123456789012:legacy-notifications-2';
const BASE0 = { SubscriptionId: '8601', RemoteIdentityId: '364', QueueArn: QUEUE, NotificationTypes: ['ORDER_CHANGE', 'FEED_PROCESSING_FINISHED'], Retired: 'false' };
const BASE = BASE0;

let h: HandlerHarness;
useHandlerHarness((started) => {
  h = started;
}, { resetEach: true });

const legacyOf = (state: any): any => state.legacyPipelines.find((p: any) => p.subscriptionId === 8601);
const sub8601 = (state: any): any => state.subscriptions.find((s: any) => s.id === 8601);
const old = (props: Record<string, unknown>): Record<string, unknown> => ({ Connection: h.connection, ...props });

describe('Custom::DpiLegacyNotificationPipeline', () => {
  test('adopting changes nothing; an unchanged Update makes no call; a changed Update PATCHes the pipeline and stores its result (two calls)', async () => {
    const before = legacyOf(h.state());
    const subBefore = sub8601(h.state());
    const c = await h.onEvent(h.event(T, 'Create', { ...BASE, NotificationTypes: ['ORDER_CHANGE'] }));
    expect(c.PhysicalResourceId).toBe('8601');
    // Only reads: the subscription (exists, this account's) and the product-86 listing (the reads need not show the product).
    expect((await h.requests()).filter((x) => x.path !== '/auth/api/ref').map((x) => `${x.method} ${x.path}`))
      .toEqual(['GET /sub/8601', 'GET /v2/sub']);
    expect(legacyOf(h.state())).toEqual(before);
    expect(sub8601(h.state())).toEqual(subBefore);
    // The journal takes the declared queue and types as what the service has, and claims the subscription.
    let recs = await h.journalRecords();
    expect(recs).toHaveLength(1);
    expect(recs[0]).toMatchObject({ state: 'active', physicalId: '8601', doc: { identity: '364', applied: { queueArn: QUEUE, types: ['ORDER_CHANGE'] } } });
    expect(await h.journalOwner('sub', '8601')).toBe('HandlerTest/Resource');

    await h.clearRequests();
    await h.onEvent(h.event(T, 'Update', { ...BASE, NotificationTypes: ['ORDER_CHANGE'] },
      { PhysicalResourceId: '8601', OldResourceProperties: old({ ...BASE, NotificationTypes: ['ORDER_CHANGE'] }) }));
    expect(await h.changingRequests()).toEqual([]);
    expect((await h.requests()).filter((x) => x.path !== '/auth/api/ref').map((x) => `${x.method} ${x.path}`)).toEqual(['GET /sub/8601']);

    await h.onEvent(h.event(T, 'Update', { ...BASE, QueueArn: QUEUE2 },
      { PhysicalResourceId: '8601', OldResourceProperties: old({ ...BASE, NotificationTypes: ['ORDER_CHANGE'] }) }));
    expect(await h.changingRequests()).toEqual(['PATCH /service/sp/notifications/364/8601 200', 'PATCH /v2/sub/8601 200']);
    const l = legacyOf(h.state());
    expect(l.queueArn).toBe(QUEUE2);
    expect(Object.keys(l.subscriptions).sort()).toEqual(['FEED_PROCESSING_FINISHED', 'ORDER_CHANGE']);
    // The subscription stores the upstream result and the queue destination (kept for cleanup).
    const pp = sub8601(h.state()).product_parameters;
    expect(JSON.parse(pp.subscriptions)).toEqual(l.subscriptions);
    expect(pp.destination_id).toBe(String(l.destinationId));
    // The journal holds what the PATCH confirmed.
    recs = await h.journalRecords();
    expect(recs).toHaveLength(1);
    expect(recs[0].doc.applied).toEqual({ queueArn: QUEUE2, types: BASE.NotificationTypes });
    expect(recs[0].doc.result.subscriptions).toEqual(l.subscriptions);
  });

  test('changes are judged against the journal, not the previous properties: a repeated rollback delivery makes no call', async () => {
    await h.onEvent(h.event(T, 'Create', BASE));
    await h.onEvent(h.event(T, 'Update', { ...BASE, QueueArn: QUEUE2 }, { PhysicalResourceId: '8601', OldResourceProperties: old(BASE) }));
    expect(legacyOf(h.state()).queueArn).toBe(QUEUE2);
    // UPDATE_ROLLBACK back to the first queue: the two calls.
    await h.clearRequests();
    const rollback = h.event(T, 'Update', BASE, { PhysicalResourceId: '8601', OldResourceProperties: old({ ...BASE, QueueArn: QUEUE2 }) });
    await h.onEvent(rollback);
    expect(await h.changingRequests()).toEqual(['PATCH /service/sp/notifications/364/8601 200', 'PATCH /v2/sub/8601 200']);
    expect(legacyOf(h.state()).queueArn).toBe(QUEUE);
    // The same delivery again (its response was lost): the journal already has the first queue.
    await h.clearRequests();
    await h.onEvent({ ...rollback, RequestId: 'again' });
    expect(await h.changingRequests()).toEqual([]);
    expect((await h.journalRecords())[0].doc.applied.queueArn).toBe(QUEUE);
  });

  test('retire: DELETE legacy + subscription invalid, which unblocks a unified pipeline; rollback restores it', async () => {
    await h.onEvent(h.event(T, 'Create', BASE));
    await h.clearRequests();
    const r = await h.onEvent(h.event(T, 'Update', { ...BASE, Retired: 'true' }, { PhysicalResourceId: '8601', OldResourceProperties: old(BASE) }));
    expect(r.PhysicalResourceId).toBe('8601');
    expect(await h.changingRequests()).toEqual(['DELETE /service/sp/notifications/364/8601 204', 'PATCH /v2/sub/8601 200']);
    let state = h.state();
    expect(legacyOf(state)).toBeUndefined();
    expect(sub8601(state).status).toBe('invalid');
    expect((await h.journalRecords()).map((x) => x.state)).toEqual(['retired']);

    // The unified pipeline of the same identity can now be created.
    const unified = await h.onEvent(h.event(ResourceTypes.NOTIFICATION_PIPELINE, 'Create', { ...SELLER_PIPELINE, RemoteIdentityId: '364' },
      { LogicalResourceId: 'Unified' }));
    expect(unified.PhysicalResourceId).toMatch(/^\d+$/);
    await h.onEvent(h.event(ResourceTypes.NOTIFICATION_PIPELINE, 'Delete', {}, { LogicalResourceId: 'Unified', PhysicalResourceId: unified.PhysicalResourceId }));

    // Retiring again and deleting a retired resource make no call.
    await h.clearRequests();
    await h.onEvent(h.event(T, 'Update', { ...BASE, Retired: 'true' }, { PhysicalResourceId: '8601', OldResourceProperties: old({ ...BASE, Retired: 'true' }) }));
    await h.onEvent(h.event(T, 'Delete', { ...BASE, Retired: 'true' }, { PhysicalResourceId: '8601' }));
    expect(await h.changingRequests()).toEqual([]);

    // Rollback of the retirement (old Retired true, new false) restores the pipeline.
    await h.onEvent(h.event(T, 'Update', BASE, { PhysicalResourceId: '8601', OldResourceProperties: old({ ...BASE, Retired: 'true' }) }));
    state = h.state();
    expect(sub8601(state).status).toBe('active');
    expect(Object.keys(legacyOf(state).subscriptions).sort()).toEqual(['FEED_PROCESSING_FINISHED', 'ORDER_CHANGE']);
  });

  test('Create with Retired true retires at once', async () => {
    await h.onEvent(h.event(T, 'Create', { ...BASE, Retired: 'true' }));
    expect(legacyOf(h.state())).toBeUndefined();
    expect(sub8601(h.state()).status).toBe('invalid');
  });

  test('Delete without a policy or with retain releases the legacy pipeline: no call, it keeps running, another stack may adopt it', async () => {
    await h.onEvent(h.event(T, 'Create', BASE));
    await h.clearRequests();
    await h.onEvent(h.event(T, 'Delete', BASE, { PhysicalResourceId: '8601' }));
    expect(await h.changingRequests()).toEqual([]);
    expect(sub8601(h.state()).status).toBe('active');
    expect(legacyOf(h.state())).toBeDefined();
    expect((await h.journalRecords()).map((x) => x.state)).toEqual(['released']);
    await h.onEvent(h.event(T, 'Create', { ...BASE, RemovalPolicy: 'retain' }, { LogicalResourceId: 'Other' }));
    expect((await h.journalRecords('Other')).map((x) => x.state)).toEqual(['active']);
    await h.onEvent(h.event(T, 'Delete', { ...BASE, RemovalPolicy: 'retain' }, { LogicalResourceId: 'Other', PhysicalResourceId: '8601' }));
    expect(await h.changingRequests()).toEqual([]);
  });

  test('Delete with an explicit destroy policy removes the legacy pipeline; unknown and placeholder IDs succeed; a 403 fails', async () => {
    const DESTROY = { ...BASE0, RemovalPolicy: 'destroy' };
    await h.onEvent(h.event(T, 'Create', DESTROY));
    await h.clearRequests();
    await h.onEvent(h.event(T, 'Delete', DESTROY, { PhysicalResourceId: '8601' }));
    expect(await h.changingRequests()).toEqual(['DELETE /service/sp/notifications/364/8601 204', 'PATCH /v2/sub/8601 200']);
    expect(legacyOf(h.state())).toBeUndefined();
    expect(sub8601(h.state()).status).toBe('invalid');
    expect((await h.journalRecords()).map((x) => x.state)).toEqual(['deleted']);
    await h.clearRequests();
    for (const id of ['424242', 'placeholder-id']) await h.onEvent(h.event(T, 'Delete', DESTROY, { PhysicalResourceId: id }));
    // Another account's legacy pipeline: without this resource's claim, left without a call; with it, the 403 fails.
    await h.onEvent(h.event(T, 'Delete', DESTROY, { PhysicalResourceId: '8701' }));
    await h.seedClaim('sub', '8701');
    expect(await h.fails(h.event(T, 'Delete', DESTROY, { PhysicalResourceId: '8701' }))).toContain('(403');
    expect(await h.changingRequests()).toEqual([]);
  });

  test('it never creates: unknown, foreign or non-legacy subscriptions fail clearly', async () => {
    expect(await h.fails(h.event(T, 'Create', { ...BASE, SubscriptionId: '424242' })))
      .toContain('legacy subscription 424242 does not exist; a LegacyNotificationPipeline can only adopt');
    expect(await h.fails(h.event(T, 'Create', { ...BASE, SubscriptionId: '8701' }))).toContain('belongs to another account');
    const sub = await h.api('POST', '/v2/sub', {
      data: {
        type: 'Subscription',
        attributes: {
          account: 1001,
          user: 2001,
          product: 3002,
          status: 'active',
          date_start: '2026-01-01T00:00:00Z',
          remote_identity: 365,
          product_parameters: { profile_id: '1' },
        },
      },
    });
    expect(sub.status).toBe(201);
    expect(await h.fails(h.event(T, 'Create', { ...BASE, SubscriptionId: sub.body.data.id })))
      .toContain('not a legacy notification pipeline (product 86)');
    expect(await h.changingRequests()).toEqual(['POST /v2/sub 201']);
  });

  test('an invalid type in a changed Update is reported with the service message', async () => {
    await h.onEvent(h.event(T, 'Create', BASE));
    await h.clearRequests();
    const bad = { ...BASE, NotificationTypes: ['ITEM_SALES_EVENT_CHANGE'] };
    const reason = await h.fails(h.event(T, 'Update', bad, { PhysicalResourceId: '8601', OldResourceProperties: old(BASE) }));
    expect(reason).toContain("notification type 'ITEM_SALES_EVENT_CHANGE' is not supported for seller accounts");
    // Nothing changed: the pipeline, the stored parameters and the journal keep the adopted state.
    expect(Object.keys(legacyOf(h.state()).subscriptions).sort()).toEqual(['FEED_PROCESSING_FINISHED', 'ORDER_CHANGE']);
    expect((await h.journalRecords())[0].doc.applied).toEqual({ queueArn: QUEUE, types: BASE.NotificationTypes });
    expect(await h.changingRequests()).toEqual(['PATCH /service/sp/notifications/364/8601 400']);
  });
});
