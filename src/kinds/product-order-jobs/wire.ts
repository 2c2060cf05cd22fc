/** `Custom::DpiProductOrderJobs`: order jobs submitted to a subscription's primary job. */
import type { ClosedState, KindDefinition, WireBase, WireSpec } from '../types';

/** Wire properties of `Custom::DpiProductOrderJobs`. Physical ID = the primary job ID. */
export interface ProductOrderJobsWire extends WireBase {
  readonly SubscriptionId: string;
  readonly OrderIds: string[];
  /** default 1000 */
  readonly StageId?: string;
}

/** Journal states: `active` (jobs submitted; the record lists them), and the closed states. */
export type ProductOrderJobsState = 'active' | ClosedState;

/** How the handler reads the properties. */
export const PRODUCT_ORDER_JOBS_FIELDS = {
  SubscriptionId: 'string',
  OrderIds: 'list',
  StageId: 'int?',
} as const satisfies WireSpec<ProductOrderJobsWire>;

export const ProductOrderJobsKind: KindDefinition<'Custom::DpiProductOrderJobs', ProductOrderJobsWire, ProductOrderJobsState> = {
  type: 'Custom::DpiProductOrderJobs',
  shortName: 'ProductOrderJobs',
  description: 'product order jobs',
  record: 'order jobs',
  fields: PRODUCT_ORDER_JOBS_FIELDS,
  attributes: ['PrimaryJobId', 'JobIds', 'BatchCount'],
  states: ['active', 'deleted', 'abandoned', 'released'],
  unconfirmedStates: [],
  undecidedStates: [],
  removalPolicy: false,
  polled: false,
  alwaysAdopted: false,
  readsParameters: false,
  fixOrder: 1,
};
