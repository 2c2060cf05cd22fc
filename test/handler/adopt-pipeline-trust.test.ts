/**
 * An adoption that takes a pipeline "as it is" trusts the result its subscription stores, which whoever holds the
 * service account can write and an earlier manager may have left stale. These are the cases where that witness is
 * wrong and the adoption must refuse (nothing changed) rather than take it: a partial, malformed, wildcard or oversized
 * result; another live product-107 subscription of the identity; an earlier manager whose journal confirmed another
 * result or other roles, or released the pipeline mid-update; and the ways around (a Subscription writing a
 * pipeline's metadata). With `RebuildOnAdoption` the result is always the service's answer. The stored parameter read
 * is the vendor's: under the spec's reads each adoption here is refused as "not shown".
 */
import { EB_ROLE, HandlerHarness, SELLER_PIPELINE, TEST_READS, useHandlerHarness } from './helpers';
import { ResourceTypes } from '../../src/kinds';

let h: HandlerHarness;
useHandlerHarness((started) => {
  h = started;
}, { resetEach: true });

const PIPE = ResourceTypes.NOTIFICATION_PIPELINE;
const SUB = ResourceTypes.SUBSCRIPTION;
const vendor = TEST_READS === 'vendor';
const TYPES = ['ORDER_CHANGE', 'REPORT_PROCESSING_FINISHED'];

/** A pipeline made through the service's endpoints, and its product-107 subscription storing the result. */
async function handMade(types: string[] = TYPES, ebRole = EB_ROLE): Promise<{ id: string; meta: Record<string, string>; subscriptions: string }> {
  const post = await h.api('POST', '/service/sp/notifications-unified/362', {
    data: { type: 'Service', attributes: { notification_types: types, role_arn: SELLER_PIPELINE.RoleArn, eb_to_fh_role_arn: ebRole, aws_region: 'us-east-1' } },
  });
  const a = post.body.data?.attributes ?? post.body.attributes;
  const subscriptions = JSON.stringify(a.subscriptions);
  return { id: await h.subscribe(107, 362, { subscriptions, meta: JSON.stringify(a.meta) }), meta: a.meta, subscriptions };
}

const declared = (id: string, extra: Record<string, unknown> = {}): Record<string, unknown> =>
  ({ ...SELLER_PIPELINE, NotificationTypes: TYPES, AdoptId: id, ...extra });

/** Adopting `id` fails before any change; the reason is returned. */
async function refused(id: string, logicalId = 'Adopter', extra: Record<string, unknown> = {}): Promise<string> {
  await h.clearRequests();
  const reason = await h.fails(h.event(PIPE, 'Create', declared(id, extra), { LogicalResourceId: logicalId }));
  expect(reason).toContain('was not adopted, nothing was changed');
  expect(await h.changingRequests()).toEqual([]);
  return reason;
}

async function storeMeta(id: string, subscriptions: string, meta: unknown): Promise<void> {
  const r = await h.api('PATCH', `/v2/sub/${id}`, {
    data: { type: 'Subscription', id, attributes: { product_parameters: { subscriptions, meta: JSON.stringify(meta) } } },
  });
  expect(r.status).toBe(200);
}

test('a forged or partial stored result is not taken: a list for an ARN, a wildcard bucket, another account, missing keys, a huge value', async () => {
  const { id, meta, subscriptions } = await handMade();
  const forged: Array<[string, unknown]> = [
    ['a list that prints as an ARN', { ...meta, s3_notification_queue_arn: ['arn:aws:sqs:us-east-1:999999999999:evil'] }],
    ['a wildcard bucket', { ...meta, s3_bucket_name: '*', s3_notification_prefix: '' }],
    ['a queue of another account', { ...meta, s3_notification_queue_arn: 'arn:aws:sqs:us-east-1:999999999999:evil' }],
    ['a bucket ARN for a queue', { ...meta, s3_notification_queue_arn: 'arn:aws:s3:::bucket' }],
    ['missing keys', { s3_notification_queue_arn: meta.s3_notification_queue_arn, firehose_arn: meta.firehose_arn }],
    ['a huge value', { ...meta, pipeline_id: 'x'.repeat(20_000) }],
  ];
  for (const [what, m] of forged) {
    await storeMeta(id, subscriptions, m);
    const reason = await refused(id);
    const expected = /Why: (the service's reads do not show the pipeline's (notificationTypes|AWS account)|its stored result cannot be taken as the pipeline's \(its meta lacks)/;
    if (vendor) expect([what, reason]).toEqual([what, expect.stringMatching(expected)]);
  }
  expect(await h.journalRecords()).toEqual([]);
  // The real result again: taken as it is.
  await storeMeta(id, subscriptions, meta);
  if (vendor) {
    await h.clearRequests();
    const r = await h.onEvent(h.event(PIPE, 'Create', declared(id), { LogicalResourceId: 'Adopter' }));
    expect(await h.changingRequests()).toEqual([]);
    expect(r.Data!.BucketName).toBe(meta.s3_bucket_name);
  }
});

test('another live product-107 subscription of the identity makes the stored result ambiguous: refused', async () => {
  const { id, meta, subscriptions } = await handMade();
  await h.subscribe(107, 362, { subscriptions, meta: JSON.stringify(meta) });
  const reason = await refused(id);
  if (vendor) expect(reason).toContain('remote identity 362 has other live product-107 subscriptions');
});

test('an earlier manager that released the pipeline mid-update, or with other roles, is believed over the stored result', async () => {
  // Old makes the pipeline (retain); its widening Update is applied but the result is never stored (the subscription's
  // PATCH fails), then the stack is deleted: the release stores the confirmed result first.
  const made = await h.onEvent(h.event(PIPE, 'Create', { ...SELLER_PIPELINE, RemovalPolicy: 'retain' }, { LogicalResourceId: 'Old' }));
  const id = made.PhysicalResourceId;
  const old = { Connection: h.connection, ...SELLER_PIPELINE, RemovalPolicy: 'retain' };
  const wider = { ...SELLER_PIPELINE, NotificationTypes: TYPES, RemovalPolicy: 'retain' };
  await h.admin('POST', '/faults', { method: 'PATCH', pathPrefix: `/v2/sub/${id}`, status: 400, count: 1 });
  await h.fails(h.event(PIPE, 'Update', wider, { LogicalResourceId: 'Old', PhysicalResourceId: id, OldResourceProperties: old }));
  await h.admin('DELETE', '/faults');
  await h.onEvent(h.event(PIPE, 'Delete', wider, { LogicalResourceId: 'Old', PhysicalResourceId: id }));
  const released = (await h.journalRecords('Old'))[0];
  expect(released.state).toBe('released');
  expect(released.doc.staleMetadata).toBeUndefined();
  if (vendor) {
    // The stored result now says what the service has: the narrower declaration differs, the wider one is taken.
    expect(await refused(id, 'Narrow', { NotificationTypes: ['ORDER_CHANGE'] })).toContain('the service stores [ORDER_CHANGE, REPORT_PROCESSING_FINISHED]');
    // Other roles than the earlier manager last applied: refused, named.
    expect(await refused(id, 'OtherRoles', { EbToFhRoleArn: EB_ROLE.replace('dpi-eventbus-to-firehose', 'other') })).toContain('roles: ');
    await h.clearRequests();
    await h.onEvent(h.event(PIPE, 'Create', declared(id), { LogicalResourceId: 'New' }));
    expect(await h.changingRequests()).toEqual([]);
  }
});

test('released while an update\'s outcome is unknown: the record says the stored result may be stale, and an adoption refuses it', async () => {
  const made = await h.onEvent(h.event(PIPE, 'Create', { ...SELLER_PIPELINE, RemovalPolicy: 'retain' }, { LogicalResourceId: 'Old' }));
  const id = made.PhysicalResourceId;
  const old = { Connection: h.connection, ...SELLER_PIPELINE, RemovalPolicy: 'retain' };
  const wider = { ...SELLER_PIPELINE, NotificationTypes: TYPES, RemovalPolicy: 'retain' };
  // The unified PATCH gets no answer (a connection dropped after the request): its outcome is unknown.
  await h.admin('POST', '/faults', { method: 'PATCH', pathPrefix: `/service/sp/notifications-unified/362/${id}`, dropResponse: true, count: 10 });
  await h.fails(h.event(PIPE, 'Update', wider, { LogicalResourceId: 'Old', PhysicalResourceId: id, OldResourceProperties: old }));
  await h.admin('DELETE', '/faults');
  await h.onEvent(h.event(PIPE, 'Delete', wider, { LogicalResourceId: 'Old', PhysicalResourceId: id }));
  const released = (await h.journalRecords('Old'))[0];
  expect([released.state, released.doc.staleMetadata]).toEqual(['released', true]);
  const reason = await refused(id, 'New', { NotificationTypes: ['ORDER_CHANGE'] });
  if (vendor) expect(reason).toContain('released it with an update whose result the service may not store');
});

test('rebuildOnAdoption takes the result from the service\'s answer even when the stored one matches', async () => {
  const { id } = await handMade();
  await h.clearRequests();
  await h.onEvent(h.event(PIPE, 'Create', declared(id, { RebuildOnAdoption: 'true' })));
  expect((await h.changingRequests()).filter((r) => r.startsWith('PATCH /service/sp/notifications-unified/362/'))).toHaveLength(1);
});

test('a Subscription never writes the keys a pipeline\'s result is stored under', async () => {
  const { id } = await handMade();
  await h.clearRequests();
  const reason = await h.fails(h.event(SUB, 'Create', { ProductId: '3001', RemoteIdentityId: '362', AdoptId: id, ProductParameters: { meta: '{}' } }));
  expect(reason).toContain('Subscription: productParameters meta is where a notification pipeline\'s result is stored');
  expect(await h.changingRequests()).toEqual([]);
});
