/**
 * Stateful emulator of the Data Pipeline Integration Service (see docs/emulator.md).
 */
export { startEmulator, READ_MODES } from './server';
export type { ReadMode, RateLimit } from './core';
export { DEFAULT_RATE_LIMIT, parseRateLimit } from './core';
export { parseLatency, parseTimeScale } from './clock';
export type { Latency } from './clock';
export { DEFAULT_PAGE_SIZE } from './views';
export type { EmulatorOptions, RunningEmulator } from './server';
export type { FixturesMerge } from './fixture-merge';
export { describeFixturesMerge } from './fixture-merge';
export { DEFAULT_FIXTURES, DEFAULT_REFRESH_TOKEN, OTHER_REFRESH_TOKEN, DEFAULT_CLOUD_ACCOUNT, loadFixturesFile } from './fixtures';
export type * from './fixtures';
export type { EmulatorStateSnapshot, EmulatorState } from './state';
export * from './notification-types';
