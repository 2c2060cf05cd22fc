/** `Custom::DpiSubscription`: a subscription to a product (the service's `/v2/sub` record). */
import type { ClosedState, KindDefinition, WireBase, WireSpec } from '../types';

/** Wire properties of `Custom::DpiSubscription`. Physical ID = the subscription ID. */
export interface SubscriptionWire extends WireBase {
  readonly ProductId: string;
  readonly StorageGroupId?: string;
  readonly RemoteIdentityId?: string;
  /** Flat string map, excluding `stage_ids` (see StageIds). */
  readonly ProductParameters?: Record<string, string>;
  /** Stage IDs (each >= 1000); the handler encodes them as the stringified JSON array `stage_ids`. */
  readonly StageIds?: string[];
  /** `active` | `paused` */
  readonly Status: string;
  readonly Name?: string;
  /** ISO 8601 datetime; default: the time of creation. */
  readonly DateStart?: string;
  /** `invalid` | `cancelled` */
  readonly OnDelete: string;
  /** An existing subscription to adopt instead of creating one. */
  readonly AdoptId?: string;
  /**
   * `retain` | `destroy`: what the handler does on Delete (the constructs always render the resource with
   * DeletionPolicy and UpdateReplacePolicy `Delete`, so CloudFormation always sends it). `retain` releases the
   * record (journal state `released`, no call that ends it); `destroy` ends it. Absent in templates of older
   * versions: `destroy`.
   */
  readonly RemovalPolicy?: string;
}

/**
 * Journal states: `recording` (a create is under way, its outcome not recorded), `adopting` (an adoption is under
 * way), `active`, and the closed states.
 */
export type SubscriptionState = 'recording' | 'adopting' | 'active' | ClosedState;

/** How the handler reads the properties (`Status` and `OnDelete` are lenient: older templates may lack them). */
export const SUBSCRIPTION_FIELDS = {
  ProductId: 'int',
  StorageGroupId: 'int?',
  RemoteIdentityId: 'string?',
  ProductParameters: 'map',
  StageIds: 'list',
  Status: 'string?',
  Name: 'string?',
  DateStart: 'string?',
  OnDelete: 'string?',
  AdoptId: 'string?',
  RemovalPolicy: 'string?',
} as const satisfies WireSpec<SubscriptionWire>;

export const SubscriptionKind: KindDefinition<'Custom::DpiSubscription', SubscriptionWire, SubscriptionState> = {
  type: 'Custom::DpiSubscription',
  shortName: 'Subscription',
  description: 'subscription',
  record: 'subscription',
  fields: SUBSCRIPTION_FIELDS,
  attributes: ['SubscriptionId', 'Status'],
  states: ['recording', 'adopting', 'active', 'deleted', 'abandoned', 'released'],
  unconfirmedStates: ['recording'],
  undecidedStates: ['recording', 'adopting'],
  removalPolicy: true,
  claim: 'sub',
  polled: false,
  alwaysAdopted: false,
  readsParameters: true,
  fixOrder: 4,
};
