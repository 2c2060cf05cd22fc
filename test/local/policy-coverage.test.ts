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
import type { CloudResource } from '../../src/emulator/state';

const ACCT = '123456789012';
const REGION = 'us-east-1';
const MANAGEMENT_ROLE = `arn:aws:iam::${ACCT}:role/dpi-management`;

interface Statement {
  readonly sid?: string;
  readonly effect: 'Allow' | 'Deny';
  readonly actions: string[];
  readonly resources: string[];
  readonly conditions?: Record<string, Record<string, string | string[]>>;
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

type Resources = Record<string, { Type: string; Properties?: Record<string, Json> }>;
type RawStatement = { Sid?: string; Effect: string; Action: Json; Resource: Json; Condition?: Record<string, Record<string, Json>> };

/** A policy document's statements (Allow and Deny), with resources and condition values resolved to plain strings. */
function statementsOf(doc: { Statement: Json[] }, resources: Resources): Statement[] {
  return (doc.Statement as RawStatement[]).map((st) => {
    if (st.Effect !== 'Allow' && st.Effect !== 'Deny') throw new Error(`unexpected effect ${st.Effect}`);
    const conditions = st.Condition === undefined ? undefined : Object.fromEntries(Object.entries(st.Condition)
      .map(([op, keys]) => [op, Object.fromEntries(Object.entries(keys)
        .map(([k, v]) => [k, Array.isArray(v) ? v.map((x) => resolve(x, resources)) : resolve(v, resources)]))]));
    return {
      sid: st.Sid,
      effect: st.Effect,
      actions: list(st.Action).map((a) => resolve(a, resources)),
      resources: list(st.Resource).map((r) => resolve(r, resources)),
      conditions,
    };
  });
}

/** The statements of a role's inline policies. */
function inlineStatements(template: Template, stack: Stack, role: iam.IRole): Statement[] {
  const json = template.toJSON() as { Resources: Resources };
  const logicalId = stack.getLogicalId((role as iam.Role).node.defaultChild as iam.CfnRole);
  const res = json.Resources[logicalId];
  expect(res?.Type).toBe('AWS::IAM::Role');
  const out = list(res.Properties?.Policies)
    .flatMap((p) => statementsOf((p as { PolicyDocument: { Statement: Json[] } }).PolicyDocument, json.Resources));
  expect(out.filter((st) => st.effect === 'Allow').length).toBeGreaterThan(0);
  return out;
}

/** The statements of a customer-managed policy, and its name. */
function managedPolicy(template: Template, stack: Stack, policy: iam.IManagedPolicy): { name: string; statements: Statement[] } {
  const json = template.toJSON() as { Resources: Resources };
  const logicalId = stack.getLogicalId((policy as iam.ManagedPolicy).node.defaultChild as iam.CfnManagedPolicy);
  const res = json.Resources[logicalId];
  expect(res?.Type).toBe('AWS::IAM::ManagedPolicy');
  return {
    name: resolve(res.Properties!.ManagedPolicyName, json.Resources),
    statements: statementsOf(res.Properties!.PolicyDocument as { Statement: Json[] }, json.Resources),
  };
}

/** IAM wildcard match: `*` any characters (slashes included), `?` one character; case-sensitive. */
function wildcardMatch(pattern: string, value: string): boolean {
  const re = pattern.split('').map((c) => (c === '*' ? '.*' : c === '?' ? '.' : c.replace(/[.+^${}()|[\]\\]/g, '\\$&'))).join('');
  return new RegExp(`^${re}$`).test(value);
}

/** Condition keys of a request; a multivalued key (e.g. `events:TargetArn`) is an array. */
type Context = Record<string, string | string[]>;

/**
 * Whether the statements allow `action` on `arn` in a request with the condition keys `context`, as IAM evaluates
 * one identity policy: a matching Deny wins, otherwise a matching Allow is needed (implicit deny). Understood
 * operators: StringEquals, ArnEquals, ArnLike (a key missing from the context does not match), ForAllValues:ArnLike
 * (holds for a missing key, as in IAM) and Null; anything else fails the check.
 */
function allows(statements: Statement[], action: string, arn: string, context: Context = {}): boolean {
  const one = (v: string | string[]): string[] => (Array.isArray(v) ? v : [v]);
  const conditionsHold = (s: Statement): boolean => Object.entries(s.conditions ?? {}).every(([op, keys]) => {
    return Object.entries(keys).every(([k, v]) => {
      const values = one(v);
      const given = context[k] === undefined ? undefined : one(context[k]);
      switch (op) {
        case 'StringEquals':
        case 'ArnEquals': return given !== undefined && given.some((g) => values.includes(g));
        case 'ArnLike': return given !== undefined && given.some((g) => values.some((p) => wildcardMatch(p, g)));
        case 'ForAllValues:ArnLike': return (given ?? []).every((g) => values.some((p) => wildcardMatch(p, g)));
        case 'Null': return (given === undefined) === (values[0] === 'true');
        default: throw new Error(`condition operator ${op} is not understood by this check`);
      }
    });
  });
  const matches = (s: Statement): boolean => s.actions.some((a) => wildcardMatch(a.toLowerCase(), action.toLowerCase()))
    && s.resources.some((r) => wildcardMatch(r, arn)) && conditionsHold(s);
  if (statements.some((s) => s.effect === 'Deny' && matches(s))) return false;
  return statements.some((s) => s.effect === 'Allow' && matches(s));
}

/**
 * Actions the service needs to create and configure the shared regional bucket (spec: Events 1-2). No bucket policy
 * and no public-access block: nothing the service documents needs them (docs/constructs.md).
 */
const BUCKET_SETUP_ACTIONS = ['s3:CreateBucket', 's3:GetBucketPolicy', 's3:PutEncryptionConfiguration',
  's3:PutBucketOwnershipControls', 's3:PutBucketTagging', 's3:GetBucketLocation', 's3:ListBucket', 's3:PutBucketNotification'];
/** The request context of S3 calls on a bucket of the customer's account. */
const OWN = { 's3:ResourceAccount': ACCT };
const OTHER_ACCT = '210987654321';
/** Actions the service needs to create and manage the pipe execution role. */
const ROLE_ACTIONS = ['iam:CreateRole', 'iam:DeleteRole', 'iam:GetRole', 'iam:PutRolePolicy', 'iam:DeleteRolePolicy', 'iam:TagRole'];

/**
 * The IAM resource ARN of a provisioned resource, the management action that creates or configures it and the
 * request's condition keys.
 */
function required(r: CloudResource): { action: string; arn: string; context?: Context } {
  switch (r.kind) {
    case 's3-bucket': return { action: 's3:PutBucketNotification', arn: r.arn ?? '', context: { 's3:ResourceAccount': r.accountId } };
    case 'sqs-queue': return { action: 'sqs:CreateQueue', arn: r.arn ?? '' };
    case 'firehose-delivery-stream': return { action: 'firehose:CreateDeliveryStream', arn: r.arn ?? '' };
    case 'pipe': return { action: 'pipes:CreatePipe', arn: r.arn ?? '' };
    case 'iam-role': {
      // The service creates the role with its permissions boundary (the request carries iam:PermissionsBoundary).
      const boundary = r.details?.permissionsBoundary;
      return { action: 'iam:CreateRole', arn: r.arn ?? '', context: boundary ? { 'iam:PermissionsBoundary': boundary } : {} };
    }
    case 'event-bus': return { action: 'events:CreateEventBus', arn: r.arn ?? '' };
    case 's3-object': return { action: 's3:PutObject', arn: `arn:aws:s3:::${r.id}`, context: { 's3:ResourceAccount': r.accountId } };
    case 'log-group': return { action: 'logs:CreateLogGroup', arn: `arn:aws:logs:${r.region}:${r.accountId}:log-group:${r.id}` };
    case 's3-notification-configuration':
      return { action: 's3:PutBucketNotification', arn: `arn:aws:s3:::${r.details?.bucket}`, context: { 's3:ResourceAccount': r.accountId } };
    case 'eventbridge-rule': return { action: 'events:PutRule', arn: ruleArn(r.region, r.accountId, r.details?.bus, r.id) };
    case 'eventbridge-target': {
      // Targets have no ARN of their own: PutTargets is authorized on the rule (on the partner bus) and the
      // request carries the target's ARN (events:TargetArn).
      const rule = cloudRule(r.details?.rule ?? '');
      return {
        action: 'events:PutTargets',
        arn: ruleArn(r.region, r.accountId, rule?.details?.bus, r.details?.rule ?? ''),
        context: { 'events:TargetArn': [r.details?.target ?? ''] },
      };
    }
    default: throw new Error(`no policy mapping for provisioned resource kind '${r.kind}' (${r.id}); add one`);
  }
}

/** The provisioned rule named `name`. */
const cloudRule = (name: string): CloudResource | undefined => cloud.find((c) => c.kind === 'eventbridge-rule' && c.id === name);

/** A rule on a custom (partner) bus is `rule/<bus>/<name>`; on the default bus `rule/<name>`. */
function ruleArn(region: string, acct: string, bus: string | undefined, name: string): string {
  return `arn:aws:events:${region}:${acct}:rule/${bus && bus !== 'default' ? `${bus}/` : ''}${name}`;
}

let management: Statement[];
let delivery: Statement[];
let eventBus: Statement[];
let boundary: Statement[];
let boundaryName: string;
let boundaryArn: string;
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
  ({ name: boundaryName, statements: boundary } = managedPolicy(template, stack, roles.pipeRoleBoundary));
  boundaryArn = resolve(stack.resolve(roles.pipeRoleBoundaryArn) as Json, {});

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
    const denied = own.map((r) => ({ r, ...required(r) })).filter(({ action, arn, context }) => !allows(management, action, arn, context));
    expect(denied.map(({ r, action, arn }) => `${r.kind} ${r.id}: ${action} on ${arn}`)).toEqual([]);
  });

  test('the shared bucket matches the policies\' S3 patterns', () => {
    const bucket = cloud.find((r) => r.kind === 's3-bucket');
    expect(bucket?.arn).toMatch(/^arn:aws:s3:::/);
    expect(allows(management, 's3:PutBucketNotification', bucket!.arn!, OWN)).toBe(true);
    expect(allows(delivery, 's3:ListBucket', bucket!.arn!, OWN)).toBe(true);
    const objects = cloud.filter((r) => r.kind === 's3-object');
    expect(objects.length).toBeGreaterThan(0);
    for (const o of objects) expect(allows(delivery, 's3:PutObject', `arn:aws:s3:::${o.id}`, OWN)).toBe(true);
  });

  test('every shared resource the service creates is allowed by the management policy', () => {
    const shared = cloud.filter((r) => r.shared);
    expect(shared.map((r) => r.kind).sort()).toEqual(['event-bus', 's3-bucket', 's3-object']);
    const denied = shared.map((r) => ({ r, ...required(r) })).filter(({ action, arn, context }) => !allows(management, action, arn, context));
    expect(denied.map(({ r, action, arn }) => `${r.kind} ${r.id}: ${action} on ${arn}`)).toEqual([]);
  });

  test('the shared bucket can be created and configured, with no object access beyond the setup check', () => {
    const bucket = cloud.find((r) => r.kind === 's3-bucket')!;
    const missing = BUCKET_SETUP_ACTIONS.filter((a) => !allows(management, a, bucket.arn!, OWN));
    expect(missing).toEqual([]);
    const check = cloud.find((r) => r.kind === 's3-object' && r.id.endsWith('/_setup-check.json'))!;
    expect(check).toBeDefined();
    expect(allows(management, 's3:PutObject', `arn:aws:s3:::${check.id}`, OWN)).toBe(true);
    // Not other objects, not reads, not deletes, not other buckets, no bucket policy or public-access block.
    expect(allows(management, 's3:PutObject', `${bucket.arn}/notifications/1/pl-1/ORDER_CHANGE/record.json`, OWN)).toBe(false);
    expect(allows(management, 's3:GetObject', `arn:aws:s3:::${check.id}`, OWN)).toBe(false);
    expect(allows(management, 's3:DeleteBucket', bucket.arn!, OWN)).toBe(false);
    expect(allows(management, 's3:PutBucketPolicy', bucket.arn!, OWN)).toBe(false);
    expect(allows(management, 's3:PutBucketPublicAccessBlock', bucket.arn!, OWN)).toBe(false);
    expect(allows(management, 's3:CreateBucket', `arn:aws:s3:::dpi-notifications-${ACCT}-${REGION}`, OWN)).toBe(false);
    expect(allows(management, 's3:PutBucketPolicy', `arn:aws:s3:::dpi-notifications-${ACCT}-${REGION}`, OWN)).toBe(false);
    expect(allows(management, 's3:PutObject', `arn:aws:s3:::dpi-notifications-${ACCT}-${REGION}/x/_setup-check.json`, OWN)).toBe(false);
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

  test('the pipe execution role can be created under its path and the prefix, only with the boundary, and passed only to pipes', () => {
    const role = cloud.find((r) => r.kind === 'iam-role')!;
    expect(role.arn).toBe(`arn:aws:iam::${ACCT}:role/spapi-pipe-roles/spapi-${role.pipelineId}-pipe`);
    expect(role.shared).toBe(false);
    expect(role.details?.trustedBy).toBe('pipes.amazonaws.com');
    // The emulator's role carries the boundary the construct creates (fixed name, so the service can attach it).
    expect(boundaryName).toBe('spapi-pipe-role-boundary');
    expect(boundaryArn).toBe(`arn:aws:iam::${ACCT}:policy/spapi-pipe-role-boundary`);
    expect(role.details?.permissionsBoundary).toBe(boundaryArn);
    const pipe = cloud.find((r) => r.kind === 'pipe')!;
    expect(pipe.details!.role).toBe(role.arn);
    // The result names the pipe role, not the management role.
    expect(meta.sqs_pipe_role_arn).toBe(role.arn);
    expect(meta.sqs_pipe_role_arn).not.toBe(MANAGEMENT_ROLE);
    const withBoundary = { 'iam:PermissionsBoundary': boundaryArn };
    expect(ROLE_ACTIONS.filter((a) => !allows(management, a, role.arn!, withBoundary))).toEqual([]);
    // Creating the role, or changing its inline policy, without the boundary or with another one is denied.
    for (const a of ['iam:CreateRole', 'iam:PutRolePolicy', 'iam:DeleteRolePolicy']) {
      expect(allows(management, a, role.arn!)).toBe(false);
      expect(allows(management, a, role.arn!, { 'iam:PermissionsBoundary': `arn:aws:iam::${ACCT}:policy/AdministratorAccess` })).toBe(false);
      expect(allows(management, a, role.arn!, { 'iam:PermissionsBoundary': 'arn:aws:iam::aws:policy/AdministratorAccess' })).toBe(false);
      expect(allows(management, a, role.arn!, { 'iam:PermissionsBoundary': 'arn:aws:iam::210987654321:policy/spapi-pipe-role-boundary' })).toBe(false);
    }
    const toPipes = { 'iam:PassedToService': 'pipes.amazonaws.com' };
    expect(allows(management, 'iam:PassRole', role.arn!, toPipes)).toBe(true);
    // Not to another service, not without the condition key.
    expect(allows(management, 'iam:PassRole', role.arn!, { 'iam:PassedToService': 'lambda.amazonaws.com' })).toBe(false);
    expect(allows(management, 'iam:PassRole', role.arn!)).toBe(false);
    // A role outside the path and prefix (a role of yours named with the prefix, or one in another account) can be
    // neither created nor passed.
    for (const other of [`arn:aws:iam::${ACCT}:role/dpi-management`, `arn:aws:iam::${ACCT}:role/admin`, `arn:aws:iam::${ACCT}:role/spapi-admin`,
      `arn:aws:iam::${ACCT}:role/other-path/spapi-pl-1-pipe`, 'arn:aws:iam::210987654321:role/spapi-pipe-roles/spapi-pl-1-pipe']) {
      for (const a of ROLE_ACTIONS) expect(allows(management, a, other, withBoundary)).toBe(false);
      expect(allows(management, 'iam:PassRole', other, toPipes)).toBe(false);
    }
    expect(allows(management, 'iam:AttachRolePolicy', role.arn!, withBoundary)).toBe(false);
    expect(allows(management, 'iam:UpdateAssumeRolePolicy', role.arn!, withBoundary)).toBe(false);
  });

  test('deny statements win: no boundary can be removed or replaced, the boundary policy cannot be changed', () => {
    const role = cloud.find((r) => r.kind === 'iam-role')!;
    for (const arn of [role.arn!, `arn:aws:iam::${ACCT}:role/admin`]) {
      for (const a of ['iam:DeleteRolePermissionsBoundary', 'iam:PutRolePermissionsBoundary']) {
        expect(allows(management, a, arn, { 'iam:PermissionsBoundary': boundaryArn })).toBe(false);
      }
    }
    for (const a of ['iam:CreatePolicyVersion', 'iam:DeletePolicy', 'iam:DeletePolicyVersion', 'iam:SetDefaultPolicyVersion']) {
      expect(allows(management, a, boundaryArn)).toBe(false);
    }
    // The Deny wins over an Allow: with an extra statement allowing everything, the same requests stay denied.
    const withAllowAll: Statement[] = [...management, { effect: 'Allow', actions: ['*'], resources: ['*'] }];
    expect(allows(withAllowAll, 'iam:DeleteRolePermissionsBoundary', role.arn!)).toBe(false);
    expect(allows(withAllowAll, 'iam:PutRolePermissionsBoundary', `arn:aws:iam::${ACCT}:role/admin`)).toBe(false);
    expect(allows(withAllowAll, 'iam:CreatePolicyVersion', boundaryArn)).toBe(false);
    // ... and the check itself is not vacuous: the extra statement does allow what is not denied.
    expect(allows(withAllowAll, 'iam:CreatePolicyVersion', `arn:aws:iam::${ACCT}:policy/other`)).toBe(true);
    expect(management.filter((s) => s.effect === 'Deny').map((s) => s.sid)).toEqual(['DenyBoundaryChange', 'DenyBoundaryPolicyChange']);
  });

  test('what the pipe does (read the source queue, put into the stream, write its log group) is within the boundary', () => {
    const role = cloud.find((r) => r.kind === 'iam-role')!;
    const pipe = cloud.find((r) => r.kind === 'pipe')!;
    const source = cloud.find((r) => r.kind === 'sqs-queue' && r.arn === role.details!.source)!;
    const stream = cloud.find((r) => r.kind === 'firehose-delivery-stream' && r.arn === role.details!.target)!;
    const logGroup = cloud.find((r) => r.kind === 'log-group' && r.id === role.details!.logGroup)!;
    expect(source.details?.purpose).toBe('upstream-source');
    expect(pipe.details!.source).toBe(source.arn);
    expect(pipe.details!.target).toBe(stream.arn);
    expect(meta.sqs_log_group_name).toBe(logGroup.id);
    const logGroupArn = required(logGroup).arn;
    const needs: Array<[string, string]> = [
      ['sqs:ReceiveMessage', source.arn!], ['sqs:DeleteMessage', source.arn!], ['sqs:GetQueueAttributes', source.arn!],
      ['firehose:PutRecord', stream.arn!], ['firehose:PutRecordBatch', stream.arn!],
      ['logs:CreateLogStream', logGroupArn], ['logs:PutLogEvents', `${logGroupArn}:log-stream:2026/11/22/abc`],
    ];
    expect(needs.filter(([a, arn]) => !allows(boundary, a, arn)).map(([a, arn]) => `${a} on ${arn}`)).toEqual([]);
  });

  test('the boundary allows nothing else: no s3, no iam, no other queues, streams, log groups or actions', () => {
    expect(boundary.every((s) => s.effect === 'Allow' && s.conditions === undefined)).toBe(true);
    expect(boundary.flatMap((s) => s.actions).filter((a) => a.includes('*'))).toEqual([]);
    const bucket = cloud.find((r) => r.kind === 's3-bucket')!;
    const source = cloud.find((r) => r.kind === 'sqs-queue' && r.details?.purpose === 'upstream-source')!;
    const denied: Array<[string, string]> = [
      ['s3:PutObject', `${bucket.arn}/notifications/x.json`], ['s3:GetObject', `${bucket.arn}/notifications/x.json`], ['s3:ListBucket', bucket.arn!],
      ['iam:CreateRole', `arn:aws:iam::${ACCT}:role/spapi-x`], ['iam:PassRole', `arn:aws:iam::${ACCT}:role/spapi-x`],
      ['iam:PutRolePolicy', `arn:aws:iam::${ACCT}:role/admin`], ['sts:AssumeRole', `arn:aws:iam::${ACCT}:role/admin`],
      ['sqs:ReceiveMessage', `arn:aws:sqs:${REGION}:${ACCT}:orders-queue`], ['sqs:ReceiveMessage', `arn:aws:sqs:us-west-2:${ACCT}:spapi-pl-1-source`],
      ['sqs:ReceiveMessage', `arn:aws:sqs:${REGION}:210987654321:spapi-pl-1-source`],
      ['sqs:SendMessage', source.arn!], ['sqs:SetQueueAttributes', source.arn!], ['sqs:DeleteQueue', source.arn!],
      ['firehose:PutRecord', `arn:aws:firehose:${REGION}:${ACCT}:deliverystream/other`], ['firehose:DeleteDeliveryStream', `arn:aws:firehose:${REGION}:${ACCT}:deliverystream/spapi-pl-1`],
      ['logs:PutLogEvents', `arn:aws:logs:${REGION}:${ACCT}:log-group:/aws/lambda/admin:log-stream:x`],
      ['logs:DeleteLogGroup', `arn:aws:logs:${REGION}:${ACCT}:log-group:/aws/vendedlogs/pipes/spapi-pl-1`],
      ['kms:Decrypt', `arn:aws:kms:${REGION}:${ACCT}:key/abc`],
    ];
    expect(denied.filter(([a, arn]) => allows(boundary, a, arn)).map(([a, arn]) => `${a} on ${arn}`)).toEqual([]);
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

describe('the cross-account doors are closed whoever assumes the management role', () => {
  test('a bucket of the same name pattern in another account: no write by the delivery stream, no setup by the service', () => {
    const bucket = cloud.find((r) => r.kind === 's3-bucket')!;
    const foreign = { 's3:ResourceAccount': OTHER_ACCT };
    // The same name (bucket names are global): only the owner differs.
    expect(allows(delivery, 's3:PutObject', `${bucket.arn}/notifications/x.json`, foreign)).toBe(false);
    expect(allows(delivery, 's3:ListBucket', bucket.arn!, foreign)).toBe(false);
    expect(allows(delivery, 's3:PutObject', `${bucket.arn}/notifications/x.json`)).toBe(false);
    expect(BUCKET_SETUP_ACTIONS.filter((a) => allows(management, a, bucket.arn!, foreign))).toEqual([]);
    expect(allows(management, 's3:PutObject', `${bucket.arn}/x/_setup-check.json`, foreign)).toBe(false);
    expect(allows(delivery, 's3:GetBucketLocation', bucket.arn!, foreign)).toBe(false);
  });

  test('rules only on the partner bus; every target must be a delivery stream or queue of the prefix in this account', () => {
    const rule = cloud.find((r) => r.kind === 'eventbridge-rule')!;
    const target = cloud.find((r) => r.kind === 'eventbridge-target')!;
    const onBus = ruleArn(REGION, ACCT, rule.details!.bus, rule.id);
    expect(allows(management, 'events:PutRule', onBus)).toBe(true);
    expect(allows(management, 'events:PutRule', ruleArn(REGION, ACCT, undefined, rule.id))).toBe(false);
    expect(allows(management, 'events:PutRule', ruleArn(REGION, ACCT, 'my-app-bus', rule.id))).toBe(false);
    const put = (targets: string[]) => allows(management, 'events:PutTargets', onBus, { 'events:TargetArn': targets });
    expect(put([target.details!.target])).toBe(true);
    expect(put([`arn:aws:sqs:${REGION}:${ACCT}:spapi-pl-1-objects`])).toBe(true);
    for (const foreign of [
      `arn:aws:sqs:${REGION}:${OTHER_ACCT}:spapi-pl-1-objects`,
      `arn:aws:firehose:${REGION}:${OTHER_ACCT}:deliverystream/spapi-pl-1`,
      `arn:aws:events:${REGION}:${OTHER_ACCT}:event-bus/default`,
      `arn:aws:lambda:${REGION}:${ACCT}:function:spapi-x`,
      `arn:aws:sqs:${REGION}:${ACCT}:orders-queue`,
    ]) {
      expect(put([foreign])).toBe(false);
      expect(put([target.details!.target, foreign])).toBe(false);
    }
    expect(allows(management, 'events:PutTargets', onBus)).toBe(false);
  });
});
