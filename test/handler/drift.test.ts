/**
 * The drift engine with a scripted client: what it compares when a service's reads show more than the spec
 * guarantees (product parameters, stage IDs, a job's extra_context), and the cases without a journal record.
 */
import { DpiClient, Job, ServiceError, Subscription } from '../../src/client';
import { checkDrift, DriftResource, isDrifted } from '../../src/handler/drift';
import { Journal, JournalRecord } from '../../src/handler/journal';

function journalOf(records: Array<JournalRecord<unknown>>): Journal {
  const notUsed = (): never => {
    throw new Error('the drift check must not write the journal');
  };
  return {
    records: async <D>(key: string) => records.filter((r) => r.key === key) as Array<JournalRecord<D>>,
    create: notUsed,
    save: notUsed,
    claim: notUsed,
    owners: notUsed,
    transfer: notUsed,
    scan: notUsed,
    lock: notUsed,
    unlock: notUsed,
    fact: notUsed,
    setFact: notUsed,
    dropFact: notUsed,
  };
}

function rec(key: string, state: string, physicalId: string, doc: unknown, id = '2026-01-01T00:00:00.000Z#00000001'): JournalRecord<unknown> {
  return { key, id, state, physicalId, version: 1, updatedAt: '', doc };
}

const notFound = (path: string): ServiceError => new ServiceError({ message: 'not found', status: 404, method: 'GET', path } as never);

function clientOf(subs: Record<string, Partial<Subscription>>, jobs: Record<string, Job[]> = {}): DpiClient {
  return {
    subscriptions: {
      get: async (id: string) => {
        const s = subs[String(id)];
        if (!s) throw notFound(`/sub/${id}`);
        return { id: String(id), ...s } as Subscription;
      },
    },
    jobs: {
      list: async (q: { subscriptionIds: string[] }) => {
        const j = jobs[String(q.subscriptionIds[0])];
        if (!j) throw notFound('/service/jobs/jobs');
        return j;
      },
    },
  } as unknown as DpiClient;
}

const SUB: DriftResource = { stack: 'S', logicalId: 'Orders', type: 'Custom::DpiSubscription', physicalId: '9002' };
const APPLIED = {
  product: 3001,
  identity: '362',
  subscriptionId: '9002',
  applied: { status: 'active', name: 'orders', storageGroupId: 501, params: { marketplace_id: 'A1', stage_ids: '[1000,1001]', remote_identity_id: '362' } },
};

test('a read that shows product parameters: stage IDs and each parameter compared as declared -> live', async () => {
  const client = clientOf({
    9002: { status: 'active', name: 'orders', storage_group: 501, remote_identity: 362, product_parameters: { marketplace_id: 'A2', stage_ids: '[1000]', remote_identity_id: '362' } },
  });
  const [row] = await checkDrift([SUB], { client, journal: journalOf([rec('S/Orders', 'active', '9002', APPLIED)]) });
  expect(row.status).toBe('MODIFIED');
  expect(row.differences).toEqual([
    { property: 'productParameters.marketplace_id', declared: 'A1', live: 'A2' },
    { property: 'stageIds', declared: '1000,1001', live: '1000' },
  ]);
  expect(row.notChecked).toEqual([]);
});

test('the unversioned meta array counts as shown parameters; the same values are IN_SYNC', async () => {
  const client = clientOf({
    9002: {
      status: 'active',
      subscription_product_meta_attributes: [{ data_key: 'marketplace_id', data_value: 'A1' }, { data_key: 'stage_ids', data_value: '[1001, 1000]' }],
    } as Partial<Subscription>,
  });
  const [row] = await checkDrift([SUB], { client, journal: journalOf([rec('S/Orders', 'active', '9002', APPLIED)]) });
  expect(row).toMatchObject({ status: 'IN_SYNC', differences: [], notChecked: ['name', 'storageGroupId', 'remoteIdentityId'] });
});

test('the record of the deployed physical ID is the declared state (an older, replaced record is not)', async () => {
  const client = clientOf({ 9002: { status: 'paused' } });
  const journal = journalOf([
    rec('S/Orders', 'deleted', '9001', { ...APPLIED, applied: { ...APPLIED.applied, status: 'paused' } }, '2025-01-01T00:00:00.000Z#1'),
    rec('S/Orders', 'active', '9002', { ...APPLIED, applied: { ...APPLIED.applied, status: 'paused' } }),
  ]);
  const [row] = await checkDrift([SUB], { client, journal });
  expect(row.status).toBe('IN_SYNC');
  const [other] = await checkDrift([SUB], { client: clientOf({ 9002: { status: 'active' } }), journal });
  expect(other.differences).toEqual([{ property: 'status', declared: 'paused', live: 'active' }]);
});

test('no journal record: NOT_CHECKED (not drift), unless the record is gone, which is DELETED', async () => {
  const rows = await checkDrift([SUB, { ...SUB, logicalId: 'Other', physicalId: '9003' }, { ...SUB, logicalId: 'Failed', physicalId: 'S-Failed-123:abc' }],
    { client: clientOf({ 9002: { status: 'active' } }), journal: journalOf([]) });
  expect(rows.map((r) => [r.logicalId, r.status])).toEqual([['Orders', 'NOT_CHECKED'], ['Other', 'DELETED'], ['Failed', 'NOT_CHECKED']]);
  expect(rows[0].reason).toContain('no journal record');
  expect(rows[1].reason).toBe('not found (404)');
  expect(rows.filter(isDrifted)).toHaveLength(1);
});

test('order jobs: a job listing that shows extra_context compares the submitted order IDs; a missing job is drift', async () => {
  const r: DriftResource = { stack: 'S', logicalId: 'Jobs', type: 'Custom::DpiProductOrderJobs', physicalId: '10' };
  const doc = { subscriptionId: '9002', stageId: 1000, primaryJobId: '10', submitted: ['111-1111111-1111111', '222-2222222-2222222'], jobIds: ['11', '12'] };
  const ctx = (ids: string[]): string => JSON.stringify({ order_ids: ids });
  const journal = journalOf([rec('S/Jobs', 'active', '10', doc)]);
  const all = [{ id: '10', is_primary: true }, { id: '11', is_primary: false, extra_context: ctx(['111-1111111-1111111']) },
    { id: '12', is_primary: false, extra_context: ctx(['222-2222222-2222222']) }] as Job[];
  expect((await checkDrift([r], { client: clientOf({}, { 9002: all }), journal }))[0].status).toBe('IN_SYNC');
  const [gone] = await checkDrift([r], { client: clientOf({}, { 9002: all.slice(0, 2) }), journal });
  expect(gone.differences).toEqual([
    { property: 'jobIds', declared: '11,12', live: '11' },
    { property: 'orderIds', declared: '111-1111111-1111111,222-2222222-2222222', live: '111-1111111-1111111' },
  ]);
  const [noPrimary] = await checkDrift([r], { client: clientOf({}, { 9002: all.slice(1) }), journal });
  expect(noPrimary).toMatchObject({ status: 'DELETED', reason: 'primary job 10 is not listed for subscription 9002' });
  const [minimal] = await checkDrift([r], { client: clientOf({}, { 9002: all.map((j) => ({ id: j.id, is_primary: j.is_primary })) }), journal });
  expect(minimal).toMatchObject({ status: 'IN_SYNC', notChecked: ['orderIds'] });
});

test('a retired legacy pipeline is expected invalid; an adopted one is expected active', async () => {
  const r: DriftResource = { stack: 'S', logicalId: 'Legacy', type: 'Custom::DpiLegacyNotificationPipeline', physicalId: '8601' };
  const retired = journalOf([rec('S/Legacy', 'retired', '8601', { identity: '364', applied: { queueArn: 'q', types: [] } })]);
  expect((await checkDrift([r], { client: clientOf({ 8601: { status: 'invalid' } }), journal: retired }))[0].status).toBe('IN_SYNC');
  expect((await checkDrift([r], { client: clientOf({ 8601: { status: 'active' } }), journal: retired }))[0].differences)
    .toEqual([{ property: 'status', declared: 'invalid', live: 'active' }]);
  const adopted = journalOf([rec('S/Legacy', 'active', '8601', { identity: '364', applied: { queueArn: 'q', types: [] } })]);
  expect((await checkDrift([r], { client: clientOf({ 8601: { status: 'cancelled' } }), journal: adopted }))[0])
    .toMatchObject({ status: 'DELETED', reason: 'status cancelled' });
});

test('a failure other than "not found" is thrown (the command reports it), nothing is guessed', async () => {
  const client = {
    subscriptions: { get: async () => { throw new ServiceError({ message: 'boom', status: 500, method: 'GET', path: '/sub/9002' } as never); } },
  } as unknown as DpiClient;
  await expect(checkDrift([SUB], { client, journal: journalOf([rec('S/Orders', 'active', '9002', APPLIED)]) })).rejects.toThrow('boom');
});

describe('stored product parameters read in bulk (the vendor\'s SPP reads)', () => {
  const PIPE: DriftResource = { stack: 'S', logicalId: 'Pipe', type: 'Custom::DpiNotificationPipeline', physicalId: '9100' };
  const PIPE_DOC = { identity: '362', subscriptionId: '9100', applied: { types: ['ORDER_CHANGE', 'FEED_PROCESSING_FINISHED'], roleArn: 'r', region: 'us-east-1' } };
  const journal = journalOf([rec('S/Orders', 'active', '9002', APPLIED), rec('S/Pipe', 'active', '9100', PIPE_DOC)]);
  function withParameters(stored: Map<string, Record<string, string>> | undefined | Error, calls: string[][]): DpiClient {
    const c = clientOf({ 9002: { status: 'active' }, 9100: { status: 'active' } }) as unknown as Record<string, unknown>;
    c.parameters = {
      bulk: async (ids: string[]) => {
        calls.push(ids.map(String));
        if (stored instanceof Error) throw stored;
        return stored;
      },
    };
    return c as unknown as DpiClient;
  }

  test('one bulk read for every subscription and pipeline; stage IDs, declared parameters and stored types compared', async () => {
    const calls: string[][] = [];
    const stored = new Map<string, Record<string, string>>([
      ['9002', { marketplace_id: 'A1', stage_ids: '[1001, 1000, 1002]', remote_identity_id: '362', undeclared: 'x' }],
      ['9100', { hooks: '{"ORDER_CHANGE":"u-1"}', subscriptions: '{"ORDER_CHANGE":"u-1"}' }],
    ]);
    const rows = await checkDrift([SUB, PIPE], { client: withParameters(stored, calls), journal, pipelineSubscriptionsKey: 'hooks' });
    expect(calls).toEqual([['9002', '9100']]);
    expect(rows[0].differences).toEqual([{ property: 'stageIds', declared: '1000,1001', live: '1000,1001,1002' }]);
    expect(rows[1].differences).toEqual([{ property: 'notificationTypes', declared: 'FEED_PROCESSING_FINISHED,ORDER_CHANGE', live: 'ORDER_CHANGE' }]);
    expect(rows[1].notChecked).toEqual(['remoteIdentityId', 'deploymentRegion', 'roles']);
    // The default key is `subscriptions`.
    const same = await checkDrift([PIPE], { client: withParameters(new Map([['9100', { subscriptions: '{"ORDER_CHANGE":"a","FEED_PROCESSING_FINISHED":"b"}' }]]), []), journal });
    expect(same[0].status).toBe('IN_SYNC');
  });

  test.each([
    ['not served (undefined)', undefined],
    ['a failing read', new ServiceError({ message: 'boom', status: 503, method: 'GET', path: '/v2/spp/bulk' } as never)],
    ['a subscription left out of the answer', new Map()],
  ])('%s: stage IDs, parameters and types stay not checked (never drift, never a failed check)', async (_name, stored) => {
    const rows = await checkDrift([SUB, PIPE], { client: withParameters(stored as never, []), journal });
    expect(rows.map((r) => r.status)).toEqual(['IN_SYNC', 'IN_SYNC']);
    expect(rows[0].notChecked).toEqual(expect.arrayContaining(['productParameters', 'stageIds']));
    expect(rows[1].notChecked).toContain('notificationTypes');
  });
});
