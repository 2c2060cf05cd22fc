/**
 * `dpi local-deploy`: drives the custom resources of a synthesized CDK app
 * through the real bundled handler against the (embedded) emulator, the way
 * CloudFormation would (see docs/local-deploy.md).
 */

export { runLocalDeploy, withEmulatorUrl, roleTrustsService, DEFAULT_STATE_FILE, DEFAULT_REFRESH_TOKEN_ENV } from './runner';
export type { AbandonedResource, LocalDeployOptions, LocalDeployResult, FixturesSource, ServiceRequestCount } from './options';
export { startEmbeddedEmulator, planFixtures, fixturesDigest, EMULATOR_STATE_FILE_NAME, EMULATOR_FIXTURES_RECORD_NAME } from './embedded';
export { RESOURCE_IDS, fallbackIdentity, identityOf, placeholderAttribute } from './resource-ids';
export type { FakeIdentity, FakeResourceEnv } from './resource-ids';
export { WaitReporter, rateLimitedEntry, waitLine, RATE_LIMITED_MSG } from './waits';
export type { RateLimitedEntry } from './waits';
export { insecureTransportReason, requireSecureEmulatorUrl, isLoopbackHost } from './transport';
export type { ProgressEvent, SummaryRow } from './output';
export { readAssembly } from './assembly';
export type { AssemblyStack } from './assembly';
export { resolveValue, referencedResources, stringifyScalars, generatedName, ResolveError } from './intrinsics';
export type { ResolveContext, StackEnvironment, NestedStackView } from './intrinsics';
export { dependencyOrder, selectedDependencies } from './graph';
export { DEFAULT_CONCURRENCY, parseConcurrency, runScheduled } from './scheduler';
export type { ScheduleResult } from './scheduler';
export { readState } from './state';
export type { LocalState, ResourceState, StackState } from './state';
export { defaultHandlerPath, findPackageRoot } from './handler';
export { startJournalServer, readJournalState, JOURNAL_STATE_FILE_NAME, JOURNAL_LOCAL_REGION } from './journal-server';
export type { JournalServer, JournalServerOptions, JournalState, SavedTable } from './journal-server';
