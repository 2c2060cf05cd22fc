import { EB_ROLE, HandlerHarness, ROLE, STACK_ID, useHandlerHarness } from './helpers';
import { ResourceTypes } from '../../src/contract';
import { DEFAULT_CLOUD_ACCOUNT } from '../../src/emulator';

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

/** The product parameters a Create records before its unified POST (no `subscriptions` / `meta` yet). */
const RECORD = {
  cdk_resource: `${STACK_ID}/Resource`,
  notification_types: JSON.stringify(BASE.NotificationTypes),
  role_arn: ROLE,
  eb_to_fh_role_arn: EB_ROLE,
  aws_region: 'us-east-1',
  account_type: 'seller',
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
    expect(sub.product_parameters.cdk_resource).toBe(`${STACK_ID}/Resource`);
    expect(JSON.parse(sub.product_parameters.notification_types)).toEqual(BASE.NotificationTypes);
    expect(Object.keys(JSON.parse(sub.product_parameters.subscriptions)).sort()).toEqual(['FEED_PROCESSING_FINISHED', 'ORDER_CHANGE']);
    const meta = JSON.parse(sub.product_parameters.meta);
    expect(sub.product_parameters.role_arn).toBe(ROLE);
    expect(sub.product_parameters.aws_region).toBe('us-east-1');
    expect(created.Data).toMatchObject({
      SubscriptionId: id,
      SubscribedTypes: 'ORDER_CHANGE,FEED_PROCESSING_FINISHED',
      FailedTypes: '',
      BucketName: meta.s3_bucket_name,
      Prefix: meta.s3_notification_prefix,
      NotificationQueueArn: meta.s3_notification_queue_arn,
      DeliveryStreamArn: meta.firehose_arn,
      SharedPipelineId: meta.shared_pipeline_id,
    });
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
    expect(JSON.parse(subOf(state, id).product_parameters.notification_types)).toEqual(types2);
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
    expect(JSON.parse(subOf(state, id).product_parameters.notification_types)).toEqual(BASE.NotificationTypes);
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
    expect(h.slept).toContain(2000);
    expect(h.logs.some((l) => l.includes('"msg":"retry"') && l.includes('429'))).toBe(true);
  });

  test('403 role assumption: actionable reason, nothing made', async () => {
    const reason = await h.fails(h.event(T, 'Create', { ...BASE, RoleArn: `arn:aws:iam::${DEFAULT_CLOUD_ACCOUNT}:role/missing` }));
    expect(reason).toMatch(/role assumption failed/);
    expect(reason).toContain('ExternalId');
    expect(reason).toContain('role/missing');
    // The record made before the unified POST is set invalid again: no active product-107 subscription stays.
    expect(h.state().subscriptions.filter((s: any) => s.product === 107).map((s: any) => s.status)).toEqual(['invalid']);
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

  test('Create records the attempt first: POST /v2/sub without metadata, POST unified, then PATCH storing subscriptions and meta', async () => {
    await h.clearRequests();
    const r = await h.onEvent(h.event(T, 'Create', BASE));
    const id = r.PhysicalResourceId;
    expect(await h.changingRequests()).toEqual([
      'POST /v2/sub 201',
      'POST /service/sp/notifications-unified/362 207',
      `PATCH /v2/sub/${id} 200`,
    ]);
    const pp = subOf(h.state(), id).product_parameters;
    expect(pp.cdk_resource).toBe(`${STACK_ID}/Resource`);
    expect(JSON.parse(pp.meta).pipeline_id).toBe(h.state().pipelines[0].id);
    // The unified result is logged before it is stored (an operator finds it even if the Lambda dies).
    const logged = h.logs.find((l) => l.includes('"msg":"unified pipeline created"'));
    expect(logged).toContain(JSON.parse(pp.meta).s3_notification_prefix);
  });

  test('crash after the unified POST (metadata PATCH fails): a repeated Create finishes it, Delete cleans up what is stored', async () => {
    const props = { ...BASE, NotificationTypes: ['ORDER_CHANGE'] };
    await h.admin('POST', '/faults', { method: 'PATCH', pathPrefix: '/v2/sub/', status: 500, count: 1 });
    const reason = await h.fails(h.event(T, 'Create', props));
    expect(reason).toContain('metadata could not be stored');
    expect(reason).toContain('deploy again');
    let state = h.state();
    const record = state.subscriptions.filter((s: any) => s.product === 107);
    expect(record).toHaveLength(1);
    expect(record[0].status).toBe('active');
    expect(record[0].product_parameters.meta).toBeUndefined();
    expect(record[0].product_parameters.cdk_resource).toBe(`${STACK_ID}/Resource`);
    const crashed = state.pipelines.map((p: any) => p.id);
    expect(crashed).toHaveLength(1);
    const upstream = state.upstreamSubscriptions.filter((u: any) => u.remoteIdentityId === 362);
    expect(upstream).toHaveLength(1);

    // The repeated Create (same StackId + LogicalResourceId) finds the record without metadata and finishes it.
    await h.clearRequests();
    const r = await h.onEvent(h.event(T, 'Create', props));
    expect(r.PhysicalResourceId).toBe(String(record[0].id));
    expect(await h.changingRequests()).toEqual([
      'POST /service/sp/notifications-unified/362 207',
      `PATCH /v2/sub/${r.PhysicalResourceId} 200`,
    ]);
    expect(h.logs.some((l) => l.includes('"level":"WARNING"') && l.includes('stopped before storing the pipeline metadata'))).toBe(true);
    state = h.state();
    const subs107 = state.subscriptions.filter((s: any) => s.product === 107 && s.remote_identity === 362 && s.status === 'active');
    expect(subs107).toHaveLength(1);
    const meta = JSON.parse(subs107[0].product_parameters.meta);
    expect(r.Data!.Prefix).toBe(meta.s3_notification_prefix);
    // The upstream subscription at the expected (shared event-bus) destination was reused, not duplicated.
    const upstream2 = state.upstreamSubscriptions.filter((u: any) => u.remoteIdentityId === 362);
    expect(upstream2.map((u: any) => u.id)).toEqual([upstream[0].id]);
    expect(JSON.parse(subs107[0].product_parameters.subscriptions)).toEqual({ ORDER_CHANGE: upstream[0].id });

    // Delete removes the stored pipeline and the upstream subscription.
    await h.onEvent(h.event(T, 'Delete', props, { PhysicalResourceId: r.PhysicalResourceId }));
    state = h.state();
    expect(subOf(state, r.PhysicalResourceId).status).toBe('invalid');
    expect(state.upstreamSubscriptions.filter((u: any) => u.remoteIdentityId === 362)).toEqual([]);
    expect(state.pipelines.some((p: any) => p.id === meta.pipeline_id)).toBe(false);
    expect(pipelineResources(state).filter((x: any) => x.pipelineId === meta.pipeline_id)).toEqual([]);
    // Residual (documented): the crashed attempt's own delivery resources, whose metadata the service never
    // handed back in a stored form, cannot be reached through the service interface.
    expect(state.pipelines.map((p: any) => p.id)).toEqual(crashed);
  });

  test('a dropped subscription POST (ambiguous) is looked up by the marker before giving up; nothing else is made', async () => {
    await h.admin('POST', '/faults', { method: 'POST', pathPrefix: '/v2/sub', drop: true, count: 1 });
    await h.clearRequests();
    const reason = await h.fails(h.event(T, 'Create', BASE));
    expect(reason).toContain('no subscription carries this resource\'s marker');
    const log = (await h.requests()).map((x) => `${x.method} ${x.path} ${x.status}`);
    const post = log.indexOf('POST /v2/sub 0');
    expect(post).toBeGreaterThanOrEqual(0);
    expect(log.slice(post + 1)).toEqual(['GET /v2/sub 200']);
    expect(h.state().subscriptions.filter((s: any) => s.product === 107)).toEqual([]);
    expect(h.state().pipelines).toEqual([]);
  });

  test('a subscription POST applied but its response lost (ambiguous) is found by the marker in the same invocation: one subscription', async () => {
    // The emulator handles the POST (the subscription is created) and then drops the connection.
    await h.admin('POST', '/faults', { method: 'POST', pathPrefix: '/v2/sub', dropResponse: true, count: 1 });
    await h.clearRequests();
    const r = await h.onEvent(h.event(T, 'Create', BASE));
    const applied = r.PhysicalResourceId;
    const log = (await h.requests()).filter((x) => x.path !== '/auth/api/ref').map((x) => `${x.method} ${x.path} ${x.status}`);
    const post = log.indexOf('POST /v2/sub 201');
    expect(post).toBeGreaterThan(0);
    // After the lost answer: the lookup by the marker, the unified POST and the metadata PATCH; no second subscription POST.
    expect(log.slice(post + 1)).toEqual([
      'GET /v2/sub 200',
      'POST /service/sp/notifications-unified/362 207',
      `PATCH /v2/sub/${applied} 200`,
    ]);
    expect(h.logs.some((l) => l.includes('the subscription create had no clear outcome'))).toBe(true);
    expect(h.logs.some((l) => l.includes('found the subscription by the marker after the ambiguous create'))).toBe(true);
    const state = h.state();
    const subs107 = state.subscriptions.filter((s: any) => s.product === 107);
    expect(subs107.map((s: any) => String(s.id))).toEqual([applied]);
    expect(subs107[0].product_parameters.cdk_resource).toBe(`${STACK_ID}/Resource`);
    expect(state.pipelines).toHaveLength(1);
    expect(JSON.parse(subOf(state, applied).product_parameters.meta).pipeline_id).toBe(state.pipelines[0].id);
  });

  test('a unified POST applied but its response lost: the Create fails (ambiguous); a repeated Create finishes it with the recorded subscription', async () => {
    const props = { ...BASE, NotificationTypes: ['ORDER_CHANGE'] };
    await h.admin('POST', '/faults', { method: 'POST', pathPrefix: '/service/sp/notifications-unified/', dropResponse: true, count: 1 });
    const reason = await h.fails(h.event(T, 'Create', props));
    expect(reason).toContain('had no clear outcome');
    expect(reason).toContain('deploy again');
    let state = h.state();
    // The service applied the POST: a pipeline and its upstream subscription exist, but nothing stored them.
    const record = state.subscriptions.filter((s: any) => s.product === 107);
    expect(record).toHaveLength(1);
    expect(record[0].status).toBe('active');
    expect(record[0].product_parameters.meta).toBeUndefined();
    const lost = state.pipelines.map((p: any) => p.id);
    expect(lost).toHaveLength(1);
    const upstream = state.upstreamSubscriptions.filter((u: any) => u.remoteIdentityId === 362);
    expect(upstream).toHaveLength(1);

    // The repeated Create (same StackId + LogicalResourceId) uses the recorded subscription and POSTs again.
    await h.clearRequests();
    const r = await h.onEvent(h.event(T, 'Create', props));
    expect(r.PhysicalResourceId).toBe(String(record[0].id));
    expect(await h.changingRequests()).toEqual([
      'POST /service/sp/notifications-unified/362 207',
      `PATCH /v2/sub/${r.PhysicalResourceId} 200`,
    ]);
    state = h.state();
    expect(state.subscriptions.filter((s: any) => s.product === 107)).toHaveLength(1);
    const meta = JSON.parse(subOf(state, r.PhysicalResourceId).product_parameters.meta);
    // The event-bus upstream subscription was reused (same ID), not duplicated.
    expect(state.upstreamSubscriptions.filter((u: any) => u.remoteIdentityId === 362).map((u: any) => u.id)).toEqual([upstream[0].id]);
    // Leftover (documented): the first POST's pipeline, whose answer was lost, stays besides the stored one;
    // its delivery resources are not reachable through the service interface.
    expect(meta.pipeline_id).not.toBe(lost[0]);
    expect(state.pipelines.map((p: any) => p.id).sort()).toEqual([lost[0], meta.pipeline_id].sort());
    expect(pipelineResources(state).some((x: any) => x.pipelineId === lost[0])).toBe(true);

    // Delete removes the stored pipeline and the upstream subscription; the lost pipeline remains.
    await h.onEvent(h.event(T, 'Delete', props, { PhysicalResourceId: r.PhysicalResourceId }));
    state = h.state();
    expect(subOf(state, r.PhysicalResourceId).status).toBe('invalid');
    expect(state.upstreamSubscriptions.filter((u: any) => u.remoteIdentityId === 362)).toEqual([]);
    expect(state.pipelines.map((p: any) => p.id)).toEqual(lost);
  });

  test('Delete of a subscription without stored metadata sets it invalid, warns with identity and region, calls no unified DELETE', async () => {
    const id = await h.subscribe(107, 362, RECORD);
    await h.clearRequests();
    await h.onEvent(h.event(T, 'Delete', BASE, { PhysicalResourceId: id }));
    expect(await h.changingRequests()).toEqual([`PATCH /v2/sub/${id} 200`]);
    expect(subOf(h.state(), id).status).toBe('invalid');
    const warning = h.logs.find((l) => l.includes('"level":"WARNING"') && l.includes('no stored pipeline metadata') && l.includes(`"subscriptionId":"${id}"`));
    expect(warning).toBeDefined();
    expect(warning).toContain('"remoteIdentityId":"362"');
    expect(warning).toContain('"region":"us-east-1"');
  });

  test('Update of a subscription without stored metadata creates the unified pipeline and stores it (no unified PATCH)', async () => {
    const id = await h.subscribe(107, 362, RECORD);
    await h.clearRequests();
    const r = await h.onEvent(h.event(T, 'Update', BASE, { PhysicalResourceId: id, OldResourceProperties: { Connection: h.connection, ...BASE } }));
    expect(r.PhysicalResourceId).toBe(id);
    const changing = await h.changingRequests();
    expect(changing[0]).toBe('POST /service/sp/notifications-unified/362 207');
    expect(changing[1]).toBe(`PATCH /v2/sub/${id} 200`);
    expect(changing).toHaveLength(2);
    const state = h.state();
    expect(JSON.parse(subOf(state, id).product_parameters.meta).pipeline_id).toBe(state.pipelines[0].id);
    expect(r.Data!.SubscribedTypes.split(',').sort()).toEqual(['FEED_PROCESSING_FINISHED', 'ORDER_CHANGE']);
    // And it can now be deleted cleanly.
    await h.onEvent(h.event(T, 'Delete', BASE, { PhysicalResourceId: id }));
    expect(pipelineResources(h.state())).toEqual([]);
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
