/**
 * The scheduled drift check (`index.drift`) against the emulator and the test journal server: the stack's resources
 * from a fake CloudFormation lister, the exact EMF line, a drifted resource's log line, a failed run; no changing call.
 */
import { HandlerHarness, STACK_ID, useHandlerHarness } from './helpers';
import { drift as runDrift, setMetricSink, setStackResourceLister, setStackTemplateReader } from '../../src/handler';
import { ListedStackResource } from '../../src/handler/drift-check';

let h: HandlerHarness;

/** A run as its rule sends it: the function is bound to it (as the construct binds it). */
const drift = (event: Parameters<typeof runDrift>[0]): ReturnType<typeof runDrift> => runDrift(h.bindRun(event));
useHandlerHarness((started) => {
  h = started;
}, { resetEach: true });

let lines: string[];
let restore: (line: string) => void;
beforeEach(() => {
  lines = [];
  restore = setMetricSink((l) => lines.push(l));
});
afterEach(() => {
  setMetricSink(restore);
  setStackResourceLister(undefined);
  setStackTemplateReader(undefined);
});

const ORDERS = { ProductId: '3001', RemoteIdentityId: '362', StorageGroupId: '501', ProductParameters: { marketplace_id: 'ATVPDKIKX0DER' }, Status: 'active', OnDelete: 'invalid' };

async function deployed(): Promise<{ id: string; listed: ListedStackResource[] }> {
  const r = await h.onEvent(h.event('Custom::DpiSubscription', 'Create', ORDERS, { LogicalResourceId: 'Orders' }));
  const listed: ListedStackResource[] = [
    { LogicalResourceId: 'Orders', PhysicalResourceId: r.PhysicalResourceId, ResourceType: 'Custom::DpiSubscription', ResourceStatus: 'CREATE_COMPLETE' },
    { LogicalResourceId: 'Provider', PhysicalResourceId: 'fn', ResourceType: 'AWS::Lambda::Function', ResourceStatus: 'CREATE_COMPLETE' },
  ];
  return { id: r.PhysicalResourceId, listed };
}

const emf = (drifted: number | undefined, failed: number, checked: number): object => ({
  _aws: {
    Timestamp: expect.any(Number),
    CloudWatchMetrics: [{
      Namespace: 'DataPipelineIntegration',
      Dimensions: [['StackName']],
      Metrics: [{ Name: 'DriftedResources', Unit: 'Count' }, { Name: 'DriftCheckFailed', Unit: 'Count' }, { Name: 'CheckedResources', Unit: 'Count' }],
    }],
  },
  StackName: 'HandlerTest',
  ...(drifted === undefined ? {} : { DriftedResources: drifted }),
  DriftCheckFailed: failed,
  CheckedResources: checked,
});

test('in sync: DriftedResources 0 for the stack; only reads (its own stack ARN listed)', async () => {
  const { listed } = await deployed();
  const asked: string[] = [];
  setStackResourceLister(async (stackId) => {
    asked.push(stackId);
    return listed;
  });
  await h.clearRequests();
  const r = await drift({ Connection: h.connection as never, StackId: STACK_ID });
  expect(r).toEqual({ stackName: 'HandlerTest', checked: 1, drifted: 0, failed: false });
  expect(asked).toEqual([STACK_ID]);
  expect(lines.map((l) => JSON.parse(l))).toEqual([emf(0, 0, 1)]);
  expect(await h.changingRequests()).toEqual([]);
});

test('a subscription paused behind the stack\'s back: DriftedResources 1 and a log line naming status active -> paused', async () => {
  const { id, listed } = await deployed();
  setStackResourceLister(async () => listed);
  const patched = await h.api('PATCH', `/v2/sub/${id}`, { data: { type: 'Subscription', id, attributes: { status: 'paused' } } });
  expect(patched.status).toBe(200);
  const r = await drift({ Connection: h.connection as never, StackId: STACK_ID });
  expect(r).toMatchObject({ checked: 1, drifted: 1, failed: false });
  expect(lines.map((l) => JSON.parse(l))).toEqual([emf(1, 0, 1)]);
  const log = h.logs.map((l) => JSON.parse(l) as Record<string, unknown>).find((l) => l.msg === 'drift');
  expect(log).toMatchObject({
    level: 'WARNING',
    resource: 'HandlerTest/Orders',
    status: 'MODIFIED',
    physicalId: id,
    differences: [{ property: 'status', declared: 'active', live: 'paused' }],
  });
  h.assertNoSecrets();
});

test('a run that cannot list the stack publishes DriftCheckFailed 1 and no DriftedResources value', async () => {
  setStackResourceLister(async () => {
    throw new Error('User is not authorized to perform: cloudformation:ListStackResources');
  });
  const r = await drift({ Connection: h.connection as never, StackId: STACK_ID });
  expect(r).toMatchObject({ failed: true, error: expect.stringContaining('cloudformation:ListStackResources') });
  expect(lines.map((l) => JSON.parse(l))).toEqual([emf(undefined, 1, 0)]);
  // A connection without usable addresses is refused: the run fails and publishes nothing.
  lines = [];
  await expect(drift({ Connection: {} as never, StackId: STACK_ID })).rejects.toThrow('nothing was read or published');
  expect(lines).toEqual([]);
  h.assertNoSecrets();
});

test('nested stacks (a fleet\'s): followed through the AWS::CloudFormation::Stack resources, checked by the JournalKey of their templates', async () => {
  const key = 'HandlerTest/Sellers/Pipelines0/Orders';
  const r = await h.onEvent(h.event('Custom::DpiSubscription', 'Create', { ...ORDERS, JournalKey: key }, { LogicalResourceId: 'Orders' }));
  const nestedArn = 'arn:aws:cloudformation:us-east-1:123456789012:stack/HandlerTest-SellersPipelines0NestedStackResourceA1B2C3D4-XYZ/uuid-1';
  const asked: string[] = [];
  setStackResourceLister(async (stackId) => {
    asked.push(`list ${stackId}`);
    if (stackId === STACK_ID) {
      return [
        { LogicalResourceId: 'SellersPipelines0NestedStackResourceA1B2C3D4', PhysicalResourceId: nestedArn, ResourceType: 'AWS::CloudFormation::Stack', ResourceStatus: 'UPDATE_COMPLETE' },
        { LogicalResourceId: 'Provider', PhysicalResourceId: 'fn', ResourceType: 'AWS::Lambda::Function', ResourceStatus: 'CREATE_COMPLETE' },
      ];
    }
    if (stackId === nestedArn) {
      return [{ LogicalResourceId: 'Orders1A2B3C4D', PhysicalResourceId: r.PhysicalResourceId, ResourceType: 'Custom::DpiSubscription', ResourceStatus: 'CREATE_COMPLETE' }];
    }
    throw new Error(`unexpected stack ${stackId}`);
  });
  setStackTemplateReader(async (stackId) => {
    asked.push(`template ${stackId}`);
    return JSON.stringify({ Resources: { Orders1A2B3C4D: { Type: 'Custom::DpiSubscription', Properties: { ...ORDERS, JournalKey: key } } } });
  });
  const inSync = await drift({ Connection: h.connection as never, StackId: STACK_ID });
  expect(inSync).toEqual({ stackName: 'HandlerTest', checked: 1, drifted: 0, failed: false });
  expect(asked).toEqual([`list ${STACK_ID}`, `list ${nestedArn}`, `template ${nestedArn}`]);

  const id = r.PhysicalResourceId;
  const patched = await h.api('PATCH', `/v2/sub/${id}`, { data: { type: 'Subscription', id, attributes: { status: 'paused' } } });
  expect(patched.status).toBe(200);
  lines = [];
  const drifted = await drift({ Connection: h.connection as never, StackId: STACK_ID });
  expect(drifted).toMatchObject({ checked: 1, drifted: 1, failed: false });
  expect(lines.map((l) => JSON.parse(l))).toEqual([emf(1, 0, 1)]);
  const log = h.logs.map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => l.msg === 'drift').pop();
  expect(log).toMatchObject({ resource: key, status: 'MODIFIED', differences: [{ property: 'status', declared: 'active', live: 'paused' }] });
  h.assertNoSecrets();
});
