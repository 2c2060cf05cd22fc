/**
 * The definition of `dpi plan` (options, help). Its implementation (plan.ts: the handler's decision code, the
 * assembly and state readers, the CloudFormation reader) is loaded only when the command runs.
 */
// commander is bundled into the dpi CLI by esbuild, so a devDependency is enough.
// eslint-disable-next-line import/no-extraneous-dependencies
import { Command, Option } from 'commander';
import type { PlanFlags } from './plan';
import { READ_MODES } from '../../emulator/core';
import { DEFAULT_STATE_FILE } from '../../local/defaults';
import { addConnectionOptions } from '../connection';
import { addJsonOption, RunContext } from '../context';
import { runOp } from '../lazy';

/** `dpi plan` */
export function planCommand(ctx: RunContext): Command {
  const cmd = new Command('plan')
    .description('what the next deploy does to each Custom::Dpi* resource: create, update (in place), rebuild, replace, delete, retain or '
      + 'no-change, with the changed props, the service calls, the effects on live records and what the service shows differently '
      + '(reads only; --fail-on for CI; --format markdown for a pull request)')
    .option('--app <dir>', 'the synthesized app (cloud assembly) to deploy', './cdk.out')
    .option('--local', 'compare with the dpi local-deploy state (--state) instead of CloudFormation')
    .option('--state <file>', 'state file of dpi local-deploy (with --local)', DEFAULT_STATE_FILE)
    .option('--from <dir>', 'compare with another cloud assembly instead of CloudFormation (offline review, e.g. the base branch\'s cdk.out)')
    .option('--region <region>', 'AWS region of the deployed stacks (default: the AWS SDK\'s, e.g. AWS_REGION)')
    .option('--profile <name>', 'AWS profile (default: the AWS SDK\'s credential chain)')
    .option('--table <name>', 'lifecycle journal table to read who owns a record that a delete or replace ends (default: the '
      + 'connection\'s journalTableName; not with --from)')
    .option('--all', 'also print the resources with no change')
    .addOption(new Option('--format <format>', 'table (default), json (as --json) or markdown (for a pull request comment: counts, '
      + 'risky actions first, each resource folded)').choices(['table', 'json', 'markdown']))
    .option('--no-live', 'do not read the live state (by default, against CloudFormation or --local, the account\'s subscriptions and '
      + 'remote identities are listed once: what the service shows differently from the deployed declaration, and unknown or invalid identities)')
    .addOption(new Option('--reads <mode>', 'with --local and no service address: how the embedded emulator (on emulator-state.json beside '
      + '--state) answers reads; default DPI_EMULATOR_READS or minimal').choices(READ_MODES))
    .option('--fail-on <actions>', 'exit 1 when any of these actions is planned or possible (a value decided at deploy time), comma-separated: '
      + 'create, update, rebuild, replace, delete, retain, no-change, failure (a change the handler refuses, an unknown identity), or '
      + 'destructive (= rebuild,replace,delete: anything that ends or rebuilds a live record); e.g. destructive,failure');
  addJsonOption(cmd);
  addConnectionOptions(cmd);
  // Loaded when the command runs (the cli/ops part): the start-up of the other commands does not parse the
  // handler's decisions.
  return cmd.action((flags: PlanFlags) => runOp((ops) => ops.runPlan(ctx, flags)));
}
