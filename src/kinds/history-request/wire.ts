/** `Custom::DpiHistoryRequest`: a history (backfill) request of a subscription. */
import type { ClosedState, KindDefinition, WireBase, WireSpec } from '../types';

/** Wire properties of `Custom::DpiHistoryRequest`. Physical ID = the history transaction ID. */
export interface HistoryRequestWire extends WireBase {
  readonly SubscriptionId: string;
  readonly StartDate?: string;
  readonly EndDate?: string;
  readonly Dates?: string[];
  readonly StageId?: string;
  readonly ProductId?: string;
  /** `YYYY-MM-DD HH:MM:SS` */
  readonly StartTime?: string;
  /** `true` | `false` */
  readonly WaitForCompletion: string;
  /** Seconds the deploy may wait (for the ceiling, and for completion when asked). */
  readonly TimeoutSeconds: string;
  /** An existing history transaction to adopt instead of requesting one. */
  readonly AdoptId?: string;
}

/** Journal states: `creating` (the request call is under way or got no answer), `active`, and the closed states. */
export type HistoryRequestState = 'creating' | 'active' | ClosedState;

/** How the handler reads the properties (`TimeoutSeconds` is lenient: default 3600). */
export const HISTORY_REQUEST_FIELDS = {
  SubscriptionId: 'string',
  StartDate: 'string?',
  EndDate: 'string?',
  Dates: 'list',
  StageId: 'int?',
  ProductId: 'int?',
  StartTime: 'string?',
  WaitForCompletion: 'bool',
  TimeoutSeconds: 'int?',
  AdoptId: 'string?',
} as const satisfies WireSpec<HistoryRequestWire>;

export const HistoryRequestKind: KindDefinition<'Custom::DpiHistoryRequest', HistoryRequestWire, HistoryRequestState> = {
  type: 'Custom::DpiHistoryRequest',
  shortName: 'HistoryRequest',
  description: 'history request',
  record: 'history request',
  fields: HISTORY_REQUEST_FIELDS,
  attributes: ['HistoryTransactionId', 'Status', 'StartedAt'],
  states: ['creating', 'active', 'deleted', 'abandoned', 'released'],
  unconfirmedStates: ['creating'],
  undecidedStates: [],
  removalPolicy: false,
  claim: 'history',
  polled: true,
  alwaysAdopted: false,
  readsParameters: false,
  fixOrder: 0,
};
