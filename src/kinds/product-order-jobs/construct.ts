import { CustomResource, RemovalPolicy, Token } from 'aws-cdk-lib';
import { Construct } from 'constructs';
import { ProductOrderJobsKind, ProductOrderJobsWire } from './wire';
import { IServiceConnection } from '../../connection/service-connection-ref';
import { invalid, numStr } from '../../connection/validation';
import { ISubscription } from '../subscription/construct';

/** Order IDs per product job request (the service's limit). */
const ORDER_IDS_PER_BATCH = 100;

const ORDER_ID_RE = /^\d{3}-\d{7}-\d{7}$/;

/**
 * Properties of `ProductOrderJobs`.
 */
export interface ProductOrderJobsProps {
  /** Connection to the service. */
  readonly connection: IServiceConnection;

  /** The subscription whose primary job receives the secondary jobs. */
  readonly subscription: ISubscription;

  /**
   * Marketplace order IDs (`123-1234567-1234567`), any number; sent in
   * batches of at most 100, each batch scheduled 15 minutes after the previous.
   */
  readonly orderIds: string[];

  /**
   * The stage the jobs process.
   *
   * @default 1000
   */
  readonly stageId?: number;
}

/**
 * Secondary (product) jobs under the primary job of a subscription that
 * process the given order IDs.
 *
 * Create POSTs one job per batch of 100 order IDs. A change of the order IDs
 * or stage creates a new set of jobs (new physical ID). Delete leaves the
 * created jobs in place: the service offers no way to delete a job.
 *
 * @example
 * declare const connection: ServiceConnection;
 * declare const orders: Subscription;
 *
 * new ProductOrderJobs(this, 'OrderReprocessing', {
 *   connection,
 *   subscription: orders,
 *   orderIds: ['123-1234567-1234567', '123-1234567-7654321'],
 *   stageId: 1001,
 * });
 */
export class ProductOrderJobs extends Construct {
  /** The primary job the secondary jobs were created under (the physical ID). */
  public readonly primaryJobId: string;
  /** Comma-separated IDs of the created secondary jobs. */
  public readonly jobIds: string;
  /** Number of batches (jobs): the order IDs divided into groups of at most 100. */
  public readonly batchCount: number;

  constructor(scope: Construct, id: string, props: ProductOrderJobsProps) {
    super(scope, id);

    const orderIds = props.orderIds;
    if (orderIds === undefined || (!Token.isUnresolved(orderIds) && orderIds.length === 0)) {
      throw invalid(this, 'orderIds', '', 'is empty', 'give at least one order ID (123-1234567-1234567)');
    }
    if (!Token.isUnresolved(orderIds)) {
      const bad = orderIds.filter((o) => !Token.isUnresolved(o) && (typeof o !== 'string' || !ORDER_ID_RE.test(o)));
      if (bad.length > 0) {
        throw invalid(this, 'orderIds', bad, 'are not order IDs', 'use three digits, hyphen, seven digits, hyphen, seven digits (123-1234567-1234567)');
      }
      const dup = orderIds.filter((o, i) => orderIds.indexOf(o) !== i);
      if (dup.length > 0) {
        throw invalid(this, 'orderIds', [...new Set(dup)], 'contains duplicates', 'list each order ID once');
      }
    }
    const stageId = props.stageId ?? 1000;
    if (!Token.isUnresolved(stageId) && (!Number.isInteger(stageId) || stageId < 1000)) {
      throw invalid(this, 'stageId', stageId, 'is not a named stage ID', 'use an integer >= 1000 (default 1000)');
    }

    const binding = props.connection._bind(this);
    const properties: Omit<ProductOrderJobsWire, 'ServiceToken'> = {
      Connection: binding.connection,
      SubscriptionId: props.subscription.subscriptionId,
      OrderIds: [...orderIds],
      StageId: numStr(stageId),
    };
    const resource = new CustomResource(this, 'Resource', {
      serviceToken: binding.serviceToken,
      resourceType: ProductOrderJobsKind.type,
      properties: { ...properties },
      removalPolicy: RemovalPolicy.DESTROY,
    });
    resource.node.addDependency(props.subscription);
    this.primaryJobId = resource.getAttString('PrimaryJobId');
    this.jobIds = resource.getAttString('JobIds');
    this.batchCount = Token.isUnresolved(orderIds) ? 0 : Math.ceil(orderIds.length / ORDER_IDS_PER_BATCH);
  }
}
