import { daysAgo, HandlerHarness, SELLER_PIPELINE, TEST_READS, useHandlerHarness } from './helpers';
import { ResourceTypes } from '../../src/kinds';

/**
 * Adoption (`existingSubscriptionId`, `existingHistoryTransactionId`): Create takes an existing record over without a
 * creating call, reconciles it as an Update would and leaves the journal record a Create leaves. Runs in both read modes
 * (DPI_EMULATOR_READS=vendor): what a read shows (vendor) is not sent again; what it does not show is sent.
 */
let h: HandlerHarness;
useHandlerHarness((started) => {
  h = started;
}, { resetEach: true });

const SUB = ResourceTypes.SUBSCRIPTION;
const PIPE = ResourceTypes.NOTIFICATION_PIPELINE;
const HIST = ResourceTypes.HISTORY_REQUEST;
const subOf = (id: string): any => h.state().subscriptions.find((s: any) => String(s.id) === id);

/** A product-3001 subscription made by hand (name, storage group 501, marketplace parameter). */
async function handMade(extra: Record<string, unknown> = {}): Promise<string> {
  const r = await h.api('POST', '/v2/sub', {
    data: {
      type: 'Subscription',
      attributes: {
        account: 1001,
        user: 2001,
        product: 3001,
        status: 'active',
        date_start: '2026-01-01T00:00:00Z',
        remote_identity: 362,
        storage_group: 501,
        name: 'by hand',
        product_parameters: { marketplace_id: 'ATVPDKIKX0DER', stage_ids: '[1000]' },
        ...extra,
      },
    },
  });
  expect(r.status).toBe(201);
  return String(r.body.data.id);
}

function subProps(id: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    ProductId: '3001', RemoteIdentityId: '362', StorageGroupId: '501', Name: 'by hand', Status: 'active', OnDelete: 'invalid', AdoptId: id, ...extra,
  };
}

describe('Subscription adoption', () => {
  test('adopts without a creating call, reconciles the declared state, and records what a Create records', async () => {
    const id = await handMade();
    await h.clearRequests();
    const r = await h.onEvent(h.event(SUB, 'Create', subProps(id, { Name: 'orders-us', Status: 'paused', StageIds: ['1000', '1001'] })));
    expect(r).toEqual({ PhysicalResourceId: id, Data: { SubscriptionId: id, Status: 'paused' } });
    // One PATCH (the reconcile), no POST.
    const changing = await h.changingRequests();
    expect(changing).toEqual([`PATCH /v2/sub/${id} 200`]);
    const s = subOf(id);
    expect(s).toMatchObject({ name: 'orders-us', status: 'paused', storage_group: 501 });
    // Declared parameters applied; an undeclared stored one (marketplace_id) kept by the service's merge.
    expect(s.product_parameters).toEqual({ marketplace_id: 'ATVPDKIKX0DER', stage_ids: '[1000,1001]', remote_identity_id: '362' });
    const recs = await h.journalRecords();
    expect(recs).toHaveLength(1);
    expect(recs[0]).toMatchObject({ state: 'active', physicalId: id });
    expect(recs[0].doc).toMatchObject({ product: 3001, identity: '362', subscriptionId: id, adopted: true });
    expect(recs[0].doc.applied).toEqual({
      params: { stage_ids: '[1000,1001]', remote_identity_id: '362' }, status: 'paused', name: 'orders-us', storageGroupId: 501,
    });
    expect(await h.journalOwner('sub', id)).toBe('HandlerTest/Resource');

    // Later Updates work from that record: a repeated Create delivery and an Update without a change send nothing.
    await h.clearRequests();
    expect(await h.onEvent(h.event(SUB, 'Create', subProps(id, { Name: 'orders-us', Status: 'paused', StageIds: ['1000', '1001'] })))).toEqual(r);
    const same = subProps(id, { Name: 'orders-us', Status: 'paused', StageIds: ['1000', '1001'] });
    await h.onEvent(h.event(SUB, 'Update', same, { PhysicalResourceId: id, OldResourceProperties: same }));
    expect(await h.changingRequests()).toEqual([]);
  });

  test('adopting what already matches: vendor reads send nothing; minimal reads send one idempotent PATCH of what no read shows', async () => {
    const id = await handMade();
    await h.clearRequests();
    await h.onEvent(h.event(SUB, 'Create', subProps(id)));
    const changing = await h.changingRequests();
    if (TEST_READS === 'vendor') {
      expect(changing).toEqual([]);
    } else {
      expect(changing).toEqual([`PATCH /v2/sub/${id} 200`]);
    }
    expect(subOf(id)).toMatchObject({ name: 'by hand', status: 'active', storage_group: 501 });
    expect((await h.journalRecords())[0]).toMatchObject({ state: 'active', physicalId: id });
  });

  test('a subscription another resource manages is refused naming it; nothing changes', async () => {
    const id = await handMade();
    await h.onEvent(h.event(SUB, 'Create', subProps(id), { LogicalResourceId: 'Owner' }));
    const before = JSON.stringify(subOf(id));
    await h.clearRequests();
    const reason = await h.fails(h.event(SUB, 'Create', subProps(id, { Name: 'other' })));
    expect(reason).toContain(`subscription ${id} is managed by HandlerTest/Owner`);
    expect(reason).toContain('nothing was changed');
    expect(await h.changingRequests()).toEqual([]);
    expect(JSON.stringify(subOf(id))).toBe(before);
    expect(await h.journalOwner('sub', id)).toBe('HandlerTest/Owner');
    expect(await h.journalRecords()).toHaveLength(0);
  });

  test('a subscription created by another resource is refused the same way', async () => {
    const made = await h.onEvent(h.event(SUB, 'Create', {
      ProductId: '3001', RemoteIdentityId: '362', ProductParameters: { marketplace_id: 'X' }, Status: 'active', OnDelete: 'invalid',
    }, { LogicalResourceId: 'Creator' }));
    const reason = await h.fails(h.event(SUB, 'Create', subProps(made.PhysicalResourceId)));
    expect(reason).toContain('is managed by HandlerTest/Creator');
  });

  test('a missing, invalid or non-numeric subscription fails clearly without a change', async () => {
    await h.clearRequests();
    expect(await h.fails(h.event(SUB, 'Create', subProps('987654')))).toBe(
      'Subscription: existingSubscriptionId 987654: no such subscription (the service answered 404); check the ID '
      + '(dpi import lists them); nothing was changed');
    const id = await handMade();
    await h.api('PATCH', `/v2/sub/${id}`, { data: { type: 'Subscription', id, attributes: { status: 'invalid' } } });
    expect(await h.fails(h.event(SUB, 'Create', subProps(id)))).toContain(`existingSubscriptionId ${id}: the subscription is invalid and cannot be adopted`);
    expect(await h.fails(h.event(SUB, 'Create', subProps('abc')))).toContain('is not a subscription ID');
    expect((await h.changingRequests()).filter((x) => !x.includes(`/v2/sub/${id}`) && !x.startsWith('POST /v2/sub '))).toEqual([]);
    expect(await h.journalOwner('sub', id)).toBeUndefined();
  });

  test('a read that shows another product is refused (vendor reads)', async () => {
    const id = await handMade();
    const reason = await h.onEvent(h.event(SUB, 'Create', subProps(id, { ProductId: '3003', RemoteIdentityId: '' })))
      .then(() => 'adopted', (e: Error) => e.message);
    if (TEST_READS === 'vendor') {
      expect(reason).toContain(`existingSubscriptionId ${id} has product 3001 (declared 3003)`);
    } else {
      // Minimal reads show no product: the reconcile's PATCH is what the service checks.
      expect(typeof reason).toBe('string');
    }
  });

  test('Delete with an explicit destroy policy ends the adopted subscription with its onDelete status; it can then not be adopted again', async () => {
    const id = await handMade();
    const props = { ...subProps(id), RemovalPolicy: 'destroy' };
    await h.onEvent(h.event(SUB, 'Create', props));
    await h.onEvent(h.event(SUB, 'Delete', { ...props, OnDelete: 'cancelled' }, { PhysicalResourceId: id }));
    expect(subOf(id).status).toBe('cancelled');
    expect((await h.journalRecords())[0].state).toBe('deleted');
    expect(await h.fails(h.event(SUB, 'Create', subProps(id), { LogicalResourceId: 'Again' }))).toContain('is cancelled and cannot be adopted');
  });

  test('Delete without a policy (a template from before the property) or with retain releases the adopted subscription and restores what the adoption changed', async () => {
    const id = await handMade();
    // What the restore must give back: every field but `updated_at`, which the service sets at each PATCH (the
    // adoption's and the restore's; equal only when both fall in the same second as the subscription's creation).
    const fields = (sub: Record<string, unknown>): string => JSON.stringify({ ...sub, updated_at: undefined });
    const was = fields(subOf(id));
    // The adoption renames and pauses it; the rollback of that deploy (same declaration) hands it back as it was.
    const props = subProps(id, { Name: 'adopted-name', Status: 'paused' });
    await h.onEvent(h.event(SUB, 'Create', props));
    expect(subOf(id)).toMatchObject({ name: 'adopted-name', status: 'paused' });
    await h.onEvent(h.event(SUB, 'Delete', props, { PhysicalResourceId: id }));
    expect(subOf(id).status).toBe('active');
    if (TEST_READS === 'vendor') expect(fields(subOf(id))).toBe(was);
    expect((await h.journalRecords())[0].state).toBe('released');
    // Another resource (another stack) may adopt it now.
    await h.onEvent(h.event(SUB, 'Create', { ...subProps(id), RemovalPolicy: 'retain' }, { LogicalResourceId: 'Next' }));
    expect(await h.journalOwner('sub', id)).toBe('HandlerTest/Next');
    // A later change supersedes the adoption's: a release then keeps the subscription as it is.
    const next = { ...subProps(id, { Name: 'later' }), RemovalPolicy: 'retain' };
    await h.onEvent(h.event(SUB, 'Update', next, { LogicalResourceId: 'Next', PhysicalResourceId: id, OldResourceProperties: { ...subProps(id), RemovalPolicy: 'retain' } }));
    await h.clearRequests();
    await h.onEvent(h.event(SUB, 'Delete', next, { LogicalResourceId: 'Next', PhysicalResourceId: id }));
    expect(await h.changingRequests()).toEqual([]);
    expect(subOf(id)).toMatchObject({ name: 'later', status: 'active' });
  });

  test('a failed reconcile leaves the record untouched by the rollback Delete (placeholder): adoption never ends what it did not make', async () => {
    const id = await handMade();
    await h.admin('POST', '/faults', { method: 'PATCH', pathPrefix: `/v2/sub/${id}`, status: 400, count: 1 });
    const reason = await h.fails(h.event(SUB, 'Create', subProps(id, { Name: 'renamed' })));
    expect(reason).toContain(`the service rejected the update of subscription ${id}`);
    await h.onEvent(h.event(SUB, 'Delete', subProps(id, { Name: 'renamed' }), { PhysicalResourceId: 'HandlerTest-Resource-PLACEHOLDER' }));
    expect(subOf(id).status).toBe('active');
    expect((await h.journalRecords())[0].state).toBe('released');
    // The claim of a resource without a live record is taken over by the next adopter.
    await h.onEvent(h.event(SUB, 'Create', subProps(id), { LogicalResourceId: 'Next' }));
    expect(await h.journalOwner('sub', id)).toBe('HandlerTest/Next');
  });
});

/** A unified pipeline made by hand: the unified POST and its product-107 subscription storing the result. */
async function handMadePipeline(types: string[] = ['ORDER_CHANGE']): Promise<string> {
  const post = await h.api('POST', '/service/sp/notifications-unified/362', {
    data: { type: 'Service', attributes: { notification_types: types, role_arn: SELLER_PIPELINE.RoleArn, eb_to_fh_role_arn: SELLER_PIPELINE.EbToFhRoleArn, aws_region: 'us-east-1' } },
  });
  expect(post.status).toBe(207);
  const a = post.body.data?.attributes ?? post.body.attributes;
  return h.subscribe(107, 362, { subscriptions: JSON.stringify(a.subscriptions), meta: JSON.stringify(a.meta) });
}

describe('NotificationPipeline adoption', () => {
  test('a pipeline the service stores as declared is adopted as it is: no changing call; the stored result serves later events', async () => {
    const id = await handMadePipeline(['ORDER_CHANGE', 'REPORT_PROCESSING_FINISHED']);
    await h.clearRequests();
    const props = { ...SELLER_PIPELINE, NotificationTypes: ['REPORT_PROCESSING_FINISHED', 'ORDER_CHANGE'], AdoptId: id };
    if (TEST_READS === 'minimal') {
      // The spec's reads show no stored parameters: adopting would send the unified PATCH blind, which needs the opt-in.
      const reason = await h.fails(h.event(PIPE, 'Create', props));
      expect(reason).toContain(`existingSubscriptionId ${id} (remote identity 362) was not adopted, nothing was changed`);
      expect(reason).toContain('(not atomic); set rebuildOnAdoption: true to allow the rebuild. Why: the service\'s reads do not show the pipeline\'s '
        + 'notificationTypes, deploymentRegion, AWS account');
      expect(await h.changingRequests()).toEqual([]);
      expect(await h.journalRecords()).toEqual([]);
      expect(await h.journalOwner('identity', '362')).toBeUndefined();
      return;
    }
    const before = h.state().pipelines[0];
    const r = await h.onEvent(h.event(PIPE, 'Create', props));
    expect(r.PhysicalResourceId).toBe(id);
    expect(await h.changingRequests()).toEqual([]);
    expect(r.Data!.SubscribedTypes!.split(',').sort()).toEqual(['ORDER_CHANGE', 'REPORT_PROCESSING_FINISHED']);
    expect(r.Data!.BucketName).toBe(before.meta.s3_bucket_name);
    expect(r.Data!.NotificationQueueArn).toBe(before.meta.s3_notification_queue_arn);
    const rec = (await h.journalRecords())[0];
    expect(rec).toMatchObject({ state: 'active', physicalId: id, doc: { adopted: true, result: { meta: before.meta } } });
    expect(rec.doc.adoptionPatched).toBeUndefined();
    expect(await h.journalOwner('identity', '362')).toBe('HandlerTest/Resource');
    // An Update without a change sends nothing; a changed selection sends the unified PATCH, which the service applies
    // with the stored metadata the adoption kept (its queue is kept: same account and region, a queue type remains).
    await h.onEvent(h.event(PIPE, 'Update', props, { PhysicalResourceId: id, OldResourceProperties: { Connection: h.connection, ...props } }));
    expect(await h.changingRequests()).toEqual([]);
    const changed = { ...props, NotificationTypes: ['REPORT_PROCESSING_FINISHED'] };
    const u = await h.onEvent(h.event(PIPE, 'Update', changed, { PhysicalResourceId: id, OldResourceProperties: { Connection: h.connection, ...props } }));
    expect(await h.changingRequests()).toEqual([`PATCH /service/sp/notifications-unified/362/${id} 207`, `PATCH /v2/sub/${id} 200`]);
    expect(u.Data!.NotificationQueueArn).toBe(before.meta.s3_notification_queue_arn);
    expect(u.Data!.SubscribedTypes).toBe('REPORT_PROCESSING_FINISHED');
  });

  test('a pipeline that differs from the declaration is not adopted without rebuildOnAdoption: nothing changes, the difference is named', async () => {
    const id = await handMadePipeline(['ORDER_CHANGE']);
    await h.clearRequests();
    const wrongRegion = await h.fails(h.event(PIPE, 'Create', { ...SELLER_PIPELINE, NotificationTypes: ['ORDER_CHANGE'], DeploymentRegion: 'us-west-2', AdoptId: id }));
    const wrongTypes = await h.fails(h.event(PIPE, 'Create', { ...SELLER_PIPELINE, NotificationTypes: ['ORDER_CHANGE', 'REPORT_PROCESSING_FINISHED'], AdoptId: id }));
    if (TEST_READS === 'vendor') {
      expect(wrongRegion).toContain('the pipeline the service stores differs from the declaration (deploymentRegion: the service\'s pipeline is in '
        + 'us-east-1, the declaration has us-west-2)');
      expect(wrongTypes).toContain('(notificationTypes: the service stores [ORDER_CHANGE], the declaration has [ORDER_CHANGE, REPORT_PROCESSING_FINISHED])');
      expect(wrongTypes).toContain('declare what the service stores, or set rebuildOnAdoption: true');
    } else {
      for (const reason of [wrongRegion, wrongTypes]) expect(reason).toContain('the service\'s reads do not show the pipeline\'s notificationTypes');
    }
    expect(await h.changingRequests()).toEqual([]);
    expect(await h.journalRecords()).toEqual([]);
    expect(await h.journalOwner('sub', id)).toBeUndefined();
  });

  test('stored metadata is not taken on trust: ARNs of another account or mixed regions refuse the adoption; no Subscription may write it', async () => {
    const forged = { s3_notification_queue_arn: 'arn:aws:sqs:us-east-1:999999999999:victim-queue', firehose_arn: 'arn:aws:firehose:us-east-1:999999999999:deliverystream/x' };
    const mixed = { s3_notification_queue_arn: 'arn:aws:sqs:us-east-1:123456789012:q', firehose_arn: 'arn:aws:firehose:us-west-2:123456789012:deliverystream/x' };
    const subscriptions = JSON.stringify({ ORDER_CHANGE: 'u-1' });
    const other = await h.subscribe(107, 362, { subscriptions, meta: JSON.stringify(forged) });
    const both = await h.subscribe(107, 363, { subscriptions, meta: JSON.stringify(mixed) });
    await h.clearRequests();
    const props = { ...SELLER_PIPELINE, NotificationTypes: ['ORDER_CHANGE'] };
    const reasons = [await h.fails(h.event(PIPE, 'Create', { ...props, AdoptId: other })),
      await h.fails(h.event(PIPE, 'Create', { ...props, RemoteIdentityId: '363', AdoptId: both }, { LogicalResourceId: 'Other' }))];
    if (TEST_READS === 'vendor') {
      expect(reasons[0]).toContain('AWS account: the service\'s pipeline is in 999999999999, the roles in 123456789012');
      expect(reasons[1]).toContain('Why: ');
      expect(reasons[1]).toContain('the service\'s reads do not show the pipeline\'s deploymentRegion');
    }
    for (const r of reasons) expect(r).toContain('nothing was changed');
    // The provider never writes a pipeline's subscription as a plain Subscription (it could forge that metadata).
    const asSub = await h.fails(h.event(SUB, 'Create', { ProductId: '107', RemoteIdentityId: '362', AdoptId: other }, { LogicalResourceId: 'Forger' }));
    expect(asSub).toContain('Subscription: product 107 is a notification pipeline\'s product: declare a NotificationPipeline');
    expect(await h.fails(h.event(SUB, 'Create', { ProductId: '86', RemoteIdentityId: '362' }, { LogicalResourceId: 'Forger2' })))
      .toContain('declare a LegacyNotificationPipeline');
    expect(await h.changingRequests()).toEqual([]);
    expect(await h.journalRecords()).toEqual([]);
  });

  test('rebuildOnAdoption: the unified PATCH reconciles it and the journal has a Create\'s record', async () => {
    const id = await handMadePipeline(['ORDER_CHANGE']);
    await h.clearRequests();
    const props = { ...SELLER_PIPELINE, NotificationTypes: ['ORDER_CHANGE', 'REPORT_PROCESSING_FINISHED'], AdoptId: id, RebuildOnAdoption: 'true' };
    const r = await h.onEvent(h.event(PIPE, 'Create', props));
    expect(r.PhysicalResourceId).toBe(id);
    expect(r.Data!.SubscribedTypes!.split(',').sort()).toEqual(['ORDER_CHANGE', 'REPORT_PROCESSING_FINISHED']);
    expect(r.Data!.BucketName).not.toBe('');
    const changing = await h.changingRequests();
    expect(changing).toEqual([`PATCH /service/sp/notifications-unified/362/${id} 207`, `PATCH /v2/sub/${id} 200`]);
    expect(h.state().pipelines).toHaveLength(1);
    const rec = (await h.journalRecords())[0];
    expect(rec).toMatchObject({ state: 'active', physicalId: id });
    expect(Object.keys(rec.doc).sort()).toEqual(expect.arrayContaining(['applied', 'identity', 'result', 'selection', 'subscriptionId']));
    expect(Object.keys(rec.doc.result.subscriptions).sort()).toEqual(['ORDER_CHANGE', 'REPORT_PROCESSING_FINISHED']);
    expect(await h.journalOwner('identity', '362')).toBe('HandlerTest/Resource');
    expect(await h.journalOwner('sub', id)).toBe('HandlerTest/Resource');

    // An Update without a change sends nothing; Delete without a policy releases it (adopted: kept in the service).
    await h.clearRequests();
    await h.onEvent(h.event(PIPE, 'Update', props, { PhysicalResourceId: id, OldResourceProperties: { Connection: h.connection, ...props } }));
    expect(await h.changingRequests()).toEqual([]);
    await h.onEvent(h.event(PIPE, 'Delete', props, { PhysicalResourceId: id }));
    expect(await h.changingRequests()).toEqual([]);
    expect(subOf(id).status).toBe('active');
    expect(h.state().pipelines).toHaveLength(1);
    const released = (await h.journalRecords())[0];
    expect(released.state).toBe('released');
    expect(released.doc.unrestored.join(' ')).toContain('no read shows what they were before');
    // A new pipeline of the identity is refused while the released one runs; adopting it is allowed.
    expect(await h.fails(h.event(PIPE, 'Create', SELLER_PIPELINE, { LogicalResourceId: 'Fresh' }))).toContain(`adopt it with existingSubscriptionId ${id}`);
    await h.onEvent(h.event(PIPE, 'Create', { ...props, RemovalPolicy: 'destroy' }, { LogicalResourceId: 'Again' }));
    // An explicit destroy policy removes the pipeline and ends its subscription.
    await h.onEvent(h.event(PIPE, 'Delete', { ...props, RemovalPolicy: 'destroy' }, { LogicalResourceId: 'Again', PhysicalResourceId: id }));
    expect(subOf(id).status).toBe('invalid');
    expect(h.state().pipelines).toHaveLength(0);
  });

  test('a pipeline whose identity another resource manages is refused naming it; nothing changes', async () => {
    const made = await h.onEvent(h.event(PIPE, 'Create', SELLER_PIPELINE, { LogicalResourceId: 'Owner' }));
    await h.clearRequests();
    const reason = await h.fails(h.event(PIPE, 'Create', { ...SELLER_PIPELINE, AdoptId: made.PhysicalResourceId, RebuildOnAdoption: 'true' }));
    expect(reason).toContain('managed by HandlerTest/Owner');
    expect(await h.changingRequests()).toEqual([]);
  });

  test('a missing or invalid pipeline subscription fails clearly', async () => {
    expect(await h.fails(h.event(PIPE, 'Create', { ...SELLER_PIPELINE, AdoptId: '999999' })))
      .toContain('NotificationPipeline: existingSubscriptionId 999999: no such subscription (the service answered 404)');
    const id = await handMadePipeline();
    await h.api('PATCH', `/v2/sub/${id}`, { data: { type: 'Subscription', id, attributes: { status: 'invalid' } } });
    expect(await h.fails(h.event(PIPE, 'Create', { ...SELLER_PIPELINE, AdoptId: id }))).toContain('is invalid and cannot be adopted');
  });
});

describe('HistoryRequest adoption', () => {
  let subId: string;
  const histProps = (extra: Record<string, unknown> = {}): Record<string, unknown> => ({
    SubscriptionId: subId, StartDate: daysAgo(10), EndDate: daysAgo(5), StageId: '1000', WaitForCompletion: 'false', TimeoutSeconds: '600', ...extra,
  });
  async function handMadeHistory(): Promise<string> {
    const r = await h.api('POST', `/service/history/production/history/${subId}`, {
      data: { type: 'HistoryTransaction', attributes: { start_date: daysAgo(10), end_date: daysAgo(5), stage_id: 1000 } },
    });
    expect(r.status).toBe(201);
    return String(r.body.data.id);
  }
  beforeEach(async () => {
    subId = await h.subscribe(3001, 362, { marketplace_id: 'ATVPDKIKX0DER' });
  });

  test('adopts without a request, records and claims it; Delete releases it (retain by default), or cancels it under destroy', async () => {
    const id = await handMadeHistory();
    await h.clearRequests();
    const r = await h.onEvent(h.event(HIST, 'Create', histProps({ AdoptId: id })));
    expect(r.PhysicalResourceId).toBe(id);
    expect(r.Data).toMatchObject({ HistoryTransactionId: id, Status: 'pending' });
    expect(await h.changingRequests()).toEqual([]);
    expect((await h.journalRecords()).map((x) => [x.state, x.physicalId])).toEqual([['active', id]]);
    expect(await h.journalOwner('history', id)).toBe('HandlerTest/Resource');
    await h.clearRequests();
    await h.onEvent(h.event(HIST, 'Delete', histProps({ AdoptId: id }), { PhysicalResourceId: id }));
    expect(await h.changingRequests()).toEqual([]);
    expect(h.state().history.find((x: any) => String(x.id) === id).status).toBe('pending');
    expect((await h.journalRecords())[0].state).toBe('released');
    await h.onEvent(h.event(HIST, 'Create', histProps({ AdoptId: id, RemovalPolicy: 'destroy' }), { LogicalResourceId: 'Again' }));
    await h.onEvent(h.event(HIST, 'Delete', histProps({ AdoptId: id, RemovalPolicy: 'destroy' }), { LogicalResourceId: 'Again', PhysicalResourceId: id }));
    expect(h.state().history.find((x: any) => String(x.id) === id).status).toBe('cancelled');
    expect((await h.journalRecords('Again'))[0].state).toBe('deleted');
  });

  test('owned by another resource: refused naming it; missing or cancelled: fails clearly', async () => {
    const made = await h.onEvent(h.event(HIST, 'Create', histProps(), { LogicalResourceId: 'Owner' }));
    await h.clearRequests();
    const reason = await h.fails(h.event(HIST, 'Create', histProps({ AdoptId: made.PhysicalResourceId })));
    expect(reason).toContain(`history transaction ${made.PhysicalResourceId} is managed by HandlerTest/Owner`);
    expect(await h.changingRequests()).toEqual([]);
    expect(await h.fails(h.event(HIST, 'Create', histProps({ AdoptId: '424242' })))).toContain('existingHistoryTransactionId 424242: no such history transaction');
    const id = await handMadeHistory();
    await h.api('PATCH', `/service/history/production/history/${id}`, { data: { type: 'HistoryTransaction', id, attributes: { status: 'cancelled' } } });
    await h.clearRequests();
    expect(await h.fails(h.event(HIST, 'Create', histProps({ AdoptId: id })))).toContain(`existingHistoryTransactionId ${id} is cancelled and cannot be adopted`);
    expect(await h.changingRequests()).toEqual([]);
  });

  test('other dates than the read shows are refused (vendor reads)', async () => {
    const id = await handMadeHistory();
    const outcome = await h.onEvent(h.event(HIST, 'Create', histProps({ AdoptId: id, StartDate: daysAgo(9) }))).then(() => 'adopted', (e: Error) => e.message);
    if (TEST_READS === 'vendor') expect(outcome).toContain(`startDate ${daysAgo(10)} (declared ${daysAgo(9)})`);
    else expect(outcome).toBe('adopted');
  });
});
