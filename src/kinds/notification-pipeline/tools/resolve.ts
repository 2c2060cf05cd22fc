/**
 * `dpi journal resolve` of `Custom::DpiNotificationPipeline`: a unified create without an answer (`posting`) is not
 * checked: only the service can find and remove what it made, and the operator resolves the record once it has (the
 * residual case of docs/handler.md). Its `recording` state is the shared create's, checked by the command line.
 */
import { AttemptCheck } from '../../../cli/commands/journal-attempts';

/** `posting`: nothing the command line can read tells what the create made. */
const postingCheck: AttemptCheck = async () => ({});

/** The checks of the kind's own unconfirmed states. */
export const pipelineAttemptChecks: Readonly<Record<string, AttemptCheck>> = { posting: postingCheck };
