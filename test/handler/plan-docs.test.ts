import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { planResource } from '../../src/handler/plan';
import { ResourceTypes } from '../../src/kinds';
import { HISTORY_REQUEST_PROPS } from '../../src/kinds/history-request/runtime/plan';
import { LEGACY_PIPELINE_PROPS } from '../../src/kinds/legacy-notification-pipeline/runtime/plan';
import { PIPELINE_PROPS } from '../../src/kinds/notification-pipeline/runtime/plan';
import { PRODUCT_ORDER_JOBS_PROPS } from '../../src/kinds/product-order-jobs/runtime/plan';
import { SUBSCRIPTION_PROPS } from '../../src/kinds/subscription/runtime/plan';

/**
 * docs/constructs.md's "What a change does" tables, checked against `planResource` (the handler's decisions): every
 * row names a prop of the construct, every construct prop has a row, and for each row the outcomes of changing that
 * one prop (samples below) are exactly the outcomes the row marks.
 */
type Outcome = 'update' | 'no-change' | 'failure' | 'delete' | 'rebuild' | 'replace';

const ROLE = 'arn:aws:iam::123456789012:role/mgmt';
const OTHER_ACCOUNT_ROLE = 'arn:aws:iam::210987654321:role/mgmt';
const EB = 'arn:aws:iam::123456789012:role/eb';
const ORDERS = ['123-1000000-7000000', '123-1000001-7000001'];

interface Kind {
  readonly type: string;
  readonly section: string;
  readonly props: readonly { wire: string; prop: string }[];
  readonly base: Record<string, unknown>;
  readonly physicalId: string;
  /** Per construct prop: changes of that prop alone (`from` overrides the base; `to` the new value, undefined = dropped). */
  readonly samples: Record<string, Array<{ from?: Record<string, unknown>; to: unknown }>>;
}

const KINDS: Kind[] = [
  {
    type: ResourceTypes.SUBSCRIPTION,
    section: '## Subscription',
    props: SUBSCRIPTION_PROPS,
    physicalId: '9001',
    base: {
      ProductId: '3001',
      RemoteIdentityId: '362',
      StorageGroupId: '501',
      ProductParameters: { marketplace_id: 'X', window: '7' },
      StageIds: ['1000'],
      Status: 'active',
      Name: 'A',
      DateStart: '2026-01-01T00:00:00Z',
      OnDelete: 'invalid',
      RemovalPolicy: 'destroy',
    },
    samples: {
      productId: [{ to: '3002' }],
      remoteIdentityId: [{ to: '364' }],
      existingSubscriptionId: [{ from: { AdoptId: '9001' }, to: undefined }, { from: { AdoptId: '9001' }, to: '9002' }],
      storageGroupId: [{ to: '502' }],
      productParameters: [{ to: { marketplace_id: 'X', window: '14' } }, { to: { marketplace_id: 'X' } }],
      stageIds: [{ to: ['1000', '1001'] }],
      status: [{ to: 'paused' }],
      name: [{ to: 'B' }],
      dateStart: [{ to: '2026-02-01T00:00:00Z' }],
      onDelete: [{ to: 'cancelled' }],
      removalPolicy: [{ to: 'retain' }],
    },
  },
  {
    type: ResourceTypes.NOTIFICATION_PIPELINE,
    section: '## NotificationPipeline (product 107)',
    props: PIPELINE_PROPS,
    physicalId: '9001',
    base: {
      RemoteIdentityId: '362',
      AccountType: 'seller',
      NotificationTypes: ['REPORT_PROCESSING_FINISHED', 'ORDER_CHANGE'],
      RoleArn: ROLE,
      EbToFhRoleArn: EB,
      DeploymentRegion: 'us-east-1',
      StorageGroupId: '501',
      Name: 'A',
      PartialFailure: 'FAIL',
      RemovalPolicy: 'destroy',
    },
    samples: {
      'remoteIdentityId': [{ to: '364' }],
      'accountType': [{ to: 'vendor' }],
      'existingSubscriptionId': [{ from: { AdoptId: '9001' }, to: undefined }, { from: { AdoptId: '9001' }, to: '9002' }],
      'rebuildOnAdoption': [{ from: { AdoptId: '9001' }, to: 'true' }],
      'notificationTypes': [{ to: ['REPORT_PROCESSING_FINISHED'] }, { to: ['ORDER_CHANGE'] }, { from: { NotificationTypes: ['ORDER_CHANGE'] }, to: ['REPORT_PROCESSING_FINISHED'] }],
      'roles.managementRoleArn': [{ to: 'arn:aws:iam::123456789012:role/other' }, { to: OTHER_ACCOUNT_ROLE }],
      'roles.eventBusRoleArn': [{ to: 'arn:aws:iam::123456789012:role/eb2' }],
      'deploymentRegion': [{ to: 'us-west-2' }],
      'storageGroupId': [{ to: '502' }],
      'name': [{ to: 'B' }],
      'partialFailure': [{ to: 'ALLOW' }],
      'removalPolicy': [{ to: 'retain' }],
    },
  },
  {
    type: ResourceTypes.LEGACY_NOTIFICATION_PIPELINE,
    section: '## LegacyNotificationPipeline (product 86)',
    props: LEGACY_PIPELINE_PROPS,
    physicalId: '8601',
    base: { SubscriptionId: '8601', RemoteIdentityId: '364', QueueArn: 'arn:aws:sqs:us-east-1:123456789012:q', NotificationTypes: ['ORDER_CHANGE'], Retired: 'false', RemovalPolicy: 'retain' },
    samples: {
      subscriptionId: [{ to: '8602' }],
      remoteIdentityId: [{ to: '365' }],
      queueArn: [{ to: 'arn:aws:sqs:us-east-1:123456789012:q2' }],
      notificationTypes: [{ to: ['ORDER_CHANGE', 'FEED_PROCESSING_FINISHED'] }],
      retired: [{ to: 'true' }, { from: { Retired: 'true' }, to: 'false' }],
      removalPolicy: [{ to: 'destroy' }],
    },
  },
  {
    type: ResourceTypes.HISTORY_REQUEST,
    section: '## HistoryRequest',
    props: HISTORY_REQUEST_PROPS,
    physicalId: '700',
    base: {
      SubscriptionId: '9001',
      StartDate: '2026-01-01',
      EndDate: '2026-01-05',
      StageId: '1000',
      ProductId: '3001',
      StartTime: '00:00',
      WaitForCompletion: 'false',
      TimeoutSeconds: '600',
    },
    samples: {
      subscription: [{ to: '9002' }],
      startDate: [{ to: '2026-01-02' }],
      endDate: [{ to: '2026-01-06' }],
      dates: [{ from: { StartDate: undefined, EndDate: undefined, Dates: ['2026-01-01'] }, to: ['2026-01-02'] }],
      stageId: [{ to: '1001' }],
      productId: [{ to: '3002' }],
      startTime: [{ to: '01:00' }],
      waitForCompletion: [{ to: 'true' }],
      timeout: [{ to: '900' }],
      existingHistoryTransactionId: [{ from: { AdoptId: '700' }, to: undefined }, { from: { AdoptId: '700' }, to: '701' }],
    },
  },
  {
    type: ResourceTypes.PRODUCT_ORDER_JOBS,
    section: '## ProductOrderJobs',
    props: PRODUCT_ORDER_JOBS_PROPS,
    physicalId: '5000',
    base: { SubscriptionId: '9001', OrderIds: ORDERS, StageId: '1000' },
    samples: {
      subscription: [{ to: '9002' }],
      orderIds: [{ to: [...ORDERS, '123-1000002-7000002'] }, { to: [ORDERS[0]] }],
      stageId: [{ to: '1001' }],
    },
  },
];

/** The rows of the "What a change does" table of a construct's section: prop -> the outcomes it marks. */
function tableOf(doc: string, section: string): Map<string, Set<Outcome>> {
  const start = doc.indexOf(`\n${section}\n`);
  expect(start).toBeGreaterThanOrEqual(0);
  const next = doc.indexOf('\n## ', start + section.length + 2);
  const body = doc.slice(start, next < 0 ? undefined : next);
  const at = body.indexOf('| Prop | Change made in place | Rebuild | Replacement |');
  expect(at).toBeGreaterThanOrEqual(0);
  const rows = new Map<string, Set<Outcome>>();
  for (const line of body.slice(at).split('\n').slice(2)) {
    if (!line.startsWith('|')) break;
    const [prop, inPlace, rebuild, replacement] = line.split('|').slice(1, -1).map((c) => c.trim());
    const out = new Set<Outcome>();
    if (/\byes\b/.test(inPlace)) out.add('update');
    if (/\bno call\b/.test(inPlace)) out.add('no-change');
    if (/\brefused\b/.test(inPlace)) out.add('failure');
    if (/\bends the record\b/.test(inPlace)) out.add('delete');
    if (/\byes\b/.test(rebuild)) out.add('rebuild');
    if (/\byes\b/.test(replacement)) out.add('replace');
    rows.set(prop.replace(/`/g, ''), out);
  }
  return rows;
}

const DOC = readFileSync(join(__dirname, '..', '..', 'docs', 'constructs.md'), 'utf8');

describe('docs/constructs.md "What a change does" tables agree with planResource', () => {
  test.each(KINDS.map((k) => [k.section, k] as const))('%s', (_s, kind) => {
    const rows = tableOf(DOC, kind.section);
    // One row per construct prop the handler reads, no other rows, and samples for every row.
    expect([...rows.keys()].sort()).toEqual(kind.props.map((p) => p.prop).sort());
    expect(Object.keys(kind.samples).sort()).toEqual([...rows.keys()].sort());
    for (const [prop, marked] of rows) {
      const spec = kind.props.find((p) => p.prop === prop)!;
      const seen = new Set<Outcome>();
      for (const sample of kind.samples[prop]) {
        const oldProps: Record<string, unknown> = { ...kind.base, ...sample.from };
        for (const k of Object.keys(oldProps)) if (oldProps[k] === undefined) delete oldProps[k];
        const newProps: Record<string, unknown> = { ...oldProps, [spec.wire]: sample.to };
        if (sample.to === undefined) delete newProps[spec.wire];
        const plan = planResource({ type: kind.type, stack: 'S', logicalId: 'L', physicalId: kind.physicalId, oldProps, newProps });
        const outcome: Outcome = plan.failure !== undefined ? 'failure' : plan.action as Outcome;
        seen.add(outcome);
        // The change names the prop (and says what it alone makes of the resource).
        expect(plan.changes.map((c) => c.prop)).toEqual([prop]);
      }
      expect({ prop, outcomes: [...seen].sort() }).toEqual({ prop, outcomes: [...marked].sort() });
    }
  });
});
