/** The shapes of the subscription monitor's results (see `monitor.ts`). */

/** Where a subscription's health came from in a run. */
export type HealthSource = 'healthchecks' | 'transactions';

/** What one subscription's read gives, per payload and in total. */
export interface SubscriptionHealth {
  readonly subscriptionId: string;
  readonly label?: string;
  /** False when the records could not be read (then only `MonitorFailed` is published). */
  readonly ok: boolean;
  readonly error?: string;
  /** Where the health came from (the account's healthchecks listing, or the subscription's transactions). */
  readonly source: HealthSource;
  /** Service calls (transaction pages) made for this subscription alone (0 from the shared healthchecks listing). */
  readonly calls: number;
  readonly payloads: ReadonlyArray<PayloadHealth>;
  /** Transactions: records in ERROR. Healthchecks: payloads whose latest healthcheck is ERROR. */
  readonly errorRecords: number;
  /** Transactions: records in progress or retrying. Healthchecks: not known (undefined; not published). */
  readonly inProgressRecords?: number;
  /**
   * Transactions: hours since the end of the newest attribution date with a loaded record. Healthchecks: hours since
   * the newest OK healthcheck. The window (72) when none.
   */
  readonly freshnessHours: number;
}

/** One payload of a subscription. */
export interface PayloadHealth {
  readonly payload: string;
  readonly errorRecords: number;
  readonly inProgressRecords?: number;
  readonly freshnessHours: number;
}
