/**
 * The heavier commands' implementations (`dpi drift`, `dpi orphans`, `dpi plan`: the drift engine, the handler's decisions, the journal, the local state,
 * the CloudFormation reader), bundled as a part of their own (assets/cli/ops) and loaded by `runOp` (lazy.ts) only
 * when one of them runs.
 */
export { runDrift } from './commands/drift';
export { runOrphans } from './commands/orphans';
export { runPlan } from './commands/plan';
export { toCliError } from './errors';
