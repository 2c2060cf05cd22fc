/**
 * The definition of `dpi orphans` (options, help). Its implementation (src/cli/commands/orphans.ts) is a part of its
 * own (`cli/ops`), loaded only when the command runs, so the start-up of every other command does not parse it.
 */
// commander is bundled into the dpi CLI by esbuild, so a devDependency is enough.
// eslint-disable-next-line import/no-extraneous-dependencies
import { Command } from 'commander';
import type { OrphansFlags } from './orphans';
import { DEFAULT_STATE_FILE } from '../../local/defaults';
import { addConnectionOptions } from '../connection';
import { RunContext } from '../context';
import { runOp } from '../lazy';

/** `dpi orphans` */
export function orphansCommand(ctx: RunContext): Command {
  const cmd = new Command('orphans')
    .description('list the lifecycle journal\'s records that still hold something in the service but whose stack or resource no longer '
      + 'exists (CloudFormation, or the dpi local-deploy state with --local); --fix removes them the way a Delete would')
    .option('--local', 'the dpi local-deploy state and journal (beside --state) instead of CloudFormation and the DynamoDB table')
    .option('--state <file>', 'state file of dpi local-deploy (with --local)', DEFAULT_STATE_FILE)
    .option('--table <name>', 'lifecycle journal table (default: the connection\'s journal table, journalTableName or journalTable: with '
      + '--local the one the state\'s resources name, else dpi-lifecycle-journal); never created: a missing table is an error')
    .option('--region <region>', 'AWS region of the stacks and the table (default: the AWS SDK\'s, e.g. AWS_REGION)')
    .option('--profile <name>', 'AWS profile (default: the AWS SDK\'s credential chain)')
    .option('--endpoint <url>', 'a DynamoDB-compatible endpoint for the journal instead of AWS (e.g. DynamoDB Local)')
    .option('--prefix <key prefix>', 'only records whose key starts with this, e.g. MyStack/')
    .option('--json', 'print JSON for scripts')
    .option('--fix', 'remove every orphan the way a Delete would, and release retained records without a service call (asks first; --yes skips the question)')
    .option('--yes', 'with --fix: do not ask')
    .option('--handler-logs', 'with --fix: also print the handler\'s log lines on stderr');
  addConnectionOptions(cmd);
  return cmd.action((flags: OrphansFlags) => runOp((ops) => ops.runOrphans(ctx, flags)));
}
