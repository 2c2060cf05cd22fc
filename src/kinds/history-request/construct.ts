import { CustomResource, Duration, RemovalPolicy, Token } from 'aws-cdk-lib';
import { Construct } from 'constructs';
import { HistoryRequestKind, HistoryRequestWire } from './wire';
import { IServiceConnection } from '../../connection/service-connection-ref';
import { invalid, isCalendarDate, isDateTime, numStr, requireAdoptableId, requirePositiveInteger } from '../../connection/validation';
import { ISubscription } from '../subscription/construct';

/**
 * The longest a deploy may wait for a history request. CloudFormation waits at most one hour for a custom resource
 * (its ServiceTimeout, whose default is also its maximum), whatever the waiting provider's own total timeout. Within
 * that hour come: the onEvent invocation, which may wait for a free slot under the ceiling for up to its Lambda
 * timeout (10 minutes); then, with `waitForCompletion`, `timeout` from the moment onEvent returned; then up to one
 * query interval (30 s) before isComplete notices; plus the provider framework's own start-up. 45 minutes leaves
 * room for all of it, so the handler's own timeout message, not CloudFormation's, is what a deploy reports.
 */
const MAX_TIMEOUT = Duration.minutes(45);

/**
 * Properties of a `HistoryRequest`.
 */
export interface HistoryRequestProps {
  /** Connection to the service. */
  readonly connection: IServiceConnection;

  /** The subscription to backfill. */
  readonly subscription: ISubscription;

  /**
   * First day of the range, `YYYY-MM-DD` (with `endDate`; not with `dates`).
   *
   * @default - none (use `dates`)
   */
  readonly startDate?: string;

  /**
   * Last day of the range, `YYYY-MM-DD`, not before `startDate`.
   *
   * @default - none (use `dates`)
   */
  readonly endDate?: string;

  /**
   * Specific days, `YYYY-MM-DD` (instead of `startDate` + `endDate`).
   *
   * @default - none (use `startDate` + `endDate`)
   */
  readonly dates?: string[];

  /**
   * Limit the backfill to one stage (>= 1000).
   *
   * @default - all stages
   */
  readonly stageId?: number;

  /**
   * Product within the subscription.
   *
   * @default - the subscription's product
   */
  readonly productId?: number;

  /**
   * Schedule processing to begin at this time, `YYYY-MM-DD HH:MM:SS`.
   *
   * @default - immediately
   */
  readonly startTime?: string;

  /**
   * Whether the deploy waits until the request is completed (or failed).
   *
   * @default false
   */
  readonly waitForCompletion?: boolean;

  /**
   * How long the deploy may wait (for a free slot under the service's
   * active-request ceiling, and for completion when asked); between 1 minute
   * and 45 minutes.
   *
   * The limit follows from CloudFormation, which waits at most one hour for a
   * custom resource: the wait for a free slot (up to 10 minutes, in the first
   * call), the wait for completion (`timeout`), the 30 s polling interval and
   * the provider's own start-up must all fit in that hour for the deploy to
   * report the handler's message instead of a CloudFormation timeout. A longer
   * timeout is rejected at synth time; for a backfill that takes longer, set
   * `waitForCompletion` false (the deploy then ends once the request is made).
   *
   * @default Duration.minutes(30)
   */
  readonly timeout?: Duration;

  /**
   * The ID of an existing history transaction (a request made outside the
   * stack) to adopt instead of requesting one.
   *
   * Create then makes no request: it checks that the transaction exists
   * (`GET` of it) and is not `cancelled` or `failed`, claims it for this
   * resource (refused, naming the owner, when another resource manages it)
   * and records it; the declared dates describe it (where the service's read
   * shows other dates or another subscription, the Create fails). Delete
   * cancels it while pending or processing, as for a requested one.
   *
   * @default - a new history request is created
   */
  readonly existingHistoryTransactionId?: string;
}

/**
 * A history (backfill) request for a subscription.
 *
 * Validated at deploy time against the product's `history_info` (days, maximum
 * request age); waits for a free slot under the service's ceiling. Deleting
 * the resource cancels the request if it is still pending or processing.
 * Changing the dates or stage creates a new request (new physical ID).
 *
 * @example
 * declare const connection: ServiceConnection;
 * declare const orders: Subscription;
 *
 * new HistoryRequest(this, 'OrdersBackfill', {
 *   connection,
 *   subscription: orders,
 *   startDate: '2026-11-15',
 *   endDate: '2026-11-17',
 *   stageId: 1001,
 * });
 */
export class HistoryRequest extends Construct {
  /** The history transaction ID. */
  public readonly historyTransactionId: string;
  /**
   * The transaction's status after the deploy, a deploy-time value (a token at synth): `pending`, `processing`,
   * `completed`, `failed` or `cancelled`. A string, not an enum: the service reports it when the deploy runs.
   */
  public readonly status: string;

  constructor(scope: Construct, id: string, props: HistoryRequestProps) {
    super(scope, id);

    const range = props.startDate !== undefined || props.endDate !== undefined;
    const dates = props.dates;
    if (range && dates !== undefined) {
      throw invalid(this, 'dates', dates, 'is given together with startDate/endDate', 'give either startDate + endDate or dates, not both');
    }
    if (!range && dates === undefined) {
      throw invalid(this, 'startDate', '', 'is missing (and so is dates)', 'give either startDate + endDate or dates');
    }
    if (range) {
      if (props.startDate === undefined) {
        throw invalid(this, 'startDate', '', 'is missing', 'give startDate with endDate (YYYY-MM-DD)');
      }
      if (props.endDate === undefined) {
        throw invalid(this, 'endDate', '', 'is missing', 'give endDate with startDate (YYYY-MM-DD)');
      }
      this.checkDate('startDate', props.startDate);
      this.checkDate('endDate', props.endDate);
      if (!Token.isUnresolved(props.startDate) && !Token.isUnresolved(props.endDate) && props.startDate > props.endDate) {
        throw invalid(this, 'startDate', props.startDate, `is after endDate '${props.endDate}'`, 'give a start date on or before the end date');
      }
    }
    if (dates !== undefined && !Token.isUnresolved(dates)) {
      if (dates.length === 0) {
        throw invalid(this, 'dates', '', 'is empty', 'list at least one day (YYYY-MM-DD)');
      }
      dates.forEach((d) => this.checkDate('dates', d));
      const dup = dates.filter((d, i) => dates.indexOf(d) !== i);
      if (dup.length > 0) {
        throw invalid(this, 'dates', [...new Set(dup)], 'contains duplicates', 'list each day once');
      }
    }
    if (props.stageId !== undefined && !Token.isUnresolved(props.stageId)
      && (!Number.isInteger(props.stageId) || props.stageId < 1000)) {
      throw invalid(this, 'stageId', props.stageId, 'is not a named stage ID', 'use an integer >= 1000 or omit it for all stages');
    }
    requirePositiveInteger(this, 'productId', props.productId);
    requireAdoptableId(this, 'existingHistoryTransactionId', props.existingHistoryTransactionId, true);
    if (props.startTime !== undefined && !Token.isUnresolved(props.startTime) && !isDateTime(props.startTime)) {
      throw invalid(this, 'startTime', props.startTime, 'is not a date and time', 'use YYYY-MM-DD HH:MM:SS');
    }
    const timeout = props.timeout ?? Duration.minutes(30);
    if (!timeout.isUnresolved()) {
      const seconds = timeout.toSeconds();
      if (seconds > MAX_TIMEOUT.toSeconds()) {
        throw invalid(this, 'timeout', timeout.toHumanString(), `is out of range (${seconds} s; at most ${MAX_TIMEOUT.toSeconds()} s)`,
          `use at most ${MAX_TIMEOUT.toHumanString()}: CloudFormation waits at most one hour for a custom resource, and the wait for a `
          + 'free slot (up to 10 minutes), the 30 s polling interval and the provider\'s start-up share that hour; for a longer backfill, '
          + 'set waitForCompletion false (the deploy then ends once the request is made)');
      }
      if (seconds < 60) {
        throw invalid(this, 'timeout', timeout.toHumanString(), `is out of range (${seconds} s; at least 60 s)`, 'use at least 1 minute');
      }
    }

    const binding = props.connection._bind(this, { wait: true });
    const properties: Omit<HistoryRequestWire, 'ServiceToken'> = {
      Connection: binding.connection,
      SubscriptionId: props.subscription.subscriptionId,
      ...(props.startDate !== undefined ? { StartDate: props.startDate } : {}),
      ...(props.endDate !== undefined ? { EndDate: props.endDate } : {}),
      ...(dates !== undefined ? { Dates: [...dates] } : {}),
      ...(props.stageId !== undefined ? { StageId: numStr(props.stageId) } : {}),
      ...(props.productId !== undefined ? { ProductId: numStr(props.productId) } : {}),
      ...(props.startTime !== undefined ? { StartTime: props.startTime } : {}),
      WaitForCompletion: props.waitForCompletion ? 'true' : 'false',
      TimeoutSeconds: numStr(timeout.toSeconds()),
      ...(props.existingHistoryTransactionId !== undefined ? { AdoptId: props.existingHistoryTransactionId } : {}),
    };
    const resource = new CustomResource(this, 'Resource', {
      serviceToken: binding.serviceToken,
      resourceType: HistoryRequestKind.type,
      properties: { ...properties },
      removalPolicy: RemovalPolicy.DESTROY,
    });
    resource.node.addDependency(props.subscription);
    this.historyTransactionId = resource.getAttString('HistoryTransactionId');
    this.status = resource.getAttString('Status');
  }

  private checkDate(prop: string, value: string): void {
    if (Token.isUnresolved(value)) {
      return;
    }
    if (typeof value !== 'string' || !isCalendarDate(value)) {
      throw invalid(this, prop, value, 'is not a calendar date', 'use YYYY-MM-DD (a real date)');
    }
  }
}
