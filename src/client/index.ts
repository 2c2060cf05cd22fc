/**
 * Typed HTTP client of the Data Pipeline Integration Service (internal: used by the handler and the `dpi` CLI).
 * Dependency-free (Node's built-in fetch); never imports CDK.
 */
export * from './types';
export type { ServiceEndpoints } from './endpoints';
export type { BudgetPace, RequestBudget } from './budget';
export { MemoryBudget, paceOf, parseBudget } from './budget';
export { endpointsFromBase } from './endpoints';
export { ServiceError, TxQueryError } from './errors';
export type { DpiClientOptions, RateLimitWait } from './http';
export { jwtExpiry, parseRetryAfter, RATE_LIMIT, DEFAULT_MAX_RATE_LIMIT_WAIT_MS } from './http';
export type {
  AccountType, TxApi, MarketplaceApi, NotificationsApi, LegacyNotificationsApi, CatalogApi,
  SubscriptionsApi, SubscriptionParametersApi, HistoryApi, JobsApi,
} from './client-apis';
export { MAX_PARAMETER_READ_IDS } from './client-apis';
export { DpiClient } from './client';
export type { HealthcheckQuery, HealthcheckRecord, HealthchecksApi } from './healthchecks';
export { accountIdClaim, HEALTHCHECK_ENVIRONMENT, healthchecksPath } from './healthchecks';
export { validateTxQuery, TX_QUERY_PARAMETERS } from './tx';
export type { OrderJobBatch, OrderJobPlanInput } from './helpers';
export {
  ORDER_ID_PATTERN, MAX_ORDER_IDS_PER_JOB, ORDER_JOB_STAGGER_MINUTES,
  planOrderJobBatches, cronForMinute, encodeStageIds, decodeStageIds, validateHistoryRequest,
} from './helpers';
