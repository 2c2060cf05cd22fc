import { CfnRule, Fn, Stack, Token } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import { IConstruct } from 'constructs';
import { invalid } from '../connection/validation';

/**
 * The least-privilege statements of `NotificationPipelineRoles` and the checks of their inputs (internal, not
 * exported from the package entry point). docs/constructs.md ("NotificationPipelineRoles") lists every condition
 * and why.
 */

/** Name prefix of the shared partner event bus of event-bus notification types (`aws.partner/<partner>/...`). */
export const PARTNER_EVENT_BUS_PREFIX = 'aws.partner/sellingpartnerapi.amazon/';
/** The object the service writes under a pipeline prefix to check the setup. */
export const SETUP_CHECK_OBJECT = '_setup-check.json';
/** Name (after the resource name prefix) of the permissions boundary of the pipe execution roles. */
export const PIPE_ROLE_BOUNDARY_SUFFIX = 'pipe-role-boundary';
/** Name (after the resource name prefix) of the IAM path of the pipe execution roles: `/<prefix>pipe-roles/`. */
export const PIPE_ROLE_PATH_SUFFIX = 'pipe-roles';
/** The deployment regions the unified create accepts (spec: `aws_region`). */
export const ACCEPTED_DEPLOYMENT_REGIONS: readonly string[] = ['us-east-1', 'us-east-2', 'us-west-1', 'us-west-2', 'af-south-1', 'ap-east-1'];

/**
 * The regions of the policies: `regions`, or the stack's region. A known region that the service does not accept is
 * a synth error; a token region (an environment-agnostic stack) stays a token in the ARNs (the region the stack is
 * deployed to, never `*`) and a CloudFormation rule refuses the deployment in a region that is not accepted.
 */
export function pipelineRegions(scope: IConstruct, regions: string[] | undefined): string[] {
  const stack = Stack.of(scope);
  const given = regions !== undefined;
  const list = regions ?? [stack.region];
  if (list.length === 0) {
    throw invalid(scope, 'regions', '', 'is empty', 'list the regions where the pipelines are deployed, or omit it for the stack\'s region');
  }
  const accepted = ACCEPTED_DEPLOYMENT_REGIONS.join(', ');
  const tokens: string[] = [];
  for (const region of list) {
    if (Token.isUnresolved(region)) {
      tokens.push(region);
    } else if (!ACCEPTED_DEPLOYMENT_REGIONS.includes(region)) {
      throw given
        ? invalid(scope, 'regions', region, 'is not an accepted deployment region', `use regions among ${accepted}`)
        : invalid(scope, 'region', region, '(the stack\'s region) is not an accepted deployment region',
          `deploy the stack to one of ${accepted}, or set regions`);
    }
  }
  if (tokens.length > 0) {
    new CfnRule(scope, 'AcceptedDeploymentRegion', {
      assertions: tokens.map((region) => ({
        assert: Fn.conditionContains([...ACCEPTED_DEPLOYMENT_REGIONS], region),
        assertDescription: `${scope.node.path}: the deployment region is not one the service accepts (${accepted})`,
      })),
    });
  }
  return [...new Set(list)];
}

/** The names the statements are built from. */
export interface RoleNames {
  readonly partition: string;
  readonly account: string;
  readonly prefix: string;
  /** `arn:<partition>:s3:::<bucketPrefix>*`. */
  readonly bucketArn: string;
  /** `arn:<partition>:iam::<account>:role<pipeRolePath><prefix>*`. */
  readonly pipeRoleArn: string;
  readonly boundaryArn: string;
  /** One ARN per pipeline region. */
  readonly arns: (service: string, resource: string) => string[];
}

/** The shared bucket's owner is this account (closes the door to an `spapi-...` bucket of another account). */
const ownBucket = (n: RoleNames) => ({ StringEquals: { 's3:ResourceAccount': n.account } });

/** Rules on the partner event bus of the service only (`rule/<bus name>/<rule name>`). */
const partnerBusRules = (n: RoleNames): string[] => n.arns('events', `rule/${PARTNER_EVENT_BUS_PREFIX}*/${n.prefix}*`);

/** The targets a rule may deliver to: this account's delivery streams and queues of the prefix. */
export const ruleTargets = (n: RoleNames): string[] => [
  ...n.arns('firehose', `deliverystream/${n.prefix}*`),
  ...n.arns('sqs', `${n.prefix}*`),
];

/** The statements of the delivery role (`service-spapi-firehose-role`). */
export function deliveryStatements(n: RoleNames): iam.PolicyStatement[] {
  return [
    new iam.PolicyStatement({
      sid: 'SharedBucket',
      actions: ['s3:AbortMultipartUpload', 's3:GetBucketLocation', 's3:ListBucket', 's3:ListBucketMultipartUploads'],
      resources: [n.bucketArn],
      conditions: ownBucket(n),
    }),
    new iam.PolicyStatement({
      sid: 'SharedBucketObjects',
      actions: ['s3:PutObject', 's3:GetObject', 's3:AbortMultipartUpload'],
      resources: [`${n.bucketArn}/*`],
      conditions: ownBucket(n),
    }),
    new iam.PolicyStatement({
      sid: 'DeliveryLogs',
      actions: ['logs:PutLogEvents', 'logs:CreateLogStream'],
      resources: n.arns('logs', `log-group:/aws/kinesisfirehose/${n.prefix}*`),
    }),
  ];
}

/** The built-in statements of the management role, which the service assumes. */
export function managementStatements(n: RoleNames, deliveryRoleArn: string, eventBusRoleArn: string): iam.PolicyStatement[] {
  return [
    new iam.PolicyStatement({
      sid: 'DeliveryStreams',
      actions: [
        'firehose:CreateDeliveryStream', 'firehose:DeleteDeliveryStream', 'firehose:DescribeDeliveryStream',
        'firehose:UpdateDestination', 'firehose:TagDeliveryStream', 'firehose:ListTagsForDeliveryStream',
      ],
      resources: n.arns('firehose', `deliverystream/${n.prefix}*`),
    }),
    new iam.PolicyStatement({
      sid: 'Queues',
      actions: [
        'sqs:CreateQueue', 'sqs:DeleteQueue', 'sqs:GetQueueAttributes', 'sqs:SetQueueAttributes',
        'sqs:GetQueueUrl', 'sqs:TagQueue', 'sqs:ListQueueTags',
      ],
      resources: n.arns('sqs', `${n.prefix}*`),
    }),
    new iam.PolicyStatement({
      // Event-bus types arrive on the service's partner event bus: rules on that bus only, not on the default bus
      // or any other bus of the account.
      sid: 'PartnerBusRules',
      actions: [
        'events:PutRule', 'events:DeleteRule', 'events:DescribeRule', 'events:EnableRule', 'events:DisableRule',
        'events:RemoveTargets', 'events:ListTargetsByRule', 'events:TagResource',
      ],
      resources: partnerBusRules(n),
    }),
    new iam.PolicyStatement({
      // Every target of a PutTargets request must be a delivery stream or queue of the prefix in this account and
      // the pipeline regions (ForAllValues over the request's targets; Null: the key must be present, since
      // ForAllValues holds for an empty set).
      sid: 'PartnerBusTargets',
      actions: ['events:PutTargets'],
      resources: partnerBusRules(n),
      conditions: {
        'ForAllValues:ArnLike': { 'events:TargetArn': ruleTargets(n) },
        'Null': { 'events:TargetArn': 'false' },
      },
    }),
    new iam.PolicyStatement({
      sid: 'Pipes',
      actions: [
        'pipes:CreatePipe', 'pipes:DeletePipe', 'pipes:DescribePipe', 'pipes:UpdatePipe',
        'pipes:StartPipe', 'pipes:StopPipe', 'pipes:TagResource',
      ],
      resources: n.arns('pipes', `pipe/${n.prefix}*`),
    }),
    new iam.PolicyStatement({
      // The service creates the shared regional bucket with the first pipeline and configures it, in this account
      // only. No s3:PutBucketPolicy and no s3:PutBucketPublicAccessBlock: nothing the service documents needs them
      // (the delivery role writes through IAM in the same account, the object notifications need the queue's
      // policy, not the bucket's; new buckets block public access by default), and either could open the bucket.
      sid: 'SharedBucket',
      actions: [
        's3:CreateBucket', 's3:GetBucketLocation', 's3:ListBucket', 's3:GetBucketPolicy', 's3:PutEncryptionConfiguration',
        's3:PutBucketOwnershipControls', 's3:PutBucketTagging', 's3:PutBucketNotification', 's3:GetBucketNotification',
      ],
      resources: [n.bucketArn],
      conditions: ownBucket(n),
    }),
    new iam.PolicyStatement({
      // The only object the management role writes: the setup check under a pipeline prefix.
      sid: 'SharedBucketSetupCheck',
      actions: ['s3:PutObject'],
      resources: [`${n.bucketArn}/*/${SETUP_CHECK_OBJECT}`],
      conditions: ownBucket(n),
    }),
    new iam.PolicyStatement({
      // Event-bus types are delivered through the shared partner event bus.
      sid: 'PartnerEventBus',
      actions: ['events:CreateEventBus', 'events:DescribeEventBus'],
      resources: n.arns('events', `event-bus/${PARTNER_EVENT_BUS_PREFIX}*`),
    }),
    new iam.PolicyStatement({
      sid: 'LogGroups',
      actions: ['logs:CreateLogGroup', 'logs:DeleteLogGroup', 'logs:PutRetentionPolicy', 'logs:CreateLogStream', 'logs:TagResource'],
      resources: [
        ...n.arns('logs', `log-group:${n.prefix}*`),
        ...n.arns('logs', `log-group:/aws/kinesisfirehose/${n.prefix}*`),
        ...n.arns('logs', `log-group:/aws/vendedlogs/pipes/${n.prefix}*`),
      ],
    }),
    new iam.PolicyStatement({
      // The queue path's pipe runs with an execution role that the service creates under the pipe role path,
      // only with the permissions boundary (iam:PermissionsBoundary is evaluated by these actions).
      sid: 'PipeRolesWithBoundary',
      actions: ['iam:CreateRole', 'iam:PutRolePolicy', 'iam:DeleteRolePolicy'],
      resources: [n.pipeRoleArn],
      conditions: { StringEquals: { 'iam:PermissionsBoundary': n.boundaryArn } },
    }),
    new iam.PolicyStatement({
      // These actions do not evaluate iam:PermissionsBoundary: the path and the name prefix are the limit.
      sid: 'PipeRoles',
      actions: ['iam:DeleteRole', 'iam:GetRole', 'iam:TagRole'],
      resources: [n.pipeRoleArn],
    }),
    new iam.PolicyStatement({
      // No role of the account may lose or change its permissions boundary through this role.
      sid: 'DenyBoundaryChange',
      effect: iam.Effect.DENY,
      actions: ['iam:DeleteRolePermissionsBoundary', 'iam:PutRolePermissionsBoundary'],
      resources: [`arn:${n.partition}:iam::${n.account}:role/*`],
    }),
    new iam.PolicyStatement({
      // The boundary itself cannot be loosened or removed.
      sid: 'DenyBoundaryPolicyChange',
      effect: iam.Effect.DENY,
      actions: ['iam:CreatePolicyVersion', 'iam:DeletePolicy', 'iam:DeletePolicyVersion', 'iam:SetDefaultPolicyVersion'],
      resources: [n.boundaryArn],
    }),
    new iam.PolicyStatement({
      // Only roles under the pipe role path (which the service can create only with the boundary), only to pipes.
      sid: 'PassPipeRole',
      actions: ['iam:PassRole'],
      resources: [n.pipeRoleArn],
      conditions: { StringEquals: { 'iam:PassedToService': 'pipes.amazonaws.com' } },
    }),
    new iam.PolicyStatement({
      sid: 'PassDeliveryRole',
      actions: ['iam:PassRole'],
      resources: [deliveryRoleArn],
      conditions: { StringEquals: { 'iam:PassedToService': 'firehose.amazonaws.com' } },
    }),
    new iam.PolicyStatement({
      sid: 'PassEventBusRole',
      actions: ['iam:PassRole'],
      resources: [eventBusRoleArn],
      conditions: { StringEquals: { 'iam:PassedToService': 'events.amazonaws.com' } },
    }),
  ];
}
