import { CustomResource, RemovalPolicy, Token } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import { Construct, IConstruct } from 'constructs';
import { subscriptionMetric } from './construct-metrics';
import { SubscriptionKind, SubscriptionWire } from './wire';
import { IServiceConnection } from '../../connection/service-connection-ref';
import { invalid, isIsoDateTime, numStr, requireAdoptableId, requirePositiveInteger } from '../../connection/validation';

/**
 * Status of a subscription.
 */
export enum SubscriptionStatus {
  /** Running and collecting data. */
  ACTIVE = 'active',
  /** Temporarily stopped. */
  PAUSED = 'paused',
  /** Permanently stopped. */
  CANCELLED = 'cancelled',
  /** Marked as deleted; no longer shown in the user interface. */
  INVALID = 'invalid',
}

/**
 * A subscription of the service.
 */
export interface ISubscription extends IConstruct {
  /** The subscription ID. */
  readonly subscriptionId: string;
}

/**
 * Properties of a `Subscription`.
 */
export interface SubscriptionProps {
  /** Connection to the service. */
  readonly connection: IServiceConnection;

  /** The product to subscribe to (source or storage product). */
  readonly productId: number;

  /**
   * The destination (storage group) ID.
   *
   * @default - none
   */
  readonly storageGroupId?: number;

  /**
   * The remote identity that authorizes collection; required for products
   * that connect to a third-party source (checked at deploy time against the
   * product record). Copied into the stored parameters as `remote_identity_id`.
   *
   * @default - none (products without a remote identity)
   */
  readonly remoteIdentityId?: number;

  /**
   * Product parameters (meta keys such as `marketplace_id`, `profile_id`);
   * every value is a string. Do not put `stage_ids` here (use `stageIds`).
   * Required meta keys are checked at deploy time against the product record.
   *
   * @default - none
   */
  readonly productParameters?: Record<string, string>;

  /**
   * The stages (datasets) to collect; each an integer >= 1000 that exists
   * among the product's payloads (checked at deploy time).
   *
   * @default - all datasets of the product
   */
  readonly stageIds?: number[];

  /**
   * The desired status.
   *
   * @default SubscriptionStatus.ACTIVE
   */
  readonly status?: SubscriptionStatus;

  /**
   * Display name.
   *
   * @default - none
   */
  readonly name?: string;

  /**
   * Start of the subscription, ISO 8601 datetime (e.g. `2026-11-01T00:00:00Z`).
   *
   * @default - the time of creation
   */
  readonly dateStart?: string;

  /**
   * The status the subscription is set to when the resource is deleted
   * (a subscription is never deleted by the service).
   *
   * @default SubscriptionStatus.INVALID
   */
  readonly onDelete?: SubscriptionStatus;

  /**
   * What happens to the subscription when the resource leaves the stack (removed
   * from the app, the stack deleted, the resource replaced). `RETAIN` and
   * `DESTROY` are accepted.
   *
   * - `DESTROY` ends the subscription: its status becomes `onDelete`.
   * - `RETAIN` keeps the subscription as it is in the service and releases it:
   *   the resource is still rendered with DeletionPolicy `Delete`, so
   *   CloudFormation shows it deleted, while the handler only marks its
   *   lifecycle journal record `released` (for an adopted subscription it
   *   restores what the adoption changed where it can). Another stack may then
   *   adopt it, and `dpi orphans` never lists it.
   *
   * `DESTROY` on an adopted subscription (`existingSubscriptionId`) is an
   * explicit choice: the subscription that existed before the stack is then
   * ended when the stack is deleted, when the resource is replaced, and when
   * the deploy that adopted it rolls back.
   *
   * A Delete uses the properties of the last successful deploy: change the
   * removal policy in a deploy before the one that removes the resource.
   *
   * @default - RemovalPolicy.RETAIN when existingSubscriptionId is set, otherwise RemovalPolicy.DESTROY
   */
  readonly removalPolicy?: RemovalPolicy;

  /**
   * The ID of an existing subscription to adopt instead of creating one.
   *
   * Create then makes no new subscription: it checks that this one exists and
   * is not `invalid` or `cancelled`, claims it for this resource (adopting a
   * subscription another resource manages is refused, naming it) and
   * reconciles it to the declared properties as an update would. Product
   * parameters and stage IDs you do not declare keep the values the service
   * stores. After that, update and delete work as for a created subscription;
   * `removalPolicy` then defaults to `RETAIN` (a delete releases the
   * subscription and leaves it running). `dpi import` writes it.
   *
   * @default - a new subscription is created
   */
  readonly existingSubscriptionId?: number;
}

class ImportedSubscription extends Construct implements ISubscription {
  public readonly subscriptionId: string;
  constructor(scope: Construct, id: string, subscriptionId: string) {
    super(scope, id);
    this.subscriptionId = subscriptionId;
  }
}

/**
 * A subscription to a product: ties it to a destination and (for source
 * products) to a remote identity.
 *
 * Create validates against the product record (required meta keys, remote
 * identity, stage IDs) and POSTs the subscription; update PATCHes only what
 * changed; delete sets the `onDelete` status (`invalid` by default), unless
 * the removal policy is `RETAIN` (the default for an adopted subscription).
 *
 * @example
 * declare const connection: ServiceConnection;
 *
 * const orders = new Subscription(this, 'Orders', {
 *   connection,
 *   productId: 3001,
 *   storageGroupId: 501,
 *   remoteIdentityId: 362,
 *   productParameters: { marketplace_id: 'ATVPDKIKX0DER' },
 *   stageIds: [1001, 1002],
 *   name: 'orders-us',
 * });
 */
export class Subscription extends Construct implements ISubscription {
  /** Reference an existing subscription by its ID. */
  public static fromSubscriptionId(scope: Construct, id: string, subscriptionId: string): ISubscription {
    if (!Token.isUnresolved(subscriptionId) && !/^[1-9]\d*$/.test(String(subscriptionId))) {
      throw new Error(`${scope.node.path}/${id}: subscriptionId '${String(subscriptionId)}' is not a subscription ID; use the numeric ID of the subscription`);
    }
    return new ImportedSubscription(scope, id, subscriptionId);
  }

  /** The subscription ID. */
  public readonly subscriptionId: string;
  /**
   * The declared status (`ACTIVE` or `PAUSED`): what every deploy sets the subscription to (the handler returns it as
   * the resource's `Status` attribute).
   */
  public readonly status: SubscriptionStatus;

  constructor(scope: Construct, id: string, props: SubscriptionProps) {
    super(scope, id);

    if (props.productId === undefined) {
      throw invalid(this, 'productId', props.productId, 'is missing', 'give the product ID (see `dpi products`)');
    }
    requirePositiveInteger(this, 'productId', props.productId);
    if (props.productId === 107 || props.productId === 86) {
      throw invalid(this, 'productId', props.productId, 'is a notification pipeline\'s product',
        `declare a ${props.productId === 107 ? 'NotificationPipeline' : 'LegacyNotificationPipeline'} instead`);
    }
    requirePositiveInteger(this, 'storageGroupId', props.storageGroupId);
    requirePositiveInteger(this, 'remoteIdentityId', props.remoteIdentityId);
    requireAdoptableId(this, 'existingSubscriptionId', props.existingSubscriptionId);
    // An adopted subscription existed before the stack: RETAIN by default.
    const removalPolicy = props.removalPolicy ?? (props.existingSubscriptionId !== undefined ? RemovalPolicy.RETAIN : RemovalPolicy.DESTROY);
    if (removalPolicy !== RemovalPolicy.RETAIN && removalPolicy !== RemovalPolicy.DESTROY) {
      throw invalid(this, 'removalPolicy', removalPolicy, 'is not accepted',
        'use RemovalPolicy.RETAIN (the subscription is kept and released) or RemovalPolicy.DESTROY (it is ended)');
    }

    const status = props.status ?? SubscriptionStatus.ACTIVE;
    if (status !== SubscriptionStatus.ACTIVE && status !== SubscriptionStatus.PAUSED) {
      throw invalid(this, 'status', status, 'is not accepted', 'use SubscriptionStatus.ACTIVE or SubscriptionStatus.PAUSED (removal uses onDelete)');
    }
    const onDelete = props.onDelete ?? SubscriptionStatus.INVALID;
    if (onDelete !== SubscriptionStatus.INVALID && onDelete !== SubscriptionStatus.CANCELLED) {
      throw invalid(this, 'onDelete', onDelete, 'is not accepted', 'use SubscriptionStatus.INVALID or SubscriptionStatus.CANCELLED');
    }

    const stageIds = props.stageIds;
    if (stageIds !== undefined && !Token.isUnresolved(stageIds)) {
      const bad = stageIds.filter((s) => !Token.isUnresolved(s) && (typeof s !== 'number' || !Number.isInteger(s) || s < 1000));
      if (bad.length > 0) {
        throw invalid(this, 'stageIds', bad, 'contains values that are not named stage IDs', 'use integers >= 1000 (see `dpi stages <product>`)');
      }
      const dup = stageIds.filter((s, i) => stageIds.indexOf(s) !== i);
      if (dup.length > 0) {
        throw invalid(this, 'stageIds', [...new Set(dup)], 'contains duplicates', 'list each stage ID once');
      }
      if (stageIds.length === 0) {
        throw invalid(this, 'stageIds', '', 'is empty', 'omit stageIds to collect all datasets, or list the stage IDs');
      }
    }

    const params = props.productParameters;
    if (params !== undefined && !Token.isUnresolved(params)) {
      for (const [key, value] of Object.entries(params)) {
        if (typeof value !== 'string') {
          throw invalid(this, `productParameters.${key}`, value, `is a ${typeof value}, not a string`, 'give every product parameter as a string');
        }
      }
      if ('stage_ids' in params) {
        throw invalid(this, 'productParameters.stage_ids', params.stage_ids, 'is not accepted here', 'give the stages with the stageIds property (numbers >= 1000)');
      }
      const ri = params.remote_identity_id;
      if (ri !== undefined && props.remoteIdentityId !== undefined && !Token.isUnresolved(ri)
        && !Token.isUnresolved(props.remoteIdentityId) && ri !== String(props.remoteIdentityId)) {
        throw invalid(this, 'productParameters.remote_identity_id', ri, `conflicts with remoteIdentityId ${props.remoteIdentityId}`, 'drop remote_identity_id from productParameters (it is copied from remoteIdentityId)');
      }
    }
    if (props.dateStart !== undefined && !Token.isUnresolved(props.dateStart) && !isIsoDateTime(props.dateStart)) {
      throw invalid(this, 'dateStart', props.dateStart, 'is not an ISO 8601 datetime', 'use e.g. 2026-11-01T00:00:00Z');
    }

    const binding = props.connection._bind(this);
    const properties: Omit<SubscriptionWire, 'ServiceToken'> = {
      Connection: binding.connection,
      ProductId: numStr(props.productId),
      ...(props.storageGroupId !== undefined ? { StorageGroupId: numStr(props.storageGroupId) } : {}),
      ...(props.remoteIdentityId !== undefined ? { RemoteIdentityId: numStr(props.remoteIdentityId) } : {}),
      ...(params !== undefined ? { ProductParameters: { ...params } } : {}),
      ...(stageIds !== undefined ? { StageIds: stageIds.map(numStr) } : {}),
      Status: status,
      ...(props.name !== undefined ? { Name: props.name } : {}),
      ...(props.dateStart !== undefined ? { DateStart: props.dateStart } : {}),
      OnDelete: onDelete,
      ...(props.existingSubscriptionId !== undefined ? { AdoptId: numStr(props.existingSubscriptionId) } : {}),
      RemovalPolicy: removalPolicy === RemovalPolicy.RETAIN ? 'retain' : 'destroy',
    };
    const resource = new CustomResource(this, 'Resource', {
      serviceToken: binding.serviceToken,
      resourceType: SubscriptionKind.type,
      properties: { ...properties },
      // Always Delete: CloudFormation sends every Delete and the handler applies `RemovalPolicy` (RETAIN releases).
      removalPolicy: RemovalPolicy.DESTROY,
    });
    this.subscriptionId = resource.getAttString('SubscriptionId');
    this.status = status;
  }

  /**
   * Records in ERROR (transactions), or payloads whose latest healthcheck is ERROR (healthchecks) (maximum over 15
   * minutes). Published by a `SubscriptionMonitor` that watches this subscription (`monitor.addSubscription()`).
   */
  public metricErrorRecords(props: cloudwatch.MetricOptions = {}): cloudwatch.Metric {
    return subscriptionMetric('ErrorRecords', this.subscriptionId, props);
  }

  /** Records still in progress or retrying (transactions only; maximum over 15 minutes). Published by a `SubscriptionMonitor`. */
  public metricInProgressRecords(props: cloudwatch.MetricOptions = {}): cloudwatch.Metric {
    return subscriptionMetric('InProgressRecords', this.subscriptionId, props);
  }

  /**
   * Hours since the end of the newest loaded attribution date (transactions), or since the newest OK healthcheck
   * (healthchecks); 72, the transactions' window, when none. Published by a `SubscriptionMonitor`.
   */
  public metricFreshnessHours(props: cloudwatch.MetricOptions = {}): cloudwatch.Metric {
    return subscriptionMetric('FreshnessHours', this.subscriptionId, props);
  }

  /** 1 when the monitor could not read the subscription's transactions in a run. Published by a `SubscriptionMonitor`. */
  public metricMonitorFailed(props: cloudwatch.MetricOptions = {}): cloudwatch.Metric {
    return subscriptionMetric('MonitorFailed', this.subscriptionId, props);
  }
}
