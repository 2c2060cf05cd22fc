import { Stack, Token } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import { Construct, IConstruct } from 'constructs';
import { acknowledge, acknowledgeCompliance, acknowledgeWildcards, flatten } from '../connection/nag';
import { invalid } from '../connection/validation';

/** The fixed name of the delivery role that the service expects in the customer account. */
const DELIVERY_ROLE_NAME = 'service-spapi-firehose-role';
/** Name prefix of the shared partner event bus of event-bus notification types. */
const PARTNER_EVENT_BUS_PREFIX = 'aws.partner/sellingpartnerapi.amazon/';
/** The object the service writes under a pipeline prefix to check the setup. */
const SETUP_CHECK_OBJECT = '_setup-check.json';
/** Name (after the resource name prefix) of the permissions boundary of the pipe execution roles. */
const PIPE_ROLE_BOUNDARY_SUFFIX = 'pipe-role-boundary';

/**
 * The customer-side roles that notification pipelines use.
 */
export interface INotificationPipelineRoles extends IConstruct {
  /** ARN of the management role that the service assumes (`role_arn`). */
  readonly managementRoleArn: string;
  /** The management role. */
  readonly managementRole: iam.IRole;
  /**
   * ARN of the event-bus-to-delivery-stream role (`eb_to_fh_role_arn`);
   * required by pipelines with event-bus notification types.
   */
  readonly eventBusRoleArn?: string;
  /** The event-bus-to-delivery-stream role, when known. */
  readonly eventBusRole?: iam.IRole;
}

/**
 * Properties of `NotificationPipelineRoles`.
 */
export interface NotificationPipelineRolesProps {
  /**
   * The service's AWS account ID: the only principal allowed to assume the
   * management role.
   */
  readonly serviceAccountId: string;

  /**
   * External ID that the service presents when it assumes the management role: the trust policy then requires it
   * (`sts:ExternalId` condition).
   *
   * The unified create body has no field through which the service could learn an external ID, so set one only
   * when the service gave you one for your account.
   *
   * @default - no `sts:ExternalId` condition (trust limited to the service's account)
   */
  readonly externalId?: string;

  /**
   * The management role's policy, replacing the built-in least-privilege document.
   *
   * The built-in document rests on assumptions about what the service provisions that its interface specification
   * does not state (the `spapi-` name prefix, the shared bucket naming, the `_setup-check.json` object, the pipe
   * role permissions boundary; see docs/constructs.md). Replace it when the service documents other names; extend
   * it with `addToManagementPolicy()`.
   *
   * @default - the built-in least-privilege document
   */
  readonly managementPolicy?: iam.PolicyDocument;

  /**
   * Name prefix of the resources the service provisions (delivery streams,
   * queues, rules, pipes, pipe execution roles, log groups); the policies are
   * limited to names with this prefix. The service can create IAM roles only
   * with this prefix, and pass them only to EventBridge Pipes.
   *
   * @default 'spapi-'
   */
  readonly resourceNamePrefix?: string;

  /**
   * Name prefix of the shared object-storage bucket into which the delivery
   * streams write.
   *
   * @default - the resourceNamePrefix
   */
  readonly sharedBucketNamePrefix?: string;

  /**
   * Regions in which pipelines that use these roles are deployed; the
   * policies are limited to resources in these regions.
   *
   * @default - the stack's region
   */
  readonly regions?: string[];
}

/**
 * Attributes to reference notification pipeline roles deployed elsewhere.
 */
export interface NotificationPipelineRolesAttributes {
  /** ARN of the management role. */
  readonly managementRoleArn: string;

  /**
   * ARN of the event-bus-to-delivery-stream role.
   *
   * @default - none: pipelines using these roles may only select queue types
   */
  readonly eventBusRoleArn?: string;
}

const declarations = new WeakMap<IConstruct, string>();

/**
 * The customer-side IAM roles of notification pipelines (one set per AWS account):
 *
 * - the management role that the service assumes (`role_arn`): trusted only by
 *   the service's account with an `sts:ExternalId` condition, with a
 *   least-privilege inline policy for the resources the service provisions;
 * - the event-bus-to-delivery-stream role (`eb_to_fh_role_arn`);
 * - the delivery role with the fixed name `service-spapi-firehose-role`.
 *
 * Because the delivery role has a fixed name, the set exists once per account:
 * declare it in one stack and reference it from other apps or stacks with
 * `NotificationPipelineRoles.fromRoleArns()`. A second declaration in the same
 * app is a synth error.
 *
 * @example
 * const roles = new NotificationPipelineRoles(this, 'PipelineRoles', {
 *   serviceAccountId: '111122223333', // the service's AWS account (from the service)
 *   externalId: 'my-external-id', // optional: adds an sts:ExternalId condition to the trust
 * });
 */
export class NotificationPipelineRoles extends Construct implements INotificationPipelineRoles {
  /** The fixed name of the delivery role (`service-spapi-firehose-role`). */
  public static readonly DELIVERY_ROLE_NAME: string = DELIVERY_ROLE_NAME;

  /**
   * Reference roles deployed by another stack or app.
   */
  public static fromRoleArns(scope: Construct, id: string, attrs: NotificationPipelineRolesAttributes): INotificationPipelineRoles {
    return new ImportedNotificationPipelineRoles(scope, id, attrs);
  }

  public readonly managementRoleArn: string;
  public readonly managementRole: iam.IRole;
  public readonly eventBusRoleArn?: string;
  public readonly eventBusRole?: iam.IRole;
  /** ARN of the delivery role `service-spapi-firehose-role`. */
  public readonly deliveryRoleArn: string;
  /** The delivery role `service-spapi-firehose-role`. */
  public readonly deliveryRole: iam.IRole;
  /**
   * The permissions boundary of the pipe execution roles that the service
   * creates: the customer-managed policy `<resourceNamePrefix>pipe-role-boundary`
   * (e.g. `spapi-pipe-role-boundary`). The management role can create a role
   * under the prefix, and put or delete its inline policies, only with this
   * boundary attached, and can neither remove a boundary from a role nor change
   * this policy. It allows only what a pipe execution role needs (read and delete
   * messages of the prefixed queues, put records into the prefixed delivery
   * streams, write the prefixed pipe log groups). The service attaches it by name.
   */
  public readonly pipeRoleBoundary: iam.IManagedPolicy;
  /** ARN of `pipeRoleBoundary` (`arn:aws:iam::<account>:policy/<resourceNamePrefix>pipe-role-boundary`). */
  public readonly pipeRoleBoundaryArn: string;
  /** The management role's policy document (the built-in one, or `managementPolicy`). */
  public readonly managementPolicyDocument: iam.PolicyDocument;

  constructor(scope: Construct, id: string, props: NotificationPipelineRolesProps) {
    super(scope, id);

    const first = declarations.get(this.node.root);
    if (first !== undefined) {
      throw new Error(`${this.node.path}: a second NotificationPipelineRoles in this app (the first is '${first}'); `
        + `the delivery role name '${DELIVERY_ROLE_NAME}' exists once per account, so declare the roles once and use NotificationPipelineRoles.fromRoleArns() elsewhere`);
    }
    declarations.set(this.node.root, this.node.path);

    if (!Token.isUnresolved(props.serviceAccountId) && !/^\d{12}$/.test(props.serviceAccountId ?? '')) {
      throw invalid(this, 'serviceAccountId', props.serviceAccountId, 'is not an AWS account ID', 'use the 12-digit account ID given by the service');
    }
    if (props.externalId !== undefined && !Token.isUnresolved(props.externalId)
      && (typeof props.externalId !== 'string' || !/^[\w+=,.@:\/-]{2,1224}$/.test(props.externalId))) {
      throw invalid(this, 'externalId', props.externalId, 'is not a valid external ID', 'use 2 to 1224 characters of letters, digits and +=,.@:/-_');
    }
    const prefix = props.resourceNamePrefix ?? 'spapi-';
    if (!/^[a-zA-Z0-9][a-zA-Z0-9_.-]{0,31}$/.test(prefix)) {
      throw invalid(this, 'resourceNamePrefix', prefix, 'is not accepted', 'use 1 to 32 letters, digits, dots, hyphens or underscores (no wildcard)');
    }
    const bucketPrefix = props.sharedBucketNamePrefix ?? prefix;
    if (!/^[a-z0-9][a-z0-9.-]{0,39}$/.test(bucketPrefix)) {
      throw invalid(this, 'sharedBucketNamePrefix', bucketPrefix, 'is not accepted', 'use 1 to 40 lower-case letters, digits, dots or hyphens (no wildcard)');
    }

    const stack = Stack.of(this);
    const partition = stack.partition;
    const account = stack.account;
    const regions = props.regions ?? [stack.region];
    if (regions.length === 0) {
      throw invalid(this, 'regions', '', 'is empty', 'list the regions where the pipelines are deployed, or omit it for the stack\'s region');
    }
    const arns = (service: string, resource: string): string[] =>
      regions.map((region) => `arn:${partition}:${service}:${region}:${account}:${resource}`);
    const bucketArn = `arn:${partition}:s3:::${bucketPrefix}*`;
    const pipeRoleArn = `arn:${partition}:iam::${account}:role/${prefix}*`;
    // Only on behalf of this account's resources (confused-deputy guard).
    const servicePrincipal = (service: string): iam.ServicePrincipal =>
      new iam.ServicePrincipal(service, { conditions: { StringEquals: { 'aws:SourceAccount': account } } });

    // (0) Permissions boundary of the pipe execution roles that the service creates: exactly what a pipe needs.
    const boundaryName = `${prefix}${PIPE_ROLE_BOUNDARY_SUFFIX}`;
    const boundaryArn = `arn:${partition}:iam::${account}:policy/${boundaryName}`;
    const pipeRoleBoundary = new iam.ManagedPolicy(this, 'PipeRoleBoundary', {
      managedPolicyName: boundaryName,
      description: 'Permissions boundary of the pipe execution roles that the data pipeline integration service creates',
      statements: [
        new iam.PolicyStatement({
          sid: 'SourceQueues',
          actions: ['sqs:ReceiveMessage', 'sqs:DeleteMessage', 'sqs:GetQueueAttributes'],
          resources: arns('sqs', `${prefix}*`),
        }),
        new iam.PolicyStatement({
          sid: 'DeliveryStreams',
          actions: ['firehose:PutRecord', 'firehose:PutRecordBatch'],
          resources: arns('firehose', `deliverystream/${prefix}*`),
        }),
        new iam.PolicyStatement({
          sid: 'PipeLogs',
          actions: ['logs:CreateLogStream', 'logs:PutLogEvents'],
          resources: arns('logs', `log-group:/aws/vendedlogs/pipes/${prefix}*`),
        }),
      ],
    });
    const boundaryCondition = { StringEquals: { 'iam:PermissionsBoundary': boundaryArn } };

    // (3) Delivery role: the delivery stream writes into the shared bucket.
    const deliveryRole = new iam.Role(this, 'DeliveryRole', {
      roleName: DELIVERY_ROLE_NAME,
      description: 'Delivery streams of the data pipeline integration service write notifications to the shared bucket',
      assumedBy: servicePrincipal('firehose.amazonaws.com'),
      inlinePolicies: {
        Delivery: new iam.PolicyDocument({
          statements: [
            new iam.PolicyStatement({
              sid: 'SharedBucket',
              actions: ['s3:AbortMultipartUpload', 's3:GetBucketLocation', 's3:ListBucket', 's3:ListBucketMultipartUploads'],
              resources: [bucketArn],
            }),
            new iam.PolicyStatement({
              sid: 'SharedBucketObjects',
              actions: ['s3:PutObject', 's3:GetObject', 's3:AbortMultipartUpload'],
              resources: [`${bucketArn}/*`],
            }),
            new iam.PolicyStatement({
              sid: 'DeliveryLogs',
              actions: ['logs:PutLogEvents', 'logs:CreateLogStream'],
              resources: arns('logs', `log-group:/aws/kinesisfirehose/${prefix}*`),
            }),
          ],
        }),
      },
    });

    // (2) Event-bus role: the rule target puts records into the delivery stream.
    const eventBusRole = new iam.Role(this, 'EventBusRole', {
      description: 'Event-bus rules of the data pipeline integration service deliver to the delivery streams',
      assumedBy: servicePrincipal('events.amazonaws.com'),
      inlinePolicies: {
        PutRecords: new iam.PolicyDocument({
          statements: [
            new iam.PolicyStatement({
              sid: 'DeliveryStreams',
              actions: ['firehose:PutRecord', 'firehose:PutRecordBatch'],
              resources: arns('firehose', `deliverystream/${prefix}*`),
            }),
          ],
        }),
      },
    });

    // (1) Management role: assumed by the service to provision the pipeline.
    const serviceAccount = new iam.AccountPrincipal(props.serviceAccountId);
    this.managementPolicyDocument = props.managementPolicy ?? new iam.PolicyDocument({
      statements: [
        new iam.PolicyStatement({
          sid: 'DeliveryStreams',
          actions: [
            'firehose:CreateDeliveryStream', 'firehose:DeleteDeliveryStream', 'firehose:DescribeDeliveryStream',
            'firehose:UpdateDestination', 'firehose:TagDeliveryStream', 'firehose:ListTagsForDeliveryStream',
          ],
          resources: arns('firehose', `deliverystream/${prefix}*`),
        }),
        new iam.PolicyStatement({
          sid: 'Queues',
          actions: [
            'sqs:CreateQueue', 'sqs:DeleteQueue', 'sqs:GetQueueAttributes', 'sqs:SetQueueAttributes',
            'sqs:GetQueueUrl', 'sqs:TagQueue', 'sqs:ListQueueTags',
          ],
          resources: arns('sqs', `${prefix}*`),
        }),
        new iam.PolicyStatement({
          sid: 'EventBusRulesAndTargets',
          actions: [
            'events:PutRule', 'events:DeleteRule', 'events:DescribeRule', 'events:EnableRule', 'events:DisableRule',
            'events:PutTargets', 'events:RemoveTargets', 'events:ListTargetsByRule', 'events:TagResource',
          ],
          resources: [...arns('events', `rule/${prefix}*`), ...arns('events', `rule/*/${prefix}*`)],
        }),
        new iam.PolicyStatement({
          sid: 'Pipes',
          actions: [
            'pipes:CreatePipe', 'pipes:DeletePipe', 'pipes:DescribePipe', 'pipes:UpdatePipe',
            'pipes:StartPipe', 'pipes:StopPipe', 'pipes:TagResource',
          ],
          resources: arns('pipes', `pipe/${prefix}*`),
        }),
        new iam.PolicyStatement({
          // The service creates the shared regional bucket with the first pipeline and configures it.
          sid: 'SharedBucket',
          actions: [
            's3:CreateBucket', 's3:GetBucketLocation', 's3:ListBucket',
            's3:PutBucketPolicy', 's3:GetBucketPolicy', 's3:PutEncryptionConfiguration',
            's3:PutBucketPublicAccessBlock', 's3:PutBucketOwnershipControls', 's3:PutBucketTagging',
            's3:PutBucketNotification', 's3:GetBucketNotification',
          ],
          resources: [bucketArn],
        }),
        new iam.PolicyStatement({
          // The only object the management role writes: the setup check under a pipeline prefix.
          sid: 'SharedBucketSetupCheck',
          actions: ['s3:PutObject'],
          resources: [`${bucketArn}/*/${SETUP_CHECK_OBJECT}`],
        }),
        new iam.PolicyStatement({
          // Event-bus types are delivered through the shared partner event bus.
          sid: 'PartnerEventBus',
          actions: ['events:CreateEventBus', 'events:DescribeEventBus'],
          resources: arns('events', `event-bus/${PARTNER_EVENT_BUS_PREFIX}*`),
        }),
        new iam.PolicyStatement({
          sid: 'LogGroups',
          actions: ['logs:CreateLogGroup', 'logs:DeleteLogGroup', 'logs:PutRetentionPolicy', 'logs:CreateLogStream', 'logs:TagResource'],
          resources: [
            ...arns('logs', `log-group:${prefix}*`),
            ...arns('logs', `log-group:/aws/kinesisfirehose/${prefix}*`),
            ...arns('logs', `log-group:/aws/vendedlogs/pipes/${prefix}*`),
          ],
        }),
        new iam.PolicyStatement({
          // The queue path's pipe runs with an execution role that the service creates under the prefix,
          // only with the permissions boundary (iam:PermissionsBoundary is evaluated by these actions).
          sid: 'PipeRolesWithBoundary',
          actions: ['iam:CreateRole', 'iam:PutRolePolicy', 'iam:DeleteRolePolicy'],
          resources: [pipeRoleArn],
          conditions: boundaryCondition,
        }),
        new iam.PolicyStatement({
          // These actions do not evaluate iam:PermissionsBoundary: the role name prefix is the limit.
          sid: 'PipeRoles',
          actions: ['iam:DeleteRole', 'iam:GetRole', 'iam:TagRole'],
          resources: [pipeRoleArn],
        }),
        new iam.PolicyStatement({
          // No role of the account may lose or change its permissions boundary through this role.
          sid: 'DenyBoundaryChange',
          effect: iam.Effect.DENY,
          actions: ['iam:DeleteRolePermissionsBoundary', 'iam:PutRolePermissionsBoundary'],
          resources: [`arn:${partition}:iam::${account}:role/*`],
        }),
        new iam.PolicyStatement({
          // The boundary itself cannot be loosened or removed.
          sid: 'DenyBoundaryPolicyChange',
          effect: iam.Effect.DENY,
          actions: ['iam:CreatePolicyVersion', 'iam:DeletePolicy', 'iam:DeletePolicyVersion', 'iam:SetDefaultPolicyVersion'],
          resources: [boundaryArn],
        }),
        new iam.PolicyStatement({
          sid: 'PassPipeRole',
          actions: ['iam:PassRole'],
          resources: [pipeRoleArn],
          conditions: { StringEquals: { 'iam:PassedToService': 'pipes.amazonaws.com' } },
        }),
        new iam.PolicyStatement({
          sid: 'PassDeliveryRole',
          actions: ['iam:PassRole'],
          resources: [deliveryRole.roleArn],
          conditions: { StringEquals: { 'iam:PassedToService': 'firehose.amazonaws.com' } },
        }),
        new iam.PolicyStatement({
          sid: 'PassEventBusRole',
          actions: ['iam:PassRole'],
          resources: [eventBusRole.roleArn],
          conditions: { StringEquals: { 'iam:PassedToService': 'events.amazonaws.com' } },
        }),
      ],
    });
    const managementRole = new iam.Role(this, 'ManagementRole', {
      description: 'Assumed by the data pipeline integration service to provision notification pipelines',
      assumedBy: props.externalId !== undefined
        ? serviceAccount.withConditions({ StringEquals: { 'sts:ExternalId': props.externalId } })
        : serviceAccount,
      inlinePolicies: { Provisioning: this.managementPolicyDocument },
    });

    // The compliance packs prefer managed policies: these roles are the service's, in this account only.
    for (const role of [deliveryRole, eventBusRole, managementRole]) {
      acknowledgeCompliance(role, 'IAMNoInlinePolicy', 'The policy belongs to this role alone (the service assumes it); an inline policy cannot be '
        + 'attached to another principal, which a managed policy could. The management policy can be replaced or extended '
        + '(managementPolicy, addToManagementPolicy).');
    }

    // Names of the provisioned resources are generated by the service under the
    // prefix, so the policies end in `<prefix>*`; nothing else is a wildcard.
    const esc = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    acknowledgeWildcards(this, [{
      pattern: new RegExp(`^arn:[^*]+:(${esc(prefix)}|rule/${esc(prefix)}|rule/\\*/${esc(prefix)}|deliverystream/${esc(prefix)}|pipe/${esc(prefix)}|role/${esc(prefix)}|log-group:(/aws/kinesisfirehose/|/aws/vendedlogs/pipes/)?${esc(prefix)})\\*$`),
      reason: `The service names the resources it provisions (including the pipe execution roles) with the prefix '${prefix}' at run time; access is limited to that prefix in this account and the pipeline regions.`,
    }, {
      pattern: new RegExp(`^arn:[^*]+:s3:::${esc(bucketPrefix)}\\*(/\\*|/\\*/${esc(SETUP_CHECK_OBJECT)})?$`),
      reason: `The shared bucket is created by the service with the name prefix '${bucketPrefix}'; access is limited to buckets with that prefix (the management role writes only the '${SETUP_CHECK_OBJECT}' objects).`,
    }, {
      pattern: new RegExp(`^arn:[^*]+:events:[^*]+:event-bus/${esc(PARTNER_EVENT_BUS_PREFIX)}\\*$`),
      reason: `Event-bus notification types use the shared partner event bus '${PARTNER_EVENT_BUS_PREFIX}<id>', whose name the partner event source determines; access is limited to partner buses of that source in this account and the pipeline regions.`,
    }]);

    // The management policy names the boundary by ARN: create the boundary first.
    managementRole.node.addDependency(pipeRoleBoundary);
    // The boundary's resources are the prefixed names of the resources a pipe uses.
    const boundaryResource = pipeRoleBoundary.node.defaultChild as iam.CfnManagedPolicy;
    const boundaryDoc = stack.resolve(boundaryResource.policyDocument) as { Statement: Array<{ Resource: unknown }> };
    for (const statement of boundaryDoc.Statement) {
      for (const resource of Array.isArray(statement.Resource) ? statement.Resource : [statement.Resource]) {
        acknowledge(boundaryResource, `AwsSolutions-IAM5[Resource::${flatten(resource)}]`,
          `The pipe execution roles read the prefixed source queues, put into the prefixed delivery streams and write the prefixed pipe log groups ('${prefix}' names generated by the service); the boundary limits them to that prefix in this account and the pipeline regions.`);
      }
    }

    this.pipeRoleBoundary = pipeRoleBoundary;
    this.pipeRoleBoundaryArn = boundaryArn;
    this.managementRole = managementRole;
    this.managementRoleArn = managementRole.roleArn;
    this.eventBusRole = eventBusRole;
    this.eventBusRoleArn = eventBusRole.roleArn;
    this.deliveryRole = deliveryRole;
    this.deliveryRoleArn = deliveryRole.roleArn;
  }

  /**
   * Adds a statement to the management role's policy (for what the service provisions beyond the built-in
   * assumptions, e.g. another name prefix it documents).
   */
  public addToManagementPolicy(statement: iam.PolicyStatement): void {
    this.managementPolicyDocument.addStatements(statement);
  }
}

class ImportedNotificationPipelineRoles extends Construct implements INotificationPipelineRoles {
  public readonly managementRoleArn: string;
  public readonly managementRole: iam.IRole;
  public readonly eventBusRoleArn?: string;
  public readonly eventBusRole?: iam.IRole;

  constructor(scope: Construct, id: string, attrs: NotificationPipelineRolesAttributes) {
    super(scope, id);
    const roleArn = /^arn:aws[a-z-]*:iam::\d{12}:role\/[\w+=,.@\/-]+$/;
    const check = (prop: string, value: string) => {
      if (!Token.isUnresolved(value) && !roleArn.test(value ?? '')) {
        throw invalid(this, prop, value, 'is not an IAM role ARN', 'use arn:aws:iam::<account>:role/<name>');
      }
    };
    check('managementRoleArn', attrs.managementRoleArn);
    this.managementRoleArn = attrs.managementRoleArn;
    this.managementRole = iam.Role.fromRoleArn(this, 'ManagementRole', attrs.managementRoleArn, { mutable: false });
    if (attrs.eventBusRoleArn !== undefined) {
      check('eventBusRoleArn', attrs.eventBusRoleArn);
      this.eventBusRoleArn = attrs.eventBusRoleArn;
      this.eventBusRole = iam.Role.fromRoleArn(this, 'EventBusRole', attrs.eventBusRoleArn, { mutable: false });
    }
  }
}
