/**
 * Where `SubscriptionMonitor` reads a subscription's health from. The two sources measure different things: choose
 * one knowingly (docs/constructs.md, "SubscriptionMonitor", compares them metric by metric).
 */
export enum MonitorSource {
  /**
   * Every transaction record of each monitored subscription in the service's three-day window, classified exactly as
   * `dpi status --subscription` does. `ErrorRecords` counts the records in ERROR (an ERROR stays until its record ages
   * out or its transaction is retried successfully), `InProgressRecords` the records in progress or retrying,
   * `FreshnessHours` the hours since the end of the newest attribution date with a loaded record (72 when none).
   *
   * Cost: one call per page of 200 records per monitored subscription per run (N calls for N quiet subscriptions).
   */
  TRANSACTIONS = 'TRANSACTIONS',

  /**
   * The account's healthchecks listing (vendor-documented, not in the interface specification): the latest status
   * of every subscription and payload, read once per run. `ErrorRecords` counts the payloads whose **latest**
   * healthcheck is ERROR (a later OK run clears an earlier ERROR), `FreshnessHours` the hours since the payload's
   * latest healthcheck when it is OK (a run that found no new data counts as fresh), `InProgressRecords` is not
   * published; a payload that has no healthcheck record of its own is not seen while its subscription has one.
   * A subscription the listing has no record of, and every subscription where the listing answers 404 or fails, is
   * read from its transactions as with `TRANSACTIONS`.
   *
   * Cost: one call per 100 subscription-payload records of the whole account per run (1 for 50 subscriptions with
   * one payload each), plus the transaction pages of the subscriptions read from transactions.
   */
  HEALTHCHECKS = 'HEALTHCHECKS',
}
