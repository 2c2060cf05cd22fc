/**
 * Journal documents carry their kind (`kind`: the resource type) since the kinds registry; `dpi orphans` reads the tag
 * and falls back to the document's shape only for untagged (older) documents.
 */
import { recordType, typeFromShape } from '../../src/cli/commands/orphans-judge';

import type { Journal, JournalRecord } from '../../src/handler/journal';
import { taggingJournal } from '../../src/handler/kinds';
import { ResourceTypes, tagDoc, taggedKind } from '../../src/kinds';
import { HandlerHarness, useHandlerHarness } from '../handler/helpers';

/** Documents as versions before the tag wrote them, one per kind. */
const OLD_DOCS: Array<[string, Record<string, unknown>]> = [
  [ResourceTypes.NOTIFICATION_PIPELINE, { identity: '362', selection: { types: ['ORDER_CHANGE'] }, subscriptionId: '9' }],
  [ResourceTypes.HISTORY_REQUEST, { request: '{"dates":["2026-01-01"]}', subscriptionId: '9' }],
  [ResourceTypes.PRODUCT_ORDER_JOBS, { subscriptionId: '9', stageId: 1000, primaryJobId: '4', submitted: [] }],
  [ResourceTypes.SUBSCRIPTION, { product: 3001, identity: '362', applied: { status: 'active' } }],
  [ResourceTypes.LEGACY_NOTIFICATION_PIPELINE, { identity: '362', applied: { queueArn: 'arn:q', types: [] }, adopted: true }],
];

describe('the kind tag of a journal document', () => {
  test.each(OLD_DOCS)('an untagged %s document is still read by its shape', (type, doc) => {
    expect(taggedKind(doc)).toBeUndefined();
    expect(typeFromShape(doc)).toBe(type);
    expect(recordType(doc)).toBe(type);
    // The local state's type is used for an untagged document.
    expect(recordType(doc, ResourceTypes.HISTORY_REQUEST)).toBe(ResourceTypes.HISTORY_REQUEST);
  });

  test.each(OLD_DOCS)('a tagged %s document is read by its tag, not its shape', (type, doc) => {
    const tagged = tagDoc(doc, ResourceTypes.SUBSCRIPTION);
    expect(recordType(tagged)).toBe(ResourceTypes.SUBSCRIPTION);
    expect(recordType(tagDoc(doc, type as typeof ResourceTypes.SUBSCRIPTION))).toBe(type);
    // The journal's proof wins over the shape; a tag of no kind of this library counts as no tag.
    expect(recordType({ ...doc, kind: 'Custom::Other' })).toBe(type);
    // The tag (what the handler that wrote the record was serving) wins over the local state's current type too.
    const other = type === ResourceTypes.HISTORY_REQUEST ? ResourceTypes.SUBSCRIPTION : ResourceTypes.HISTORY_REQUEST;
    expect(recordType(tagDoc(doc, type as typeof ResourceTypes.SUBSCRIPTION), other)).toBe(type);
  });

  test('a document of no kind and no known shape stays unknown', () => {
    expect(recordType({})).toBe('unknown');
    expect(recordType({ kind: 42 })).toBe('unknown');
  });

  test('the tagging journal adds the tag to every document it writes, and nothing else', async () => {
    const written: Array<{ state: string; doc: unknown }> = [];
    const rec = (doc: unknown): JournalRecord<unknown> => ({ key: 'S/R', id: '1', state: 'active', version: 1, updatedAt: '', doc });
    const inner = {
      create: async (_k: string, state: string, doc: unknown) => { written.push({ state, doc }); return rec(doc); },
      save: async (_r: JournalRecord<unknown>, state: string, doc: unknown) => { written.push({ state, doc }); return rec(doc); },
    } as unknown as Journal;
    const j = taggingJournal(inner, ResourceTypes.HISTORY_REQUEST);
    await j.create('S/R', 'creating', { subscriptionId: '9' });
    await j.save(rec({ subscriptionId: '9' }), 'active', { subscriptionId: '9', known: ['1'] });
    expect(written).toEqual([
      { state: 'creating', doc: { subscriptionId: '9', kind: ResourceTypes.HISTORY_REQUEST } },
      { state: 'active', doc: { subscriptionId: '9', known: ['1'], kind: ResourceTypes.HISTORY_REQUEST } },
    ]);
  });
});

describe('the handler writes tagged documents', () => {
  let h: HandlerHarness;
  useHandlerHarness((started) => {
    h = started;
  }, { resetEach: true });

  test('a subscription and its order jobs: each record carries its kind', async () => {
    const sub = await h.onEvent(h.event(ResourceTypes.SUBSCRIPTION, 'Create', {
      ProductId: '3001', RemoteIdentityId: '362', ProductParameters: { marketplace_id: 'ATVPDKIKX0DER' }, Status: 'active', OnDelete: 'invalid',
    }, { LogicalResourceId: 'Orders' }));
    const subRecs = await h.journalRecords('Orders');
    expect(subRecs.map((r) => [r.state, r.doc?.kind])).toEqual([['active', ResourceTypes.SUBSCRIPTION]]);
    await h.onEvent(h.event(ResourceTypes.PRODUCT_ORDER_JOBS, 'Create', { SubscriptionId: sub.PhysicalResourceId, OrderIds: ['123-1000000-7000000'] }, { LogicalResourceId: 'Jobs' }));
    const jobRecs = await h.journalRecords('Jobs');
    expect(jobRecs.map((r) => [r.state, r.doc?.kind])).toEqual([['active', ResourceTypes.PRODUCT_ORDER_JOBS]]);
    // The shape alone would have said the same: the tag changes no decision.
    expect(typeFromShape({ ...subRecs[0].doc, kind: undefined })).toBe(ResourceTypes.SUBSCRIPTION);
    expect(typeFromShape({ ...jobRecs[0].doc, kind: undefined })).toBe(ResourceTypes.PRODUCT_ORDER_JOBS);
  });
});
