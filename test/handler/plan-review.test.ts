import { SELLER_PIPELINE } from './helpers';
import { tripsGate } from '../../src/cli/commands/plan';
import { planTemplatePairs, TemplatePair } from '../../src/cli/commands/plan-compare';
import { planResource, PlanEntry } from '../../src/handler/plan';
import { ResourceTypes } from '../../src/kinds';
import { Template } from '../../src/local/template';

// Findings of the review of `dpi plan` (issue 23): values decided at deploy time, adoption, ownership, --from.
const SUB = {
  ProductId: '3001',
  RemoteIdentityId: '362',
  ProductParameters: { marketplace_id: 'ATVPDKIKX0DER' },
  Name: 'Orders',
  Status: 'active',
  RemovalPolicy: 'destroy',
};
const at = { stack: 'App', logicalId: 'Res' };
const text = (e: PlanEntry): string => e.effects.join(' | ');

describe('plan: a decisive value known only at deploy time is planned at its worst case', () => {
  test('planResource: a deploy-time remoteIdentityId is no change now, a possible replace, named with its source', () => {
    const props = { ...SUB, RemoteIdentityId: { Ref: 'IdentityParam' } };
    const plain = planResource({ ...at, type: ResourceTypes.SUBSCRIPTION, physicalId: '9001', oldProps: props, newProps: props });
    expect(plain.action).toBe('no-change');
    expect(plain.possibleAction).toBeUndefined();
    const e = planResource({
      ...at,
      type: ResourceTypes.SUBSCRIPTION,
      physicalId: '9001',
      oldProps: props,
      newProps: props,
      deployTime: { RemoteIdentityId: 'parameter IdentityParam' },
    });
    expect(e.action).toBe('no-change');
    expect(e.calls).toEqual([]);
    expect(e.possibleAction).toBe('replace');
    expect(text(e)).toContain('remoteIdentityId comes from parameter IdentityParam: if its value changes, this is a replace');
    expect(tripsGate(e, ['replace'])).toBe(true);
    expect(tripsGate(plain, ['replace'])).toBe(false);
    // A deploy-time name makes at worst an update in place: never a replace.
    const named = planResource({
      ...at,
      type: ResourceTypes.SUBSCRIPTION,
      physicalId: '9001',
      oldProps: { ...SUB, Name: { Ref: 'N' } },
      newProps: { ...SUB, Name: { Ref: 'N' } },
      deployTime: { Name: 'parameter N' },
    });
    expect(named.possibleAction).toBe('update');
    expect(tripsGate(named, ['replace'])).toBe(false);
  });

  const sub = (identity: unknown, extra: Record<string, unknown> = {}): object =>
    ({ Type: ResourceTypes.SUBSCRIPTION, Properties: { ...SUB, RemoteIdentityId: identity }, ...extra });
  const role = (name: string): object => ({ Type: 'AWS::IAM::Role', Properties: { RoleName: name } });
  const pair = (oldTemplate: Template, newTemplate: Template, more: Partial<TemplatePair> = {}): TemplatePair =>
    ({ display: 'App', key: 'App', oldTemplate, newTemplate, physicalIds: new Map([['Sub', '9001'], ['Pipe', '777']]), ...more });

  test.each([
    ['a template parameter', { Parameters: { IdentityParam: { Type: 'String' } } }, { Ref: 'IdentityParam' }, 'parameter IdentityParam'],
    ['an import', {}, { 'Fn::ImportValue': 'Shared-Identity' }, 'import Shared-Identity'],
    ['a dynamic reference', {}, '{{resolve:ssm:/dpi/identity}}', 'dynamic reference {{resolve:ssm:/dpi/identity}}'],
  ])('the template comparison finds %s: possible replace', (_what, extra, value, source) => {
    const t = { ...extra, Resources: { Sub: sub(value) } } as Template;
    const [e] = planTemplatePairs([pair(t, t)], planResource);
    expect(e.action).toBe('no-change');
    expect(e.possibleAction).toBe('replace');
    expect(text(e)).toContain(`remoteIdentityId comes from ${source}: if its value changes, this is a replace`);
  });

  test('a GetAtt of a non-Dpi resource: deploy-time only when its definition differs between the sides', () => {
    const uses = { 'Fn::GetAtt': ['Identity', 'Value'] };
    const same = { Resources: { Identity: role('a'), Sub: sub(uses) } } as Template;
    expect(planTemplatePairs([pair(same, same)], planResource)[0].possibleAction).toBeUndefined();
    const changed = { Resources: { Identity: role('b'), Sub: sub(uses) } } as Template;
    const [e] = planTemplatePairs([pair(same, changed)], planResource);
    expect(e.possibleAction).toBe('replace');
    expect(text(e)).toContain('resource Identity (its definition changed: it may be replaced)');
  });

  test('a possible replace of a subscription reaches what references it', () => {
    const t = {
      Parameters: { IdentityParam: { Type: 'String' } },
      Resources: {
        Sub: sub({ Ref: 'IdentityParam' }),
        Hist: { Type: ResourceTypes.HISTORY_REQUEST, Properties: { SubscriptionId: { 'Fn::GetAtt': ['Sub', 'SubscriptionId'] }, StartDate: '2026-01-01', EndDate: '2026-01-02' } },
      },
    } as Template;
    const entries = planTemplatePairs([pair(t, t, { physicalIds: new Map([['Sub', '9001'], ['Hist', 'h-1']]) })], planResource);
    const hist = entries.find((x) => x.logicalId === 'Hist')!;
    expect(hist.action).toBe('no-change');
    expect(hist.possibleAction).toBe('replace');
    expect(text(hist)).toContain('resource Sub (this deploy may replace it)');
  });

  test('a nested stack parameter the parent passes unchanged (a fleet\'s role ARN) is known; passed from a changed role it is not', () => {
    const pipe = { ...SELLER_PIPELINE, RemovalPolicy: 'destroy', RoleArn: { Ref: 'RoleParam' }, RemoteIdentityId: { Ref: 'IdParam' } };
    const nested = { Parameters: { RoleParam: { Type: 'String' }, IdParam: { Type: 'String' } }, Resources: { Pipe: { Type: ResourceTypes.NOTIFICATION_PIPELINE, Properties: pipe } } } as Template;
    const parent = (roleName: string): Template => ({
      Resources: {
        Role: role(roleName),
        Holder: {
          Type: 'AWS::CloudFormation::Stack',
          Properties: { TemplateURL: 'x', Parameters: { RoleParam: { 'Fn::GetAtt': ['Role', 'Arn'] }, IdParam: '362' } },
        },
      },
    } as Template);
    const plan = (oldRole: string, newRole: string): PlanEntry[] => planTemplatePairs([
      { display: 'Parent', key: 'Parent', oldTemplate: parent(oldRole), newTemplate: parent(newRole) },
      pair(nested, nested, { display: 'Parent/Nested', key: 'Nested', nestedIn: { parent: 'Parent', logicalId: 'Holder' } }),
    ], planResource);
    const [unchanged] = plan('m', 'm');
    expect(unchanged.action).toBe('no-change');
    expect(unchanged.possibleAction).toBeUndefined();
    const [changed] = plan('m', 'm2');
    // (ORDER_CHANGE is not a queue type: any unified PATCH of this pipeline rebuilds its delivery resources.)
    expect(changed.possibleAction).toBe('rebuild');
    expect(text(changed)).toContain('parameter RoleParam, which the parent stack passes from resource Role (its definition changed');
    // Without a parent's view (a top-level stack's parameter), the identity is a possible replace.
    expect(planTemplatePairs([pair(nested, nested)], planResource)[0].possibleAction).toBe('replace');
  });
});

describe('plan: adoption, ownership and --from', () => {
  test('adopting a pipeline: unread, no unified PATCH unless rebuildOnAdoption; read, no change when the service stores the declaration', () => {
    const base = { ...SELLER_PIPELINE, NotificationTypes: ['REPORT_PROCESSING_FINISHED'], AdoptId: '777' };
    const unread = planResource({ ...at, type: ResourceTypes.NOTIFICATION_PIPELINE, newProps: base });
    expect(unread.action).toBe('update');
    expect(unread.calls.map((c) => `${c.method} ${c.path} ${c.when}`)).toEqual(['PATCH /v2/sub/777 only if a read shows another one']);
    expect(text(unread)).toContain('else the deploy fails before any change (rebuildOnAdoption is not set)');
    const meta = {
      shared_pipeline_id: 'shared-1',
      s3_bucket_name: 'notifications-bucket',
      s3_notification_prefix: 'notifications/362/',
      s3_notification_configuration_id: 'c-1',
      s3_notification_queue_arn: 'arn:aws:sqs:us-east-1:123456789012:q',
      firehose_arn: 'arn:aws:firehose:us-east-1:123456789012:deliverystream/s',
      sqs_destination_id: 'd-1',
    };
    const stored = { subscriptions: JSON.stringify({ REPORT_PROCESSING_FINISHED: 'u-1' }), meta: JSON.stringify(meta) };
    const subscription = { status: 'active', product: 107, remote_identity: 362 };
    const read = (over: Record<string, unknown>, hint: object): ReturnType<typeof planResource> =>
      planResource({ ...at, type: ResourceTypes.NOTIFICATION_PIPELINE, newProps: { ...base, ...over }, adoption: hint });
    const same = read({}, { subscription, stored });
    expect([same.action, same.calls, same.failure]).toEqual(['no-change', [], undefined]);
    expect(text(same)).toContain('adopted as the service stores it: no changing call');
    const renamed = read({ Name: 'n' }, { subscription: { ...subscription, name: 'old' }, stored });
    expect([renamed.action, renamed.calls.map((c) => c.path)]).toEqual(['update', ['/v2/sub/777']]);
    const otherRegion = read({ DeploymentRegion: 'us-west-2' }, { subscription, stored });
    expect(otherRegion.failure).toContain('deploymentRegion: the service\'s pipeline is in us-east-1, the declaration has us-west-2');
    expect(read({}, { subscription }).failure).toContain('the service\'s reads do not show the pipeline\'s notificationTypes, deploymentRegion, AWS account');
    expect(read({}, { subscription, stored, siblings: ['778'] }).failure).toContain('remote identity 362 has other live product-107 subscriptions (778)');
    expect(read({}, { subscription, stored: { ...stored, meta: JSON.stringify({ ...meta, s3_bucket_name: '*' }) } }).failure)
      .toContain('the service\'s reads do not show the pipeline\'s notificationTypes');
    expect(read({}, {}).failure).toContain('no such subscription (the service answered 404)');
    expect(read({ RebuildOnAdoption: 'true' }, { subscription }).action).toBe('rebuild');
  });

  test('adopting a subscription, read: no change when the service has the declaration; a paused one is named as re-activated', () => {
    const props = { ...SUB, AdoptId: '9001' };
    const sub = { status: 'active', product: Number(SUB.ProductId), remote_identity: Number(SUB.RemoteIdentityId), name: SUB.Name };
    const read = (hint: object): ReturnType<typeof planResource> =>
      planResource({ ...at, type: ResourceTypes.SUBSCRIPTION, newProps: props, adoption: hint });
    const stored = { ...SUB.ProductParameters };
    const same = read({ subscription: sub, stored });
    expect([same.action, same.calls, same.failure]).toEqual(['no-change', [], undefined]);
    const paused = read({ subscription: { ...sub, status: 'paused' }, stored });
    expect(paused.action).toBe('update');
    expect(text(paused)).toContain('subscription 9001 is paused in the service: this deploy makes it active');
    expect(paused.calls.map((c) => `${c.method} ${c.path} ${c.purpose}`)).toEqual(['PATCH /v2/sub/9001 set status on the adopted subscription']);
    expect(read({ subscription: { ...sub, product: 4001 } }).failure).toContain('has product 4001');
    expect(read({ subscription: { ...sub, status: 'invalid' } }).failure).toContain('is invalid and cannot be adopted');
  });

  test('adopting a pipeline with a queue type and rebuildOnAdoption, unread, is planned as rebuild (the worst case), with the hedged sentence', () => {
    const props = { ...SELLER_PIPELINE, NotificationTypes: ['REPORT_PROCESSING_FINISHED'], AdoptId: '777', RebuildOnAdoption: 'true' };
    const e = planResource({ ...at, type: ResourceTypes.NOTIFICATION_PIPELINE, newProps: props });
    expect(e.action).toBe('rebuild');
    expect(e.calls.map((c) => `${c.method} ${c.path}`)).toEqual([
      'PATCH /service/sp/notifications-unified/362/777', 'PATCH /v2/sub/777',
    ]);
    expect(text(e)).toContain('kept only if its account, region and queue path match');
    expect(text(e)).toContain('planned as rebuild, the worst case');
  });

  test('a subscription adopted earlier whose adoption was dropped: the journal decides; unread, the delete is hedged', () => {
    const input = { ...at, type: ResourceTypes.SUBSCRIPTION, physicalId: '9001', oldProps: SUB };
    const unread = planResource(input);
    expect(unread.action).toBe('delete');
    expect(text(unread)).toContain('ends the record unless the lifecycle journal records it as adopted');
    const adopted = planResource({ ...input, journal: { adopted: true, removalPolicy: 'retain' } });
    expect(adopted.action).toBe('retain');
    expect(adopted.effects.join(' ')).not.toContain('becomes invalid');
    const made = planResource({ ...input, journal: {} });
    expect(made.action).toBe('delete');
    expect(text(made)).not.toContain('unless the lifecycle journal');
    // A pipeline and a history request too.
    const pipe = { ...SELLER_PIPELINE, RemovalPolicy: 'destroy' };
    expect(planResource({ ...at, type: ResourceTypes.NOTIFICATION_PIPELINE, physicalId: '777', oldProps: pipe, journal: { adopted: true } }).action)
      .toBe('retain');
    expect(text(planResource({ ...at, type: ResourceTypes.NOTIFICATION_PIPELINE, physicalId: '777', oldProps: pipe })))
      .toContain('unless the lifecycle journal records it as adopted');
  });

  test.each([
    [ResourceTypes.SUBSCRIPTION, { ...SUB, AdoptId: '9001', RemovalPolicy: 'retain' }],
    [ResourceTypes.NOTIFICATION_PIPELINE, { ...SELLER_PIPELINE, AdoptId: '777', RemovalPolicy: 'retain' }],
    [ResourceTypes.HISTORY_REQUEST, { SubscriptionId: '9001', StartDate: '2026-01-01', EndDate: '2026-01-05', AdoptId: 'h-3', RemovalPolicy: 'retain' }],
  ])('--from (no physical IDs): an unchanged adopted %s is no change, its ID the adopted one', (type, props) => {
    const e = planResource({ ...at, type, oldProps: props, newProps: props });
    expect(e.action).toBe('no-change');
    expect(e.calls).toEqual([]);
    expect(e.physicalId).toBe(props.AdoptId);
  });
});
