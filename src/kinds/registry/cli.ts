/**
 * The registry's list of each kind's command-line hooks: what a record still holds, read from the service, and the
 * properties of the Delete that ends it (`dpi orphans`), and the checks of its unconfirmed attempts (`dpi journal
 * resolve`), from the kind's folder. The compiler refuses a kind that is
 * missing. The kind's names (TYPE column) and facts (removal policy, adoption, fix order) are its definition's.
 */
import { HistoryRequestKind, LegacyNotificationPipelineKind, NotificationPipelineKind, PerKind, ProductOrderJobsKind, SubscriptionKind } from './kinds';
import type { AttemptCheck } from '../../cli/commands/journal-attempts';
import type { DeleteProperties, Holdings } from '../../cli/commands/orphans-reads';
import { historyDelete, historyHoldings } from '../history-request/tools/orphans';
import { historyAttemptChecks } from '../history-request/tools/resolve';
import { legacyDelete, legacyHoldings } from '../legacy-notification-pipeline/tools/orphans';
import { pipelineDelete, pipelineHoldings } from '../notification-pipeline/tools/orphans';
import { pipelineAttemptChecks } from '../notification-pipeline/tools/resolve';
import { orderJobsDelete, orderJobsHoldings } from '../product-order-jobs/tools/orphans';
import { subscriptionDelete, subscriptionHoldings } from '../subscription/tools/orphans';

/** The command-line hooks of one kind. */
export interface CliHooks {
  /** What a record still holds (reads the service; sets `holds`, `serviceIds`, `unresolved`, `moot`). */
  readonly holdings: Holdings;
  /** The properties of the Delete that ends a record, from its journal document. */
  readonly deleteProperties: DeleteProperties;
  /**
   * The checks `dpi journal resolve` makes before it abandons a record in one of the kind's own unconfirmed states
   * (by state; `recording`, the shared create, has its check in src/cli/commands/journal-attempts.ts).
   * @default none: the kind has no unconfirmed state of its own
   */
  readonly attemptChecks?: Readonly<Record<string, AttemptCheck>>;
}

/** The command-line hooks of each kind. */
export const CLI_HOOKS: PerKind<CliHooks> = {
  [NotificationPipelineKind.type]: { holdings: pipelineHoldings, deleteProperties: pipelineDelete, attemptChecks: pipelineAttemptChecks },
  [LegacyNotificationPipelineKind.type]: { holdings: legacyHoldings, deleteProperties: legacyDelete },
  [SubscriptionKind.type]: { holdings: subscriptionHoldings, deleteProperties: subscriptionDelete },
  [HistoryRequestKind.type]: { holdings: historyHoldings, deleteProperties: historyDelete, attemptChecks: historyAttemptChecks },
  [ProductOrderJobsKind.type]: { holdings: orderJobsHoldings, deleteProperties: orderJobsDelete },
};
