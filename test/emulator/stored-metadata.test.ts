import { createSub, Harness, useHarness } from './helpers';
import { DEFAULT_FIXTURES } from '../../src/emulator';

let h: Harness;
useHarness((started) => {
  h = started;
}, {}, { reset: true });

const ACCT = '123456789012';
const U = '/service/sp/notifications-unified';
const body = (types: string[]) => ({
  data: {
    type: 'Service',
    attributes: {
      notification_types: types,
      role_arn: `arn:aws:iam::${ACCT}:role/dpi-management`,
      eb_to_fh_role_arn: `arn:aws:iam::${ACCT}:role/dpi-eventbus-to-firehose`,
      aws_region: 'us-east-1',
    },
  },
});

async function unifiedPost(rid: number, types: string[]): Promise<{ subscriptions: Record<string, string>; meta: Record<string, string> }> {
  const r = await h.api('POST', `${U}/${rid}`, body(types));
  expect(r.status).toBe(207);
  return r.body.data.attributes;
}

/** Replaces the product-107 record's required meta fields (fixtures merge by product id). */
async function requireKeys(keys: string[]): Promise<void> {
  const p107 = DEFAULT_FIXTURES.products!.find((p) => p.id === 107)!;
  const r = await h.admin('POST', '/fixtures', { products: [{ ...p107, required_meta_fields: keys, subscription_info: { spm_requirements: keys } }] });
  expect(r.status).toBe(200);
}

/** The default-key parameters of a unified result. */
const stored = (a: { subscriptions: Record<string, string>; meta: Record<string, string> }): Record<string, string> => ({
  subscriptions: JSON.stringify(a.subscriptions),
  meta: JSON.stringify(a.meta),
});

const patchSub = (id: number, pp: Record<string, string>) => h.api('PATCH', `/v2/sub/${id}`, { data: { type: 'Subscription', id: String(id), attributes: { product_parameters: pp } } });

describe('default fixtures: remote_identity_id, subscriptions, meta', () => {
  test('product 107 declares its required meta fields; create without them is a 400', async () => {
    const p = (await h.api('GET', '/v2/product/107')).body.data;
    expect(p.attributes.required_meta_fields).toEqual(['remote_identity_id', 'subscriptions', 'meta']);
    const a = await unifiedPost(362, ['ORDER_CHANGE']);
    await expect(createSub(h, { product: 107, remote_identity: 362, product_parameters: { meta: JSON.stringify(a.meta) } })).rejects.toThrow(/subscriptions/);
  });

  test('PATCH and DELETE work with the stored metadata', async () => {
    const a = await unifiedPost(362, ['ORDER_CHANGE', 'FEED_PROCESSING_FINISHED']);
    const sid = await createSub(h, { product: 107, remote_identity: 362, product_parameters: stored(a) });
    const p = await h.api('PATCH', `${U}/362/${sid}`, body(['ORDER_CHANGE']));
    expect(p.status).toBe(207);
    const b = p.body.data.attributes;
    expect((await patchSub(sid, { subscriptions: JSON.stringify(b.subscriptions), meta: JSON.stringify(b.meta) })).status).toBe(200);
    expect((await h.api('DELETE', `${U}/362/${sid}`)).status).toBe(204);
    expect((await h.state()).pipelines).toHaveLength(0);
  });

  test.each([
    ['meta of another pipeline', 'meta', 'other'],
    ['meta not JSON', 'meta', 'not json'],
    ['meta without identifiers', 'meta', JSON.stringify({ aws_region: 'us-east-1' })],
    ['subscriptions empty', 'subscriptions', '{}'],
    ['subscriptions with a non-type key', 'subscriptions', JSON.stringify({ NOT_A_TYPE: 'upstream-1' })],
  ])('400 when the stored %s', async (_n, key, value) => {
    const a = await unifiedPost(362, ['ORDER_CHANGE']);
    const other = await unifiedPost(363, ['ITEM_SALES_EVENT_CHANGE']);
    const sid = await createSub(h, { product: 107, remote_identity: 362, product_parameters: stored(a) });
    const v = value === 'other' ? JSON.stringify(other.meta) : value;
    // Rewrite the stored value (fixtures bypass the create-time checks).
    await h.admin('POST', '/fixtures', {
      subscriptions: [{ id: sid, account: 1001, user: 2001, product: 107, remote_identity: 362, product_parameters: { remote_identity_id: '362', subscriptions: JSON.stringify(a.subscriptions), meta: JSON.stringify(a.meta), [key]: v } }],
    });
    const before = await h.state();
    const d = await h.api('DELETE', `${U}/362/${sid}`);
    expect(d.status).toBe(400);
    const p = await h.api('PATCH', `${U}/362/${sid}`, body(['ORDER_CHANGE']));
    expect(p.status).toBe(400);
    const after = await h.state();
    expect(after.pipelines).toEqual(before.pipelines);
    expect(after.upstreamSubscriptions).toEqual(before.upstreamSubscriptions);
  });

  test('400 naming the key when one is missing', async () => {
    const a = await unifiedPost(362, ['ORDER_CHANGE']);
    await h.admin('POST', '/fixtures', {
      subscriptions: [{ id: 9601, account: 1001, user: 2001, product: 107, remote_identity: 362, product_parameters: { remote_identity_id: '362', meta: JSON.stringify(a.meta) } }],
    });
    const r = await h.api('DELETE', `${U}/362/9601`);
    expect(r.status).toBe(400);
    expect(r.body.errors[0].detail).toMatch(/missing or invalid stored metadata \(subscriptions\)/);
  });
});

describe("fixtures naming other keys: ['remote_identity_id', 'upstream_subscriptions', 's3_notification_prefix']", () => {
  const KEYS = ['remote_identity_id', 'upstream_subscriptions', 's3_notification_prefix'];

  test('create requires the new keys; PATCH and DELETE read them', async () => {
    await requireKeys(KEYS);
    const a = await unifiedPost(362, ['ORDER_CHANGE']);
    // The default keys no longer satisfy the product.
    await expect(createSub(h, { product: 107, remote_identity: 362, product_parameters: stored(a) }))
      .rejects.toThrow(/upstream_subscriptions/);
    const sid = await createSub(h, {
      product: 107,
      remote_identity: 362,
      product_parameters: { upstream_subscriptions: JSON.stringify(a.subscriptions), s3_notification_prefix: a.meta.s3_notification_prefix },
    });
    const p = await h.api('PATCH', `${U}/362/${sid}`, body(['ORDER_CHANGE', 'FEED_PROCESSING_FINISHED']));
    expect(p.status).toBe(207);
    const b = p.body.data.attributes;
    const next = { upstream_subscriptions: JSON.stringify(b.subscriptions), s3_notification_prefix: b.meta.s3_notification_prefix };
    expect((await patchSub(sid, next)).status).toBe(200);
    expect((await h.api('DELETE', `${U}/362/${sid}`)).status).toBe(204);
    expect((await h.state()).pipelines).toHaveLength(0);
  });

  test.each([
    ['prefix missing', { s3_notification_prefix: undefined }, /s3_notification_prefix/],
    ['prefix of no pipeline', { s3_notification_prefix: 'notifications/362/pl-999/' }, /does not identify/],
    ['upstream map missing', { upstream_subscriptions: undefined }, /upstream_subscriptions/],
    ['upstream map not JSON', { upstream_subscriptions: 'x' }, /upstream_subscriptions/],
    ['identity of another subscription', { remote_identity_id: '363' }, /remote_identity_id/],
  ])('400 when %s', async (_n, over, msg) => {
    await requireKeys(KEYS);
    const a = await unifiedPost(362, ['ORDER_CHANGE']);
    const pp: Record<string, string | undefined> = {
      remote_identity_id: '362', upstream_subscriptions: JSON.stringify(a.subscriptions), s3_notification_prefix: a.meta.s3_notification_prefix, ...over,
    };
    const kept = Object.fromEntries(Object.entries(pp).filter(([, v]) => v !== undefined));
    await h.admin('POST', '/fixtures', { subscriptions: [{ id: 9701, account: 1001, user: 2001, product: 107, remote_identity: 362, product_parameters: kept }] });
    for (const r of [await h.api('DELETE', `${U}/362/9701`), await h.api('PATCH', `${U}/362/9701`, body(['ORDER_CHANGE']))]) {
      expect(r.status).toBe(400);
      expect(r.body.errors[0].detail).toMatch(msg);
    }
    expect((await h.state()).pipelines).toHaveLength(1);
  });
});
