import { Annotations, Stack, Token } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import { Construct, IConstruct } from 'constructs';
import {
  deliveryStatements, managementStatements, pipelineRegions, PARTNER_EVENT_BUS_PREFIX, PIPE_ROLE_BOUNDARY_SUFFIX,
  PIPE_ROLE_PATH_SUFFIX, RoleNames, SETUP_CHECK_OBJECT,
} from './notification-pipeline-roles-policy';
import { acknowledge, acknowledgeCompliance, acknowledgeWildcards, flatten } from '../connection/nag';
import { invalid } from '../connection/validation';

/** The fixed name of the delivery role that the service expects in the customer account. */
const DELIVERY_ROLE_NAME = 'service-spapi-firehose-role';
/** ID of the synth-time warning of a trust without `sts:ExternalId` (acknowledge it with `Annotations.acknowledgeWarning`). */
const NO_EXTERNAL_ID_WARNING = 'data-pipeline-integration-cdk:roles-without-external-id';

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
   * when the service gave you one for your account. Without it the trust is the service's whole account: another
   * customer of the service who learns this role's ARN can have the service assume it (confused deputy); the
   * construct then adds a synth-time warning.
   *
   * @default - no `sts:ExternalId` condition (trust limited to the service's account; synth-time warning)
   */
  readonly externalId?: string;

  /**
   * ARN of the service's own IAM role that assumes the management role: the trust then admits only that principal
   * of the service's account (`aws:PrincipalArn` condition). Must be a role of `serviceAccountId`.
   *
   * Set it only when the service names its role (its public documentation names none).
   *
   * @default - any principal of the service's account
   */
  readonly serviceRoleArn?: string;

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
   * with this prefix under `pipeRolePath`, and pass them only to EventBridge Pipes.
   *
   * @default 'spapi-'
   */
  readonly resourceNamePrefix?: string;

  /**
   * IAM path of the pipe execution roles that the service creates: the management role can create, change and
   * pass only roles under this path (with the name prefix), so no other role of the account with the prefix can
   * be passed to a pipe.
   *
   * @default - `/<resourceNamePrefix>pipe-roles/` (e.g. `/spapi-pipe-roles/`)
   */
  readonly pipeRolePath?: string;

  /**
   * Name prefix of the shared object-storage bucket into which the delivery
   * streams write.
   *
   * @default - the resourceNamePrefix
   */
  readonly sharedBucketNamePrefix?: string;

  /**
   * Regions in which pipelines that use these roles are deployed; the
   * policies are limited to resources in these regions. Each must be a
   * deployment region the service accepts (us-east-1, us-east-2, us-west-1,
   * us-west-2, af-south-1, ap-east-1): another is a synth error, a token is
   * checked at deploy time by a CloudFormation rule.
   *
   * @default - the stack's region (checked the same way)
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
 *   the service's account, with an `sts:ExternalId` condition only when
 *   `externalId` is given (without it, a synth-time warning: any principal of
 *   the service's account may assume the role, on behalf of any of the
 *   service's customers) and an `aws:PrincipalArn` condition when
 *   `serviceRoleArn` is given; a least-privilege inline policy for the
 *   resources the service provisions (conditions listed in docs/constructs.md);
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
   * boundary attached (and only under `pipeRolePath`), and can neither remove a
   * boundary from a role nor change this policy. It allows only what a pipe execution role needs (read and delete
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
    if (props.serviceRoleArn !== undefined && !Token.isUnresolved(props.serviceRoleArn)) {
      const match = /^arn:aws[a-z-]*:iam::(\d{12}):role\/[\w+=,.@\/-]+$/.exec(props.serviceRoleArn ?? '');
      if (!match) {
        throw invalid(this, 'serviceRoleArn', props.serviceRoleArn, 'is not an IAM role ARN', 'use arn:aws:iam::<serviceAccountId>:role/<name>, as the service gives it');
      }
      if (!Token.isUnresolved(props.serviceAccountId) && match[1] !== props.serviceAccountId) {
        throw invalid(this, 'serviceRoleArn', props.serviceRoleArn, `is not a role of the service's account ${props.serviceAccountId}`,
          'use the role ARN the service gives for its account (serviceAccountId)');
      }
    }
    const prefix = props.resourceNamePrefix ?? 'spapi-';
    if (!/^[a-zA-Z0-9][a-zA-Z0-9_.-]{0,31}$/.test(prefix)) {
      throw invalid(this, 'resourceNamePrefix', prefix, 'is not accepted', 'use 1 to 32 letters, digits, dots, hyphens or underscores (no wildcard)');
    }
    const bucketPrefix = props.sharedBucketNamePrefix ?? prefix;
    if (!/^[a-z0-9][a-z0-9.-]{0,39}$/.test(bucketPrefix)) {
      throw invalid(this, 'sharedBucketNamePrefix', bucketPrefix, 'is not accepted', 'use 1 to 40 lower-case letters, digits, dots or hyphens (no wildcard)');
    }
    const pipeRolePath = props.pipeRolePath ?? `/${prefix}${PIPE_ROLE_PATH_SUFFIX}/`;
    if (!/^\/([a-zA-Z0-9_.+=,@-]{1,64}\/){1,4}$/.test(pipeRolePath)) {
      throw invalid(this, 'pipeRolePath', pipeRolePath, 'is not accepted',
        'use an IAM path of 1 to 4 segments of letters, digits and _.+=,@- that starts and ends with / (not /, no wildcard)');
    }

    const stack = Stack.of(this);
    const partition = stack.partition;
    const account = stack.account;
    const regions = pipelineRegions(this, props.regions);
    const boundaryName = `${prefix}${PIPE_ROLE_BOUNDARY_SUFFIX}`;
    const names: RoleNames = {
      partition,
      account,
      prefix,
      bucketArn: `arn:${partition}:s3:::${bucketPrefix}*`,
      pipeRoleArn: `arn:${partition}:iam::${account}:role${pipeRolePath}${prefix}*`,
      boundaryArn: `arn:${partition}:iam::${account}:policy/${boundaryName}`,
      arns: (service: string, resource: string): string[] =>
        regions.map((region) => `arn:${partition}:${service}:${region}:${account}:${resource}`),
    };
    const arns = names.arns;
    const boundaryArn = names.boundaryArn;
    // Only on behalf of this account's resources (confused-deputy guard).
    const servicePrincipal = (service: string): iam.ServicePrincipal =>
      new iam.ServicePrincipal(service, { conditions: { StringEquals: { 'aws:SourceAccount': account } } });

    // (0) Permissions boundary of the pipe execution roles that the service creates: exactly what a pipe needs.
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

    // (3) Delivery role: the delivery stream writes into the shared bucket (of this account only).
    const deliveryRole = new iam.Role(this, 'DeliveryRole', {
      roleName: DELIVERY_ROLE_NAME,
      description: 'Delivery streams of the data pipeline integration service write notifications to the shared bucket',
      assumedBy: servicePrincipal('firehose.amazonaws.com'),
      inlinePolicies: { Delivery: new iam.PolicyDocument({ statements: deliveryStatements(names) }) },
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
    this.managementPolicyDocument = props.managementPolicy
      ?? new iam.PolicyDocument({ statements: managementStatements(names, deliveryRole.roleArn, eventBusRole.roleArn) });
    const trustConditions: Record<string, Record<string, string>> = {};
    if (props.externalId !== undefined) {
      trustConditions.StringEquals = { 'sts:ExternalId': props.externalId };
    }
    if (props.serviceRoleArn !== undefined) {
      trustConditions.ArnEquals = { 'aws:PrincipalArn': props.serviceRoleArn };
    }
    const serviceAccount = new iam.AccountPrincipal(props.serviceAccountId);
    const managementRole = new iam.Role(this, 'ManagementRole', {
      description: 'Assumed by the data pipeline integration service to provision notification pipelines',
      assumedBy: Object.keys(trustConditions).length > 0 ? serviceAccount.withConditions(trustConditions) : serviceAccount,
      inlinePolicies: { Provisioning: this.managementPolicyDocument },
    });
    if (props.externalId === undefined) {
      Annotations.of(this).addWarningV2(NO_EXTERNAL_ID_WARNING, 'The management role trusts the service\'s whole account '
        + `${props.serviceAccountId} without an sts:ExternalId condition: another customer of the service who learns this role's ARN `
        + 'can have the service assume it and provision in this account (confused deputy). Set externalId when the service gives you '
        + 'one (the unified create body has no field for it and the vendor documentation names none); see the README, "Security", and docs/security.md.');
    }

    // The compliance packs prefer managed policies: these roles are the service's, in this account only.
    for (const role of [deliveryRole, eventBusRole, managementRole]) {
      acknowledgeCompliance(role, 'IAMNoInlinePolicy', 'The policy belongs to this role alone (the service assumes it); an inline policy cannot be '
        + 'attached to another principal, which a managed policy could. The management policy can be replaced or extended '
        + '(managementPolicy, addToManagementPolicy).');
    }

    // Names of the provisioned resources are generated by the service under the
    // prefix, so the policies end in `<prefix>*`; nothing else is a wildcard.
    const esc = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    const bus = esc(PARTNER_EVENT_BUS_PREFIX);
    acknowledgeWildcards(this, [{
      pattern: new RegExp(`^arn:[^*]+:(${esc(prefix)}|rule/${bus}\\*/${esc(prefix)}|deliverystream/${esc(prefix)}|pipe/${esc(prefix)}|role${esc(pipeRolePath)}${esc(prefix)}|log-group:(/aws/kinesisfirehose/|/aws/vendedlogs/pipes/)?${esc(prefix)})\\*$`),
      reason: `The service names the resources it provisions (including the pipe execution roles under ${pipeRolePath}) with the prefix '${prefix}' at run time; access is limited to that prefix in this account and the pipeline regions (rules: on the partner event bus only).`,
    }, {
      pattern: new RegExp(`^arn:[^*]+:s3:::${esc(bucketPrefix)}\\*(/\\*|/\\*/${esc(SETUP_CHECK_OBJECT)})?$`),
      reason: `The shared bucket is created by the service with the name prefix '${bucketPrefix}'; access is limited to buckets with that prefix owned by this account (s3:ResourceAccount; the management role writes only the '${SETUP_CHECK_OBJECT}' objects).`,
    }, {
      pattern: new RegExp(`^arn:[^*]+:events:[^*]+:event-bus/${bus}\\*$`),
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
