/**
 * `dpi plan`: what the next deploy does to each `Custom::Dpi*` resource of the app, in the service's terms, from the
 * handler's own decision code (`planResource`, src/handler/plan.ts): the action (create, update in place, rebuild,
 * replace, delete, retain, no change), the property changes by construct prop, the service calls and the effects on
 * live records. Compares the synthesized app (--app) with CloudFormation's deployed templates (default), the
 * `dpi local-deploy` state (--local) or another cloud assembly (--from DIR). Read only: no service call, no change.
 * Exit 1 when an action named by --fail-on is planned, 0 otherwise, 2 when the plan could not be made.
 */
import { existsSync } from 'node:fs';
import { planResource } from '../../handler/plan';
import { PLAN_ACTIONS, PlanAction, PlanEntry } from '../../handler/plan-types';
import { printJson, RunContext, useColour } from '../context';
import { cloudFormationClient, CloudFormationSender } from '../deployed';
import { CliError, EXIT } from '../errors';
import { painter } from '../format';
import { Planner } from './plan-compare';
import { dynamoJournalOpener, localJournalOpener, PlanJournalOpener } from './plan-journal';
import { ACTION_LABEL, planJson, renderPlan } from './plan-render';
import { collectPlan } from './plan-sources';

/** The flags of `dpi plan`. */
export interface PlanFlags {
  app: string;
  local?: boolean;
  state: string;
  from?: string;
  region?: string;
  profile?: string;
  all?: boolean;
  json?: boolean;
  failOn?: string;
  table?: string;
}

/** What `--fail-on` can name besides the actions: `failure`, a change the handler refuses (the deploy would fail). */
export const FAIL_ON_FAILURE = 'failure';

/**
 * Seams of `dpi plan` (tests): the CloudFormation client, the decision function and the journal opener of
 * CloudFormation mode (with a CloudFormation seam and no journal seam, the journal table is not read).
 */
export const planSeams: {
  cloudFormation?: (o: { region?: string; profile?: string }) => CloudFormationSender;
  planner?: Planner;
  journal?: PlanJournalOpener;
} = {};

/** Where the plan reads the lifecycle journal: the local one (--local), the table (CloudFormation mode), none (--from). */
function journalOpener(flags: PlanFlags): PlanJournalOpener | undefined {
  if (flags.local) return localJournalOpener(flags.state);
  if (flags.from !== undefined) return undefined;
  if (planSeams.journal) return planSeams.journal;
  return planSeams.cloudFormation ? undefined : dynamoJournalOpener({ region: flags.region, profile: flags.profile, state: flags.state });
}

/** Parses `--fail-on` (comma-separated actions; `update-in-place` and `no-change` spelled with dashes or spaces). */
export function parseFailOn(value: string | undefined): string[] {
  if (value === undefined) return [];
  const out: string[] = [];
  for (const raw of value.split(',').map((s) => s.trim().toLowerCase()).filter((s) => s !== '')) {
    const v = raw.replace(/[\s_]+/g, '-');
    const name = v === 'update-in-place' ? 'update' : v;
    if (!(PLAN_ACTIONS as readonly string[]).includes(name) && name !== FAIL_ON_FAILURE) {
      throw new CliError(`--fail-on: '${raw}' is not an action; use a comma-separated list of ${PLAN_ACTIONS.join(', ')} or ${FAIL_ON_FAILURE}`);
    }
    if (!out.includes(name)) out.push(name);
  }
  if (out.length === 0) throw new CliError(`--fail-on: expected a comma-separated list of actions (${PLAN_ACTIONS.join(', ')}), got '${value}'`);
  return out;
}

/**
 * Whether an entry trips the gate: its action, its possible action (a value decided at deploy time may make it that,
 * e.g. a possible replace), or a refused change with `failure`.
 */
export function tripsGate(e: PlanEntry, failOn: readonly string[]): boolean {
  return failOn.includes(e.action) || (e.possibleAction !== undefined && failOn.includes(e.possibleAction))
    || (e.failure !== undefined && failOn.includes(FAIL_ON_FAILURE));
}

/** What an entry trips the gate with, as the message names it. */
function trippedAs(e: PlanEntry, failOn: readonly string[]): string {
  if (failOn.includes(e.action)) return ACTION_LABEL[e.action as PlanAction];
  if (e.possibleAction !== undefined && failOn.includes(e.possibleAction)) return `possibly ${ACTION_LABEL[e.possibleAction]}`;
  return FAIL_ON_FAILURE;
}

/** Runs `dpi plan`. */
export async function runPlan(ctx: RunContext, flags: PlanFlags): Promise<void> {
  if (flags.local && flags.from !== undefined) throw new CliError('--local and --from compare with different things: give one of them');
  if (!flags.local && (flags.region !== undefined || flags.profile !== undefined) && flags.from !== undefined) {
    throw new CliError('--region and --profile read CloudFormation: they do not apply with --from');
  }
  const failOn = parseFailOn(flags.failOn);
  if (flags.local && !existsSync(flags.state)) {
    // Before the first local deploy that is right; a mistyped --state would pass a --fail-on gate unnoticed.
    ctx.io.stderr.write(`dpi plan: no local-deploy state at ${flags.state}: nothing is deployed there, so every resource is planned as a create `
      + '(pass --state FILE, the state the app was deployed with)\n');
  }
  const planner = planSeams.planner ?? planResource;
  const entries = await collectPlan({
    app: flags.app,
    local: flags.local,
    state: flags.state,
    from: flags.from,
    cloudFormation: () => (planSeams.cloudFormation ?? cloudFormationClient)({ region: flags.region, profile: flags.profile }),
    journal: journalOpener(flags),
    ...(flags.table !== undefined ? { table: flags.table } : {}),
    warn: (m) => ctx.io.stderr.write(`${m}\n`),
  }, planner);
  const tripped = entries.filter((e) => tripsGate(e, failOn));
  if (flags.json) {
    printJson(ctx, planJson(entries, failOn, tripped.length > 0));
  } else {
    ctx.io.stdout.write(renderPlan(entries, { all: !!flags.all, paint: painter(useColour(ctx)) }));
  }
  if (tripped.length > 0) {
    const kinds = [...new Set(tripped.map((e) => trippedAs(e, failOn)))];
    throw new CliError(`--fail-on: ${tripped.length} resource${tripped.length === 1 ? '' : 's'} planned to ${kinds.join(', ')}`, EXIT.DATA_ERROR);
  }
}
