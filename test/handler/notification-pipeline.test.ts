import { EB_ROLE, HandlerHarness, ROLE, useHandlerHarness } from './helpers';
import { runDpi } from '../../src/cli/program';
import { DEFAULT_CLOUD_ACCOUNT, DEFAULT_FIXTURES } from '../../src/emulator';
import { ResourceTypes } from '../../src/kinds';
import { serviceRemovesUnrecordedPipelines } from '../faults/operator';

const T = ResourceTypes.NOTIFICATION_PIPELINE;
const BASE = {
  RemoteIdentityId: '362',
  AccountType: 'seller',
  NotificationTypes: ['ORDER_CHANGE', 'FEED_PROCESSING_FINISHED'],
  RoleArn: ROLE,
  EbToFhRoleArn: EB_ROLE,
  DeploymentRegion: 'us-east-1',
  StorageGroupId: '501',
  Name: 'Seller notifications',
  PartialFailure: 'FAIL',
};

let h: HandlerHarness;
useHandlerHarness((started) => {
  h = started;
}, { resetEach: true });
beforeEach(async () => {
  h.configure();
  h.callerAccount = DEFAULT_CLOUD_ACCOUNT;
});

function pipelineResources(state: any): any[] {
  return state.cloud.filter((r: any) => !r.shared);
}

function subOf(state: any, id: string): any {
  return state.subscriptions.find((s: any) => String(s.id) === id);
}

describe('Custom::DpiNotificationPipeline', () => {
  test('create, update, delete: stored metadata, PATCH with the full body, nothing pipeline-specific left', async () => {
    const created = await h.onEvent(h.event(T, 'Create', BASE));
    const id = created.PhysicalResourceId;
    expect(id).toMatch(/^\d+$/);
    let state = h.state();
    const sub = subOf(state, id);
    expect(sub.product).toBe(107);
    expect(sub.status).toBe('active');
    expect(sub.storage_group).toBe(501);
    expect(sub.name).toBe('Seller notifications');
    // Only the keys the service reads (product 107's required_meta_fields and the default mapping): no marker,
    // no selection (the journal keeps those).
    expect(Object.keys(sub.product_parameters).sort()).toEqual(['meta', 'remote_identity_id', 'subscriptions']);
    expect(Object.keys(JSON.parse(sub.product_parameters.subscriptions)).sort()).toEqual(['FEED_PROCESSING_FINISHED', 'ORDER_CHANGE']);
    const meta = JSON.parse(sub.product_parameters.meta);
    expect(created.Data).toMatchObject({
      SubscriptionId: id,
      SubscribedTypes: 'ORDER_CHANGE,FEED_PROCESSING_FINISHED',
      FailedTypes: '',
      BucketName: meta.s3_bucket_name,
      Prefix: meta.s3_notification_prefix,
      NotificationQueueArn: meta.s3_notification_queue_arn,
      DeliveryStreamArn: meta.firehose_arn,
      SharedPipelineId: meta.shared_pipeline_id,
      EventBusName: meta.event_bus_name,
      EventBridgeRuleId: meta.eventbridge_rule_id,
      EventBridgeDestinationId: meta.eventbridge_destination_id,
      SqsDestinationId: meta.sqs_destination_id,
    });
    // Both paths are in this selection: every handle of the construct has a value.
    for (const k of ['EventBusName', 'EventBridgeRuleId', 'EventBridgeDestinationId', 'SqsDestinationId', 'DeliveryStreamArn']) {
      expect([k, created.Data![k]]).toEqual([k, expect.stringMatching(/.+/)]);
    }
    expect(state.pipelines).toHaveLength(1);
    expect(pipelineResources(state).length).toBeGreaterThan(0);

    // Update: add a type -> PATCH unified, then the stored metadata.
    await h.clearRequests();
    const types2 = ['ORDER_CHANGE', 'FEED_PROCESSING_FINISHED', 'LISTINGS_ITEM_STATUS_CHANGE'];
    const updated = await h.onEvent(h.event(T, 'Update', { ...BASE, NotificationTypes: types2 },
      { PhysicalResourceId: id, OldResourceProperties: { Connection: h.connection, ...BASE } }));
    expect(updated.PhysicalResourceId).toBe(id);
    expect(updated.Data!.SubscribedTypes.split(',').sort()).toEqual([...types2].sort());
    expect(await h.changingRequests()).toEqual([
      `PATCH /service/sp/notifications-unified/362/${id} 207`,
      `PATCH /v2/sub/${id} 200`,
    ]);
    state = h.state();
    expect(Object.keys(JSON.parse(subOf(state, id).product_parameters.subscriptions)).sort()).toEqual([...types2].sort());
    expect(state.pipelines[0].notificationTypes.sort()).toEqual([...types2].sort());
    // The queue path was kept (same prefix).
    expect(updated.Data!.Prefix).toBe(created.Data!.Prefix);

    // An Update that changes nothing relevant (PartialFailure only) makes no changing call.
    await h.clearRequests();
    const same = await h.onEvent(h.event(T, 'Update', { ...BASE, NotificationTypes: types2, PartialFailure: 'ALLOW' },
      { PhysicalResourceId: id, OldResourceProperties: { Connection: h.connection, ...BASE, NotificationTypes: types2 } }));
    expect(same.PhysicalResourceId).toBe(id);
    expect(same.Data!.Prefix).toBe(created.Data!.Prefix);
    expect(await h.changingRequests()).toEqual([]);

    // Delete.
    await h.clearRequests();
    await h.onEvent(h.event(T, 'Delete', { ...BASE, NotificationTypes: types2 }, { PhysicalResourceId: id }));
    expect(await h.changingRequests()).toEqual([
      `DELETE /service/sp/notifications-unified/362/${id} 204`,
      `PATCH /v2/sub/${id} 200`,
    ]);
    state = h.state();
    expect(subOf(state, id).status).toBe('invalid');
    expect(pipelineResources(state)).toEqual([]);
    expect(state.pipelines).toEqual([]);
    expect(state.upstreamSubscriptions.filter((u: any) => u.remoteIdentityId === 362)).toEqual([]);
    // The shared bucket is retained.
    expect(state.cloud.some((r: any) => r.kind === 's3-bucket')).toBe(true);

    // A second Delete (or a Delete after the resource is gone) succeeds without a changing call.
    await h.clearRequests();
    await h.onEvent(h.event(T, 'Delete', BASE, { PhysicalResourceId: id }));
    expect(await h.changingRequests()).toEqual([]);
  });

  test('a duplicate Create (same StackId and LogicalResourceId) finds the first pipeline', async () => {
    const a = await h.onEvent(h.event(T, 'Create', BASE));
    const b = await h.onEvent(h.event(T, 'Create', BASE));
    expect(b.PhysicalResourceId).toBe(a.PhysicalResourceId);
    expect(b.Data).toEqual(a.Data);
    const state = h.state();
    expect(state.pipelines).toHaveLength(1);
    expect(state.subscriptions.filter((s: any) => s.product === 107)).toHaveLength(1);
    const posts = (await h.requests()).filter((r) => r.method === 'POST' && r.path.startsWith('/service/sp/notifications-unified'));
    expect(posts).toHaveLength(1);
  });

  test('Delete of a placeholder physical ID (a cancelled or failed Create) succeeds without a call', async () => {
    await h.clearRequests();
    for (const id of ['HandlerTest-Resource-1A2B3C4D', 'arn:aws:cloudformation:placeholder', '0', '99999']) {
      await h.onEvent(h.event(T, 'Delete', BASE, { PhysicalResourceId: id }));
    }
    expect(await h.changingRequests()).toEqual([]);
  });

  test('PartialFailure FAIL: a 207 with failed types undoes everything and names each reason', async () => {
    await h.admin('POST', '/fixtures', { failingNotificationTypes: ['LISTINGS_ITEM_ISSUES_CHANGE'] });
    const reason = await h.fails(h.event(T, 'Create', { ...BASE, NotificationTypes: ['ORDER_CHANGE', 'LISTINGS_ITEM_ISSUES_CHANGE'] }));
    expect(reason).toContain('LISTINGS_ITEM_ISSUES_CHANGE: upstream subscription for LISTINGS_ITEM_ISSUES_CHANGE failed');
    expect(reason).toContain('partialFailure ALLOW');
    const state = h.state();
    expect(state.pipelines).toEqual([]);
    expect(pipelineResources(state)).toEqual([]);
    expect(state.subscriptions.filter((s: any) => s.product === 107).map((s: any) => s.status)).toEqual(['invalid']);
    expect(state.upstreamSubscriptions.filter((u: any) => u.remoteIdentityId === 362)).toEqual([]);
  });

  test('PartialFailure ALLOW: the pipeline stays and FailedTypes lists the failures', async () => {
    await h.admin('POST', '/fixtures', { failingNotificationTypes: ['LISTINGS_ITEM_ISSUES_CHANGE'] });
    const r = await h.onEvent(h.event(T, 'Create', {
      ...BASE, PartialFailure: 'ALLOW', NotificationTypes: ['ORDER_CHANGE', 'LISTINGS_ITEM_ISSUES_CHANGE'],
    }));
    expect(r.Data).toMatchObject({ SubscribedTypes: 'ORDER_CHANGE', FailedTypes: 'LISTINGS_ITEM_ISSUES_CHANGE' });
    expect(subOf(h.state(), r.PhysicalResourceId).status).toBe('active');
  });

  test('a failed Update is undone by the rollback Update (old and new swapped)', async () => {
    const created = await h.onEvent(h.event(T, 'Create', BASE));
    const id = created.PhysicalResourceId;
    await h.admin('POST', '/fixtures', { failingNotificationTypes: ['LISTINGS_ITEM_ISSUES_CHANGE'] });
    const bad = { ...BASE, NotificationTypes: ['ORDER_CHANGE', 'LISTINGS_ITEM_ISSUES_CHANGE'] };
    const reason = await h.fails(h.event(T, 'Update', bad, { PhysicalResourceId: id, OldResourceProperties: { Connection: h.connection, ...BASE } }));
    expect(reason).toContain('LISTINGS_ITEM_ISSUES_CHANGE');
    expect(reason).toContain('rollback restores');
    // FEED_PROCESSING_FINISHED was dropped by the failed update.
    let state = h.state();
    expect(state.upstreamSubscriptions.filter((u: any) => u.remoteIdentityId === 362 && u.enabled).map((u: any) => u.notificationType))
      .toEqual(['ORDER_CHANGE']);
    // Rollback.
    const rolled = await h.onEvent(h.event(T, 'Update', BASE, { PhysicalResourceId: id, OldResourceProperties: { Connection: h.connection, ...bad } }));
    expect(rolled.PhysicalResourceId).toBe(id);
    state = h.state();
    expect(state.upstreamSubscriptions.filter((u: any) => u.remoteIdentityId === 362 && u.enabled).map((u: any) => u.notificationType).sort())
      .toEqual(['FEED_PROCESSING_FINISHED', 'ORDER_CHANGE']);
    expect(Object.keys(JSON.parse(subOf(state, id).product_parameters.subscriptions)).sort()).toEqual(['FEED_PROCESSING_FINISHED', 'ORDER_CHANGE']);
    expect(rolled.Data!.SubscribedTypes.split(',').sort()).toEqual(['FEED_PROCESSING_FINISHED', 'ORDER_CHANGE']);
    // And the restored pipeline can still be deleted cleanly (the stored metadata follows every PATCH).
    await h.onEvent(h.event(T, 'Delete', BASE, { PhysicalResourceId: id }));
    expect(pipelineResources(h.state())).toEqual([]);
  });

  test('429 with Retry-After is retried (honouring the wait)', async () => {
    await h.admin('POST', '/faults', { pathPrefix: '/service/sp/notifications-unified/362', method: 'POST', status: 429, retryAfter: 2, count: 1 });
    h.slept.length = 0;
    const r = await h.onEvent(h.event(T, 'Create', BASE));
    expect(r.PhysicalResourceId).toMatch(/^\d+$/);
    const posts = (await h.requests()).filter((x) => x.method === 'POST' && x.path === '/service/sp/notifications-unified/362');
    expect(posts.map((p) => p.status)).toEqual([429, 207]);
    // The Retry-After (2 s) with up to +15% jitter (never below it).
    expect(h.slept.filter((ms) => ms >= 2000 && ms <= 2300)).toHaveLength(1);
    expect(h.logs.some((l) => l.includes('"msg":"retry"') && l.includes('429'))).toBe(true);
    expect(h.logs.filter((l) => l.includes('"msg":"rate limited"') && l.includes('"path":"/service/sp/notifications-unified/362"'))).toHaveLength(1);
  });

  test('403 role assumption: actionable reason, nothing made', async () => {
    const reason = await h.fails(h.event(T, 'Create', { ...BASE, RoleArn: `arn:aws:iam::${DEFAULT_CLOUD_ACCOUNT}:role/missing` }));
    expect(reason).toMatch(/role assumption failed/);
    expect(reason).toContain('ExternalId');
    expect(reason).toContain('role/missing');
    // The unified POST comes first: nothing was made, no product-107 subscription either.
    expect(h.state().subscriptions.filter((s: any) => s.product === 107)).toEqual([]);
    expect(h.state().pipelines).toEqual([]);
  });

  test('an active legacy pipeline blocks the unified create: the reason says to retire it', async () => {
    const reason = await h.fails(h.event(T, 'Create', { ...BASE, RemoteIdentityId: '364' }));
    expect(reason).toContain('identity 364 has an active legacy (product 86) notification pipeline; retire it first with LegacyNotificationPipeline retired: true');
    expect(reason).toContain('depend on it');
    expect(reason.length).toBeLessThanOrEqual(500);
  });

  test('STS preflight: a role of another AWS account fails before any service call', async () => {
    h.callerAccount = '210987654321';
    await h.clearRequests();
    const reason = await h.fails(h.event(T, 'Create', BASE));
    expect(reason).toContain('123456789012');
    expect(reason).toContain('210987654321');
    expect(await h.requests()).toEqual([]);
  });

  test('Delete with invalid stored metadata: the service answers 400, the reason explains it', async () => {
    const created = await h.onEvent(h.event(T, 'Create', BASE));
    const id = created.PhysicalResourceId;
    const res = await h.api('PATCH', `/v2/sub/${id}`, { data: { type: 'Subscription', id, attributes: { product_parameters: { meta: 'not json' } } } });
    expect(res.status).toBe(200);
    const reason = await h.fails(h.event(T, 'Delete', BASE, { PhysicalResourceId: id }));
    expect(reason).toContain(`subscription ${id}`);
    expect(reason).toContain('stored metadata');
    expect(reason).toContain('RETAIN');
    expect(subOf(h.state(), id).status).toBe('active');
  });

  test('changing the remote identity replaces the pipeline (new physical ID; CloudFormation deletes the old)', async () => {
    const created = await h.onEvent(h.event(T, 'Create', BASE));
    const vendor = { ...BASE, RemoteIdentityId: '363', AccountType: 'vendor', NotificationTypes: ['REPORT_PROCESSING_FINISHED', 'ITEM_SALES_EVENT_CHANGE'] };
    const replaced = await h.onEvent(h.event(T, 'Update', vendor, {
      PhysicalResourceId: created.PhysicalResourceId, OldResourceProperties: { Connection: h.connection, ...BASE },
    }));
    expect(replaced.PhysicalResourceId).not.toBe(created.PhysicalResourceId);
    expect(h.state().pipelines).toHaveLength(2);
    // CloudFormation's cleanup Delete of the old physical ID (with the old properties).
    await h.onEvent(h.event(T, 'Delete', BASE, { PhysicalResourceId: created.PhysicalResourceId }));
    const state = h.state();
    expect(subOf(state, created.PhysicalResourceId).status).toBe('invalid');
    expect(subOf(state, replaced.PhysicalResourceId).status).toBe('active');
    expect(state.pipelines.map((p: any) => p.remoteIdentityId)).toEqual([363]);
  });

  test('an account type change of the same identity is refused (it would share upstream subscriptions)', async () => {
    const created = await h.onEvent(h.event(T, 'Create', BASE));
    await h.clearRequests();
    const reason = await h.fails(h.event(T, 'Update', { ...BASE, AccountType: 'vendor' }, {
      PhysicalResourceId: created.PhysicalResourceId, OldResourceProperties: { Connection: h.connection, ...BASE },
    }));
    expect(reason).toContain('AccountType changed from seller to vendor for the same identity 362');
    expect(await h.changingRequests()).toEqual([]);
  });

  test('Create: the unified POST, then POST /v2/sub storing the result; the result is logged before it is stored', async () => {
    await h.clearRequests();
    const r = await h.onEvent(h.event(T, 'Create', BASE));
    expect(await h.changingRequests()).toEqual([
      'POST /service/sp/notifications-unified/362 207',
      'POST /v2/sub 201',
    ]);
    const pp = subOf(h.state(), r.PhysicalResourceId).product_parameters;
    expect(JSON.parse(pp.meta).pipeline_id).toBe(h.state().pipelines[0].id);
    const logged = h.logs.find((l) => l.includes('"msg":"unified pipeline created"'));
    expect(logged).toContain(JSON.parse(pp.meta).s3_notification_prefix);
  });

  test('a subscription POST that failed (500) after the unified POST is sent again once the lists prove it made nothing', async () => {
    const props = { ...BASE, NotificationTypes: ['ORDER_CHANGE'] };
    await h.admin('POST', '/faults', { method: 'POST', pathPrefix: '/v2/sub', status: 500, count: 1 });
    await h.clearRequests();
    const r = await h.onEvent(h.event(T, 'Create', props));
    expect(await h.changingRequests()).toEqual(['POST /service/sp/notifications-unified/362 207', 'POST /v2/sub 500', 'POST /v2/sub 201']);
    expect(h.state().subscriptions.filter((s: any) => s.product === 107).map((s: any) => String(s.id))).toEqual([r.PhysicalResourceId]);
  });

  test('the subscription POST fails every time after the unified POST: the Create records it again and removes the pipeline before failing', async () => {
    const props = { ...BASE, NotificationTypes: ['ORDER_CHANGE'] };
    await h.admin('POST', '/faults', { method: 'POST', pathPrefix: '/v2/sub', status: 500, count: 3 });
    await h.clearRequests();
    const reason = await h.fails(h.event(T, 'Create', props));
    expect(reason).toContain('the pipeline was removed again');
    expect(await h.changingRequests()).toEqual([
      'POST /service/sp/notifications-unified/362 207', 'POST /v2/sub 500', 'POST /v2/sub 500', 'POST /v2/sub 500', 'POST /v2/sub 201',
      expect.stringMatching(/^DELETE \/service\/sp\/notifications-unified\/362\/\d+ 204$/), expect.stringMatching(/^PATCH \/v2\/sub\/\d+ 200$/),
    ]);
    const state = h.state();
    expect(state.pipelines).toEqual([]);
    expect(pipelineResources(state)).toEqual([]);
    expect(state.upstreamSubscriptions.filter((u: any) => u.remoteIdentityId === 362)).toEqual([]);
    expect(state.subscriptions.filter((s: any) => s.product === 107).map((s: any) => s.status)).toEqual(['invalid']);
  });

  test('the subscription POST keeps failing: the reason names the pipeline; a repeated Create records it without a second unified POST', async () => {
    const props = { ...BASE, NotificationTypes: ['ORDER_CHANGE'] };
    await h.admin('POST', '/faults', { method: 'POST', pathPrefix: '/v2/sub', status: 500, count: 6 });
    const reason = await h.fails(h.event(T, 'Create', props));
    expect(reason).toContain('notification pipeline of identity 362 was created');
    expect(reason).toContain('deploy again');
    let state = h.state();
    expect(state.subscriptions.filter((s: any) => s.product === 107)).toEqual([]);
    expect(state.pipelines).toHaveLength(1);

    await h.clearRequests();
    const r = await h.onEvent(h.event(T, 'Create', props));
    expect(await h.changingRequests()).toEqual(['POST /v2/sub 201']);
    state = h.state();
    expect(state.pipelines).toHaveLength(1);
    expect(JSON.parse(subOf(state, r.PhysicalResourceId).product_parameters.meta).pipeline_id).toBe(state.pipelines[0].id);
    await h.onEvent(h.event(T, 'Delete', props, { PhysicalResourceId: r.PhysicalResourceId }));
    state = h.state();
    expect(state.pipelines).toEqual([]);
    expect(pipelineResources(state)).toEqual([]);
    expect(state.upstreamSubscriptions.filter((u: any) => u.remoteIdentityId === 362)).toEqual([]);
  });

  test('a rollback Delete with a placeholder physical ID finds a failed Create\'s leftover in the journal and removes it', async () => {
    await h.admin('POST', '/faults', { method: 'POST', pathPrefix: '/v2/sub', status: 500, count: 6 });
    await h.fails(h.event(T, 'Create', BASE));
    expect(h.state().pipelines).toHaveLength(1);
    await h.onEvent(h.event(T, 'Delete', BASE, { PhysicalResourceId: 'HandlerTest-Resource-1A2B3C4D' }));
    const state = h.state();
    expect(state.pipelines).toEqual([]);
    expect(pipelineResources(state)).toEqual([]);
    expect(state.upstreamSubscriptions.filter((u: any) => u.remoteIdentityId === 362)).toEqual([]);
    expect(state.subscriptions.filter((s: any) => s.product === 107).map((s: any) => s.status)).toEqual(['invalid']);
    // A later Create starts anew (the attempt is done in the journal).
    const r = await h.onEvent(h.event(T, 'Create', BASE));
    expect(subOf(h.state(), r.PhysicalResourceId).status).toBe('active');
    expect(h.state().pipelines).toHaveLength(1);
  });

  test('a subscription POST applied but its response lost is found among the unclaimed subscriptions: one subscription', async () => {
    await h.admin('POST', '/faults', { method: 'POST', pathPrefix: '/v2/sub', dropResponse: true, count: 1 });
    await h.clearRequests();
    const r = await h.onEvent(h.event(T, 'Create', BASE));
    const log = (await h.requests()).filter((x) => x.path !== '/auth/api/ref').map((x) => `${x.method} ${x.path} ${x.status}`);
    const post = log.indexOf('POST /v2/sub 201');
    expect(post).toBeGreaterThan(0);
    expect(log.slice(post + 1)).toEqual(['GET /v2/sub 200']);
    expect(h.logs.some((l) => l.includes('the subscription create had no clear outcome'))).toBe(true);
    const state = h.state();
    expect(state.subscriptions.filter((s: any) => s.product === 107).map((s: any) => String(s.id))).toEqual([r.PhysicalResourceId]);
    expect(state.pipelines).toHaveLength(1);
  });

  test('a subscription created outside the stack is never taken for a lost response: only what appeared after the call is', async () => {
    // Product-107 subscriptions made by hand before the deploy (no resource claims them): same identity, another identity.
    const same = await h.subscribe(107, 362, { subscriptions: '{}', meta: '{}' });
    const another = await h.subscribe(107, 363, { subscriptions: '{}', meta: '{}' });
    await h.admin('POST', '/faults', { method: 'POST', pathPrefix: '/v2/sub', dropResponse: true, count: 1 });
    const r = await h.onEvent(h.event(T, 'Create', BASE));
    expect([same, another]).not.toContain(r.PhysicalResourceId);
    await h.onEvent(h.event(T, 'Delete', BASE, { PhysicalResourceId: r.PhysicalResourceId }));
    expect(subOf(h.state(), same).status).toBe('active');
    expect(subOf(h.state(), another).status).toBe('active');
    expect(subOf(h.state(), r.PhysicalResourceId).status).toBe('invalid');
  });

  test('a unified POST applied but its response lost is the residual case: the Create names what may remain and the step; retries refuse without a call until `dpi journal resolve`', async () => {
    const props = { ...BASE, NotificationTypes: ['ORDER_CHANGE'] };
    await h.admin('POST', '/faults', { method: 'POST', pathPrefix: '/service/sp/notifications-unified/', dropResponse: true, count: 1 });
    const reason = await h.fails(h.event(T, 'Create', props));
    const key = 'HandlerTest/Resource';
    expect(reason).toBe('the unified create of identity 362 (us-east-1) got no answer (UND_ERR_SOCKET); if the service applied it, only the '
      + `service can remove it: once removed (or confirmed never made), run 'dpi journal resolve ${key}' (--local for dpi local-deploy) and `
      + 'deploy again; it may have made upstream subscriptions for ORDER_CHANGE, their destination and delivery resources in us-east-1');
    expect(reason).toContain('only the service can remove it');
    expect(reason).toContain(`run 'dpi journal resolve ${key}'`);
    let state = h.state();
    const lost = state.pipelines.map((p: any) => p.id);
    expect(lost).toHaveLength(1);

    // A retry (a second deploy) sends nothing: a second POST could duplicate the pipeline or fail on its destination.
    await h.clearRequests();
    expect(await h.fails(h.event(T, 'Create', props))).toContain(`dpi journal resolve ${key}`);
    expect(await h.changingRequests()).toEqual([]);

    // The service removes it; the user resolves the attempt; the next Create starts anew.
    expect(await serviceRemovesUnrecordedPipelines(h.emu.url, h.state())).toEqual(lost);
    const io = { out: '', err: '' };
    const code = await runDpi(['journal', 'resolve', key, '--endpoint', h.journal.endpoint, '--table', h.journalTable], {
      env: {}, stdout: { write: (t: string) => { io.out += t; } }, stderr: { write: (t: string) => { io.err += t; } }, isTTY: false,
    });
    expect({ code, err: io.err }).toEqual({ code: 0, err: '' });
    expect(io.out).toMatch(new RegExp(`^resolved 1 attempt\\(s\\) of ${key} in table ${h.journalTable} at http`));
    expect((await h.journalRecords()).map((r) => r.state)).toEqual(['abandoned']);
    await h.clearRequests();
    const r = await h.onEvent(h.event(T, 'Create', props));
    expect(await h.changingRequests()).toEqual(['POST /service/sp/notifications-unified/362 207', 'POST /v2/sub 201']);
    state = h.state();
    expect(state.pipelines.map((p: any) => p.id)).toEqual([JSON.parse(subOf(state, r.PhysicalResourceId).product_parameters.meta).pipeline_id]);
    await h.onEvent(h.event(T, 'Delete', props, { PhysicalResourceId: r.PhysicalResourceId }));
    state = h.state();
    expect(state.pipelines).toEqual([]);
    expect(state.upstreamSubscriptions.filter((u: any) => u.remoteIdentityId === 362 && u.enabled)).toEqual([]);
  });

  test('a unified DELETE applied but its response lost: the repeated DELETE finds no pipeline, which is taken as deleted', async () => {
    const created = await h.onEvent(h.event(T, 'Create', BASE));
    const id = created.PhysicalResourceId;
    await h.admin('POST', '/faults', { method: 'DELETE', pathPrefix: '/service/sp/notifications-unified/', dropResponse: true, count: 1 });
    await h.onEvent(h.event(T, 'Delete', BASE, { PhysicalResourceId: id }));
    const state = h.state();
    expect(state.pipelines).toEqual([]);
    expect(subOf(state, id).status).toBe('invalid');
    expect(h.logs.some((l) => l.includes('"level":"WARNING"') && l.includes('taken as deleted'))).toBe(true);
    expect((await h.journalRecords()).map((r) => r.state)).toEqual(['deleted']);
  });

  test('one pipeline per remote identity: a second resource for the same identity is refused before any change, naming the first', async () => {
    await h.onEvent(h.event(T, 'Create', BASE));
    await h.clearRequests();
    const reason = await h.fails(h.event(T, 'Create', { ...BASE, NotificationTypes: ['ORDER_CHANGE'] }, { LogicalResourceId: 'Second' }));
    expect(reason).toContain('remote identity 362 already has a notification pipeline, managed by HandlerTest/Resource');
    expect(reason).toContain('nothing was changed');
    expect(await h.changingRequests()).toEqual([]);
    expect(h.state().pipelines).toHaveLength(1);
  });

  test('the identity of a deleted pipeline can be taken by another resource', async () => {
    const first = await h.onEvent(h.event(T, 'Create', BASE));
    await h.onEvent(h.event(T, 'Delete', BASE, { PhysicalResourceId: first.PhysicalResourceId }));
    const second = await h.onEvent(h.event(T, 'Create', BASE, { LogicalResourceId: 'Second' }));
    expect(second.PhysicalResourceId).not.toBe(first.PhysicalResourceId);
    expect(await h.journalOwner('identity', '362')).toBe('HandlerTest/Second');
  });

  test('UPDATE_ROLLBACK after an update whose stored metadata could not be written re-applies the previous selection', async () => {
    const created = await h.onEvent(h.event(T, 'Create', BASE));
    const id = created.PhysicalResourceId;
    const next = { ...BASE, NotificationTypes: ['ORDER_CHANGE'] };
    await h.admin('POST', '/faults', { method: 'PATCH', pathPrefix: `/v2/sub/${id}`, status: 400, count: 1 });
    await h.fails(h.event(T, 'Update', next, { PhysicalResourceId: id, OldResourceProperties: { Connection: h.connection, ...BASE } }));
    // The unified PATCH was applied (FEED_PROCESSING_FINISHED dropped), the metadata is stale.
    const enabled = (): string[] => h.state().upstreamSubscriptions.filter((u: any) => u.remoteIdentityId === 362 && u.enabled)
      .map((u: any) => u.notificationType).sort();
    expect(enabled()).toEqual(['ORDER_CHANGE']);
    await h.clearRequests();
    const rolled = await h.onEvent(h.event(T, 'Update', BASE, { PhysicalResourceId: id, OldResourceProperties: { Connection: h.connection, ...next } }));
    // First the journal's last confirmed result is stored (the service reads it), then the previous selection.
    expect(await h.changingRequests()).toEqual([
      `PATCH /v2/sub/${id} 200`, `PATCH /service/sp/notifications-unified/362/${id} 207`, `PATCH /v2/sub/${id} 200`,
    ]);
    expect(enabled()).toEqual(['FEED_PROCESSING_FINISHED', 'ORDER_CHANGE']);
    expect(rolled.Data!.SubscribedTypes.split(',').sort()).toEqual(['FEED_PROCESSING_FINISHED', 'ORDER_CHANGE']);
    expect(rolled.Data!.Prefix).toBe(JSON.parse(subOf(h.state(), id).product_parameters.meta).s3_notification_prefix);
  });

  test('a pipeline deployed before the journal existed: Update converges it with the full-body PATCH and records it, Delete removes it', async () => {
    const created = await h.onEvent(h.event(T, 'Create', BASE));
    const id = created.PhysicalResourceId;
    await h.reset({ keepEmulator: true });
    const next = { ...BASE, NotificationTypes: ['ORDER_CHANGE'] };
    await h.clearRequests();
    const r = await h.onEvent(h.event(T, 'Update', next, { PhysicalResourceId: id, OldResourceProperties: { Connection: h.connection, ...BASE } }));
    expect(await h.changingRequests()).toEqual([`PATCH /service/sp/notifications-unified/362/${id} 207`, `PATCH /v2/sub/${id} 200`]);
    expect(r.Data!.SubscribedTypes).toBe('ORDER_CHANGE');
    // Without a record or claim (the journal lost them), a Delete leaves the pipeline as it is.
    const journal = h.journalTable;
    await h.reset({ keepEmulator: true });
    await h.onEvent(h.event(T, 'Delete', next, { PhysicalResourceId: id }));
    expect(h.state().pipelines).toHaveLength(1);
    expect(subOf(h.state(), id).status).toBe('active');
    // The Update recorded it: with that journal, the Delete removes it.
    h.journalTable = journal;
    await h.onEvent(h.event(T, 'Delete', next, { PhysicalResourceId: id }));
    expect(h.state().pipelines).toEqual([]);
    expect(subOf(h.state(), id).status).toBe('invalid');
  });

  test('product 107 names other stored keys: the library stores under them and the service reads them on update and delete', async () => {
    const p107 = DEFAULT_FIXTURES.products!.find((p) => p.id === 107)!;
    const keys = ['remote_identity_id', 'upstream_subscriptions', 's3_notification_prefix'];
    await h.admin('POST', '/fixtures', { products: [{ ...p107, required_meta_fields: keys, subscription_info: { spm_requirements: keys } }] });
    const props = { ...BASE, Connection: { ...h.connection, PipelineSubscriptionsKey: 'upstream_subscriptions' } };
    const created = await h.onEvent(h.event(T, 'Create', props));
    const id = created.PhysicalResourceId;
    let pp = subOf(h.state(), id).product_parameters;
    // The named keys, plus the full meta under the default key (the record names no key for it); no `subscriptions`.
    expect(Object.keys(pp).sort()).toEqual(['meta', 'remote_identity_id', 's3_notification_prefix', 'upstream_subscriptions']);
    expect(pp.s3_notification_prefix).toBe(created.Data!.Prefix);
    expect(Object.keys(JSON.parse(pp.upstream_subscriptions)).sort()).toEqual(['FEED_PROCESSING_FINISHED', 'ORDER_CHANGE']);
    // The mapping used is logged once.
    const mapping = h.logs.filter((l) => l.includes('"msg":"pipeline metadata mapping"') && l.includes('upstream_subscriptions'));
    expect(mapping).toHaveLength(1);
    expect(mapping[0]).toContain('"stored":["meta","s3_notification_prefix","upstream_subscriptions"]');
    const next = { ...props, NotificationTypes: ['ORDER_CHANGE'] };
    const updated = await h.onEvent(h.event(T, 'Update', next, { PhysicalResourceId: id, OldResourceProperties: props }));
    pp = subOf(h.state(), id).product_parameters;
    expect(Object.keys(JSON.parse(pp.upstream_subscriptions))).toEqual(['ORDER_CHANGE']);
    expect(pp.s3_notification_prefix).toBe(updated.Data!.Prefix);
    await h.onEvent(h.event(T, 'Delete', next, { PhysicalResourceId: id }));
    const state = h.state();
    expect(state.pipelines).toEqual([]);
    expect(pipelineResources(state)).toEqual([]);
    expect(subOf(state, id).status).toBe('invalid');
  });

  test('a stored key the service needs but the library did not write: the service refuses the delete (400), the reason says so', async () => {
    const created = await h.onEvent(h.event(T, 'Create', BASE));
    const p107 = DEFAULT_FIXTURES.products!.find((p) => p.id === 107)!;
    const keys = ['remote_identity_id', 'subscriptions', 'meta', 'pipeline_owner'];
    await h.admin('POST', '/fixtures', { products: [{ ...p107, required_meta_fields: keys, subscription_info: { spm_requirements: keys } }] });
    const reason = await h.fails(h.event(T, 'Delete', BASE, { PhysicalResourceId: created.PhysicalResourceId }));
    expect(reason).toContain('stored metadata');
    expect(h.state().pipelines).toHaveLength(1);
  });

  test('a required meta field that no result can fill fails before any change, naming it', async () => {
    const p107 = DEFAULT_FIXTURES.products!.find((p) => p.id === 107)!;
    await h.admin('POST', '/fixtures', { products: [{ ...p107, required_meta_fields: ['remote_identity_id', 'pipeline_owner'] }] });
    await h.clearRequests();
    const reason = await h.fails(h.event(T, 'Create', BASE));
    expect(reason).toContain('pipeline_owner');
    expect(reason).toContain('nothing was created');
    expect(await h.changingRequests()).toEqual([]);
  });

  test('the secret is read once per warm container and the token is cached across invocations', async () => {
    h.configure();
    const before = h.secretReads;
    await h.clearRequests();
    const a = await h.onEvent(h.event(T, 'Create', BASE));
    await h.onEvent(h.event(T, 'Delete', BASE, { PhysicalResourceId: a.PhysicalResourceId }));
    expect(h.secretReads - before).toBe(1);
    expect((await h.requests()).filter((r) => r.path === '/auth/api/ref')).toHaveLength(1);
  });
});
