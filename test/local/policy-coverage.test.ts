/**
 * The least-privilege policies of NotificationPipelineRoles (synthesized with the real construct) must cover every
 * resource the emulator, standing for the service, provisions for a unified pipeline in the customer account,
 * and nothing named outside the prefix.
 */
import { App, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import * as iam from 'aws-cdk-lib/aws-iam';
import { NotificationPipelineRoles } from '../../src';
import { DpiClient, endpointsFromBase } from '../../src/client';
import { DEFAULT_FIXTURES, DEFAULT_REFRESH_TOKEN, RunningEmulator, startEmulator } from '../../src/emulator';

const ACCT = '123456789012';
const REGION = 'us-east-1';
const MANAGEMENT_ROLE = `arn:aws:iam::${ACCT}:role/dpi-management`;

interface Statement {
  readonly sid?: string;
  readonly actions: string[];
  readonly resources: string[];
  readonly conditions?: Record<string, Record<string, string>>;
}

interface CloudResource {
  kind: string;
  id: string;
  arn?: string;
  accountId: string;
  region: string;
  pipelineId?: string;
  shared: boolean;
  details?: Record<string, string>;
}

type Json = string | number | boolean | null | Json[] | { [k: string]: Json };

/** Resolves the intrinsics the roles construct uses; anything else is an error (so nothing is silently skipped). */
function resolve(value: Json, resources: Record<string, { Properties?: Record<string, Json> }>): string {
  if (typeof value === 'string') return value;
  if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
    const [key, arg] = Object.entries(value)[0] ?? [];
    if (key === 'Ref') {
      const pseudo: Record<string, string> = { 'AWS::Partition': 'aws', 'AWS::AccountId': ACCT, 'AWS::Region': REGION };
      if (typeof arg === 'string' && pseudo[arg]) return pseudo[arg];
    }
    if (key === 'Fn::Join' && Array.isArray(arg) && typeof arg[0] === 'string' && Array.isArray(arg[1])) {
      return arg[1].map((part) => resolve(part, resources)).join(arg[0]);
    }
    if (key === 'Fn::GetAtt' && Array.isArray(arg) && arg[1] === 'Arn' && typeof arg[0] === 'string') {
      const role = resources[arg[0]];
      const name = role?.Properties?.RoleName;
      return `arn:aws:iam::${ACCT}:role/${typeof name === 'string' ? name : arg[0]}`;
    }
  }
  throw new Error(`unresolvable value in the policy: ${JSON.stringify(value)}`);
}

const list = (v: Json | undefined): Json[] => (v === undefined ? [] : Array.isArray(v) ? v : [v]);

/** The Allow statements of a role's inline policies, with resources resolved to plain ARNs. */
function inlineStatements(template: Template, stack: Stack, role: iam.IRole): Statement[] {
  const json = template.toJSON() as { Resources: Record<string, { Type: string; Properties?: Record<string, Json> }> };
  const logicalId = stack.getLogicalId((role as iam.Role).node.defaultChild as iam.CfnRole);
  const res = json.Resources[logicalId];
  expect(res?.Type).toBe('AWS::IAM::Role');
  const out: Statement[] = [];
  for (const p of list(res.Properties?.Policies)) {
    const doc = (p as { PolicyDocument: { Statement: Json[] } }).PolicyDocument;
    type RawStatement = { Sid?: string; Effect: string; Action: Json; Resource: Json; Condition?: Record<string, Record<string, string>> };
    for (const st of doc.Statement as RawStatement[]) {
      if (st.Effect !== 'Allow') continue;
      out.push({
        sid: st.Sid,
        actions: list(st.Action).map((a) => resolve(a, json.Resources)),
        resources: list(st.Resource).map((r) => resolve(r, json.Resources)),
        conditions: st.Condition,
      });
    }
  }
  expect(out.length).toBeGreaterThan(0);
  return out;
}

/** IAM wildcard match: `*` any characters (slashes included), `?` one character; case-sensitive. */
function wildcardMatch(pattern: string, value: string): boolean {
  const re = pattern.split('').map((c) => (c === '*' ? '.*' : c === '?' ? '.' : c.replace(/[.+^${}()|[\]\\]/g, '\\$&'))).join('');
  return new RegExp(`^${re}$`).test(value);
}

/**
 * Whether one statement allows `action` on `arn` in a request with the condition keys `context`. Only StringEquals
 * conditions are understood (anything else fails the check); a condition key missing from the context denies.
 */
function allows(statements: Statement[], action: string, arn: string, context: Record<string, string> = {}): boolean {
  const conditionsHold = (s: Statement): boolean => Object.entries(s.conditions ?? {}).every(([op, keys]) => {
    if (op !== 'StringEquals') throw new Error(`condition operator ${op} is not understood by this check`);
    return Object.entries(keys).every(([k, v]) => context[k] !== undefined && list(v).includes(context[k]));
  });
  return statements.some((s) => s.actions.some((a) => wildcardMatch(a.toLowerCase(), action.toLowerCase()))
    && s.resources.some((r) => wildcardMatch(r, arn)) && conditionsHold(s));
}

/** Actions the service needs to create and configure the shared regional bucket (spec: Events 1-2). */
const BUCKET_SETUP_ACTIONS = ['s3:CreateBucket', 's3:PutBucketPolicy', 's3:GetBucketPolicy', 's3:PutEncryptionConfiguration',
  's3:PutBucketPublicAccessBlock', 's3:PutBucketOwnershipControls', 's3:PutBucketTagging', 's3:GetBucketLocation', 's3:ListBucket',
  's3:PutBucketNotification'];
/** Actions the service needs to create and manage the pipe execution role. */
const ROLE_ACTIONS = ['iam:CreateRole', 'iam:DeleteRole', 'iam:GetRole', 'iam:PutRolePolicy', 'iam:DeleteRolePolicy', 'iam:TagRole'];

/** The IAM resource ARN of a provisioned resource and the management action that creates or configures it. */
function required(r: CloudResource): { action: string; arn: string } {
  switch (r.kind) {
    case 's3-bucket': return { action: 's3:PutBucketNotification', arn: r.arn ?? '' };
    case 'sqs-queue': return { action: 'sqs:CreateQueue', arn: r.arn ?? '' };
    case 'firehose-delivery-stream': return { action: 'firehose:CreateDeliveryStream', arn: r.arn ?? '' };
    case 'pipe': return { action: 'pipes:CreatePipe', arn: r.arn ?? '' };
    case 'iam-role': return { action: 'iam:CreateRole', arn: r.arn ?? '' };
    case 'event-bus': return { action: 'events:CreateEventBus', arn: r.arn ?? '' };
    case 's3-object': return { action: 's3:PutObject', arn: `arn:aws:s3:::${r.id}` };
    case 'log-group': return { action: 'logs:CreateLogGroup', arn: `arn:aws:logs:${r.region}:${r.accountId}:log-group:${r.id}` };
    case 's3-notification-configuration':
      return { action: 's3:PutBucketNotification', arn: `arn:aws:s3:::${r.details?.bucket}` };
    case 'eventbridge-rule': return { action: 'events:PutRule', arn: ruleArn(r.region, r.accountId, r.details?.bus, r.id) };
    case 'eventbridge-target': {
      // Targets have no ARN of their own: PutTargets is authorized on the rule.
      return { action: 'events:PutTargets', arn: ruleArn(r.region, r.accountId, undefined, r.details?.rule ?? '') };
    }
    default: throw new Error(`no policy mapping for provisioned resource kind '${r.kind}' (${r.id}); add one`);
  }
}

/** A rule on a custom (partner) bus is `rule/<bus>/<name>`; on the default bus `rule/<name>`. */
function ruleArn(region: string, acct: string, bus: string | undefined, name: string): string {
  return `arn:aws:events:${region}:${acct}:rule/${bus && bus !== 'default' ? `${bus}/` : ''}${name}`;
}

let management: Statement[];
let delivery: Statement[];
let eventBus: Statement[];
let emu: RunningEmulator;
let cloud: CloudResource[];
let meta: Record<string, string>;

beforeAll(async () => {
  const app = new App();
  const stack = new Stack(app, 'Roles', { env: { account: ACCT, region: REGION } });
  const roles = new NotificationPipelineRoles(stack, 'Roles', { serviceAccountId: '111122223333', externalId: 'ext-1' });
  const template = Template.fromStack(stack);
  management = inlineStatements(template, stack, roles.managementRole);
  delivery = inlineStatements(template, stack, roles.deliveryRole);
  eventBus = inlineStatements(template, stack, roles.eventBusRole!);

  emu = await startEmulator({ port: 0 });
  const client = new DpiClient({ endpoints: endpointsFromBase(emu.url), refreshToken: DEFAULT_REFRESH_TOKEN, maxAttempts: 1 });
  const ebRole = DEFAULT_FIXTURES.cloudRoles?.find((r) => /eventbus/.test(r.roleArn))?.roleArn;
  expect(ebRole).toBeDefined();
  // Queue types (FEED_PROCESSING_FINISHED, REPORT_PROCESSING_FINISHED) and event-bus types (ORDER_CHANGE).
  const result = await client.notifications.create(362, {
    notification_types: ['ORDER_CHANGE', 'FEED_PROCESSING_FINISHED', 'REPORT_PROCESSING_FINISHED'],
    role_arn: MANAGEMENT_ROLE,
    eb_to_fh_role_arn: ebRole,
    aws_region: REGION,
  });
  expect(result.failed).toEqual({});
  meta = result.meta as Record<string, string>;
  const state = await (await fetch(`${emu.url}/_emulator/state`)).json() as { cloud: CloudResource[] };
  cloud = state.cloud;
});

afterAll(async () => {
  await emu?.stop();
});

describe('the default management policy covers what the service provisions', () => {
  test('both delivery paths were provisioned', () => {
    const kinds = new Set(cloud.map((r) => r.kind));
    for (const k of ['s3-bucket', 'sqs-queue', 'firehose-delivery-stream', 'pipe', 'log-group', 's3-notification-configuration',
      'eventbridge-rule', 'eventbridge-target', 'event-bus', 's3-object', 'iam-role']) {
      expect(kinds).toContain(k);
    }
    expect(cloud.every((r) => r.accountId === ACCT && r.region === REGION)).toBe(true);
  });

  test('every pipeline-specific resource is allowed by the management policy', () => {
    const own = cloud.filter((r) => !r.shared);
    expect(own.length).toBeGreaterThanOrEqual(10);
    const denied = own.map((r) => ({ r, ...required(r) })).filter(({ action, arn }) => !allows(management, action, arn));
    expect(denied.map(({ r, action, arn }) => `${r.kind} ${r.id}: ${action} on ${arn}`)).toEqual([]);
  });

  test('the shared bucket matches the policies\' S3 patterns', () => {
    const bucket = cloud.find((r) => r.kind === 's3-bucket');
    expect(bucket?.arn).toMatch(/^arn:aws:s3:::/);
    expect(allows(management, 's3:PutBucketNotification', bucket!.arn!)).toBe(true);
    expect(allows(delivery, 's3:ListBucket', bucket!.arn!)).toBe(true);
    const objects = cloud.filter((r) => r.kind === 's3-object');
    expect(objects.length).toBeGreaterThan(0);
    for (const o of objects) expect(allows(delivery, 's3:PutObject', `arn:aws:s3:::${o.id}`)).toBe(true);
  });

  test('every shared resource the service creates is allowed by the management policy', () => {
    const shared = cloud.filter((r) => r.shared);
    expect(shared.map((r) => r.kind).sort()).toEqual(['event-bus', 's3-bucket', 's3-object']);
    const denied = shared.map((r) => ({ r, ...required(r) })).filter(({ action, arn }) => !allows(management, action, arn));
    expect(denied.map(({ r, action, arn }) => `${r.kind} ${r.id}: ${action} on ${arn}`)).toEqual([]);
  });

  test('the shared bucket can be created and configured, with no object access beyond the setup check', () => {
    const bucket = cloud.find((r) => r.kind === 's3-bucket')!;
    const missing = BUCKET_SETUP_ACTIONS.filter((a) => !allows(management, a, bucket.arn!));
    expect(missing).toEqual([]);
    const check = cloud.find((r) => r.kind === 's3-object' && r.id.endsWith('/_setup-check.json'))!;
    expect(check).toBeDefined();
    expect(allows(management, 's3:PutObject', `arn:aws:s3:::${check.id}`)).toBe(true);
    // Not other objects, not reads, not deletes, not other buckets.
    expect(allows(management, 's3:PutObject', `${bucket.arn}/notifications/1/pl-1/ORDER_CHANGE/record.json`)).toBe(false);
    expect(allows(management, 's3:GetObject', `arn:aws:s3:::${check.id}`)).toBe(false);
    expect(allows(management, 's3:DeleteBucket', bucket.arn!)).toBe(false);
    expect(allows(management, 's3:CreateBucket', `arn:aws:s3:::dpi-notifications-${ACCT}-${REGION}`)).toBe(false);
    expect(allows(management, 's3:PutBucketPolicy', `arn:aws:s3:::dpi-notifications-${ACCT}-${REGION}`)).toBe(false);
    expect(allows(management, 's3:PutObject', `arn:aws:s3:::dpi-notifications-${ACCT}-${REGION}/x/_setup-check.json`)).toBe(false);
  });

  test('the shared partner event bus can be created and described; other buses cannot', () => {
    const bus = cloud.find((r) => r.kind === 'event-bus')!;
    expect(bus.arn).toBe(`arn:aws:events:${REGION}:${ACCT}:event-bus/aws.partner/sellingpartnerapi.amazon/${ACCT}`);
    expect(allows(management, 'events:CreateEventBus', bus.arn!)).toBe(true);
    expect(allows(management, 'events:DescribeEventBus', bus.arn!)).toBe(true);
    expect(allows(management, 'events:DeleteEventBus', bus.arn!)).toBe(false);
    expect(allows(management, 'events:CreateEventBus', `arn:aws:events:${REGION}:${ACCT}:event-bus/default`)).toBe(false);
    expect(allows(management, 'events:CreateEventBus', `arn:aws:events:${REGION}:${ACCT}:event-bus/aws.partner/other.partner/${ACCT}`)).toBe(false);
    expect(allows(management, 'events:CreateEventBus', `arn:aws:events:us-west-2:${ACCT}:event-bus/aws.partner/sellingpartnerapi.amazon/${ACCT}`)).toBe(false);
    // The rule on the partner bus is still allowed by the rule statement.
    const rule = cloud.find((r) => r.kind === 'eventbridge-rule')!;
    expect(rule.details!.bus).toBe(`aws.partner/sellingpartnerapi.amazon/${ACCT}`);
  });

  test('the pipe execution role can be created under the prefix and passed only to pipes', () => {
    const role = cloud.find((r) => r.kind === 'iam-role')!;
    expect(role.arn).toBe(`arn:aws:iam::${ACCT}:role/spapi-${role.pipelineId}-pipe`);
    expect(role.shared).toBe(false);
    expect(role.details?.trustedBy).toBe('pipes.amazonaws.com');
    const pipe = cloud.find((r) => r.kind === 'pipe')!;
    expect(pipe.details!.role).toBe(role.arn);
    // The result names the pipe role, not the management role.
    expect(meta.sqs_pipe_role_arn).toBe(role.arn);
    expect(meta.sqs_pipe_role_arn).not.toBe(MANAGEMENT_ROLE);
    expect(ROLE_ACTIONS.filter((a) => !allows(management, a, role.arn!))).toEqual([]);
    const toPipes = { 'iam:PassedToService': 'pipes.amazonaws.com' };
    expect(allows(management, 'iam:PassRole', role.arn!, toPipes)).toBe(true);
    // Not to another service, not without the condition key.
    expect(allows(management, 'iam:PassRole', role.arn!, { 'iam:PassedToService': 'lambda.amazonaws.com' })).toBe(false);
    expect(allows(management, 'iam:PassRole', role.arn!)).toBe(false);
    // A role outside the prefix (or in another account) can be neither created nor passed.
    for (const other of [`arn:aws:iam::${ACCT}:role/dpi-management`, `arn:aws:iam::${ACCT}:role/admin`, 'arn:aws:iam::210987654321:role/spapi-pl-1-pipe']) {
      for (const a of ROLE_ACTIONS) expect(allows(management, a, other)).toBe(false);
      expect(allows(management, 'iam:PassRole', other, toPipes)).toBe(false);
    }
    expect(allows(management, 'iam:AttachRolePolicy', role.arn!)).toBe(false);
    expect(allows(management, 'iam:UpdateAssumeRolePolicy', role.arn!)).toBe(false);
  });

  test('the delivery role may write the delivery stream logs; the event-bus role may put into the delivery stream', () => {
    const stream = cloud.find((r) => r.kind === 'firehose-delivery-stream')!;
    const streamLog = cloud.find((r) => r.kind === 'log-group' && r.id.startsWith('/aws/kinesisfirehose/'));
    expect(streamLog).toBeDefined();
    expect(allows(delivery, 'logs:PutLogEvents', required(streamLog!).arn)).toBe(true);
    // The delivery stream writes with the fixed-name delivery role, which the management role may pass.
    expect(allows(management, 'iam:PassRole', stream.details!.role, { 'iam:PassedToService': 'firehose.amazonaws.com' })).toBe(true);
    const target = cloud.find((r) => r.kind === 'eventbridge-target')!;
    expect(target.details!.target).toBe(stream.arn);
    expect(allows(eventBus, 'firehose:PutRecord', target.details!.target)).toBe(true);
  });

  test('names outside the prefix, the account or the region are denied (the check can fail)', () => {
    expect(allows(management, 'sqs:CreateQueue', `arn:aws:sqs:${REGION}:${ACCT}:other-queue`)).toBe(false);
    expect(allows(management, 'sqs:CreateQueue', `arn:aws:sqs:${REGION}:${ACCT}:dpi-pl-1-objects`)).toBe(false);
    expect(allows(management, 'sqs:CreateQueue', `arn:aws:sqs:us-west-2:${ACCT}:spapi-pl-1-objects`)).toBe(false);
    expect(allows(management, 'sqs:CreateQueue', `arn:aws:sqs:${REGION}:210987654321:spapi-pl-1-objects`)).toBe(false);
    expect(allows(management, 'firehose:CreateDeliveryStream', `arn:aws:firehose:${REGION}:${ACCT}:deliverystream/dpi-pl-1`)).toBe(false);
    expect(allows(management, 'logs:CreateLogGroup', `arn:aws:logs:${REGION}:${ACCT}:log-group:/dpi/pipes/pl-1`)).toBe(false);
    expect(allows(management, 'events:PutRule', `arn:aws:events:${REGION}:${ACCT}:rule/dpi-pl-1-rule`)).toBe(false);
    expect(allows(management, 's3:PutBucketNotification', `arn:aws:s3:::dpi-notifications-${ACCT}-${REGION}`)).toBe(false);
    // A covered ARN with an action the statement does not grant.
    expect(allows(management, 'sqs:SendMessage', `arn:aws:sqs:${REGION}:${ACCT}:spapi-pl-1-objects`)).toBe(false);
  });
});
