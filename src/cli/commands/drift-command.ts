/**
 * The definition of `dpi drift` (options, help). Its implementation (src/cli/commands/drift.ts) is a part of its
 * own (`cli/ops`), loaded only when the command runs, so the start-up of every other command does not parse it.
 */
// commander is bundled into the dpi CLI by esbuild, so a devDependency is enough.
// eslint-disable-next-line import/no-extraneous-dependencies
import { Command, Option } from 'commander';
import type { DriftFlags } from './drift';
import { READ_MODES } from '../../emulator/core';
import { DEFAULT_STATE_FILE } from '../../local/defaults';
import { addConnectionOptions } from '../connection';
import { addJsonOption, RunContext } from '../context';
import { runOp } from '../lazy';

/** `dpi drift` */
export function driftCommand(ctx: RunContext): Command {
  const cmd = new Command('drift')
    .description('compare every deployed Custom::Dpi* resource with what the service shows now (exit code 1 when anything drifted; --fix re-applies)')
    .option('--local', 'the resources and journal of dpi local-deploy (--state) instead of CloudFormation and DynamoDB')
    .option('--state <file>', 'state file of dpi local-deploy (with --local)', DEFAULT_STATE_FILE)
    .option('--app <dir>', 'cloud assembly whose stacks to check, when no --stack is given', './cdk.out')
    .option('--stack <name...>', 'deployed stack name(s) to check (default: every stack of --app, or of the local state)')
    .option('--table <name>', 'lifecycle journal table (default: the connection\'s journal table, journalTableName or journalTable, '
      + 'as the checked resources name it; a different --table is refused); never created: a missing table is an error')
    .option('--region <region>', 'AWS region of the stacks and the table (default: the AWS SDK\'s, e.g. AWS_REGION)')
    .option('--profile <name>', 'AWS profile (default: the AWS SDK\'s credential chain)')
    .option('--endpoint <url>', 'a DynamoDB-compatible endpoint for the journal instead of AWS (e.g. DynamoDB Local)')
    .addOption(new Option('--reads <mode>', 'with --local and no service address: how the embedded emulator (on emulator-state.json beside '
      + '--state) answers reads; default DPI_EMULATOR_READS or minimal').choices(READ_MODES))
    .option('--pipeline-subscriptions-key <key>', 'the stored product parameter holding a unified pipeline\'s upstream subscriptions '
      + '(the connection\'s pipelineMetadataKeys.subscriptions; compared where the service shows stored parameters)', 'subscriptions')
    .option('--all', 'print every resource (default: a summary per stack and only the resources that are not IN_SYNC)')
    .option('--fix', 're-apply the declared state of each MODIFIED resource the journal proves the stack made or adopted, through the '
      + 'handler\'s own update code (asks first; --yes skips the question); DELETED and unproven records are never touched')
    .option('--yes', 'with --fix: do not ask');
  addJsonOption(cmd);
  addConnectionOptions(cmd);
  return cmd.action((flags: DriftFlags) => runOp((ops) => ops.runDrift(ctx, flags)));
}
