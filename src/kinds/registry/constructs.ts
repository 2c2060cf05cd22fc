/**
 * The registry's list of each kind's construct (the public API; src/index.ts exports this list), from the kind's
 * folder. test/kinds/registry.test.ts checks that every kind of the registry has its construct here.
 */
export * from '../notification-pipeline/construct';
export * from '../legacy-notification-pipeline/construct';
export * from '../subscription/construct';
export * from '../history-request/construct';
export * from '../product-order-jobs/construct';
