/**
 * `dpi plan`: what the next deploy does to each `Custom::Dpi*` resource of the app, in the service's terms, from the
 * handler's own decision code (`planResource`, src/handler/plan.ts): the action (create, update (in place), rebuild,
 * replace, delete, retain, no-change), the property changes by construct prop, the service calls and the effects on
 * live records. Compares the synthesized app (--app) with CloudFormation's deployed templates (default), the
 * `dpi local-deploy` state (--local) or another cloud assembly (--from DIR). Against CloudFormation or --local it reads the
 * account's subscriptions and remote identities (two listings, plan-live.ts) for the live differences and the identity
 * flags. Read only: no changing call. Printed as text, `--json` or `--format markdown` (plan-markdown.ts).
 * Exit 1 when an action named by --fail-on is planned, 0 otherwise, 2 when the plan could not be made.
 */
import { existsSync } from 'node:fs';
import { planResource } from '../../handler/plan';
import { PLAN_ACTIONS, PlanAction, PlanAdoptionHint, PlanInput } from '../../handler/plan-types';
import { ConnectionFlags, hasServiceAddress } from '../connection';
import { printJson, RunContext, useColour } from '../context';
import { cloudFormationClient, CloudFormationSender } from '../deployed';
import { CliError, EXIT } from '../errors';
import { painter } from '../format';
import { lockLocalState } from './journal-access';
import { readAdoptions } from './plan-adoptions';
import { Planner } from './plan-compare';
import { dynamoJournalOpener, localJournalOpener, PlanJournalOpener } from './plan-journal';
import { LiveRecords, LiveSummary, liveStatusOf, minimalNote, readLive, ReviewedEntry, withLiveFindings } from './plan-live';
import { renderPlanMarkdown } from './plan-markdown';
import { ACTION_LABEL, planJson, renderPlan } from './plan-render';
import { collectPlan } from './plan-sources';
import { embeddedEmulatorState, Service, serviceOf } from './service-of';

/** The flags of `dpi plan`. */
export interface PlanFlags extends ConnectionFlags {
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
  /** `table` (default), `json` (as --json) or `markdown`. */
  format?: string;
  /** `--no-live`: false (the live state is not read). */
  live?: boolean;
  /** With --local and no service address: the embedded emulator's read mode. */
  reads?: string;
}

/** The output formats of `dpi plan`. */
export const PLAN_FORMATS = ['table', 'json', 'markdown'] as const;

/** What `--fail-on` can name besides the actions: `failure`, a change the handler refuses (the deploy would fail). */
export const FAIL_ON_FAILURE = 'failure';

/** `--fail-on destructive`: every action that ends or rebuilds a live record. */
export const DESTRUCTIVE_ACTIONS: readonly PlanAction[] = ['rebuild', 'replace', 'delete'];

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

/**
 * Parses `--fail-on` (comma-separated actions; `no-change` also with a space; `update-in-place` as `update`;
 * `destructive` as rebuild, replace and delete).
 */
export function parseFailOn(value: string | undefined): string[] {
  if (value === undefined) return [];
  const out: string[] = [];
  for (const raw of value.split(',').map((s) => s.trim().toLowerCase()).filter((s) => s !== '')) {
    const v = raw.replace(/[\s_]+/g, '-');
    const names = v === 'update-in-place' ? ['update'] : v === 'destructive' ? [...DESTRUCTIVE_ACTIONS] : [v];
    for (const name of names) {
      if (!(PLAN_ACTIONS as readonly string[]).includes(name) && name !== FAIL_ON_FAILURE) {
        throw new CliError(`--fail-on: '${raw}' is not an action; use a comma-separated list of ${PLAN_ACTIONS.join(', ')}, ${FAIL_ON_FAILURE} `
          + `or destructive (${DESTRUCTIVE_ACTIONS.join(', ')})`);
      }
      if (!out.includes(name)) out.push(name);
    }
  }
  if (out.length === 0) throw new CliError(`--fail-on: expected a comma-separated list of actions (${PLAN_ACTIONS.join(', ')}), got '${value}'`);
  return out;
}

/**
 * Whether an entry trips the gate: its action, its possible action (a value decided at deploy time may make it that,
 * e.g. a possible replace), or a refused change with `failure`.
 */
export function tripsGate(e: ReviewedEntry, failOn: readonly string[]): boolean {
  return failOn.includes(e.action) || (e.possibleAction !== undefined && failOn.includes(e.possibleAction))
    || ((e.failure !== undefined || (e.live ?? []).some((f) => f.fails)) && failOn.includes(FAIL_ON_FAILURE));
}

/** What an entry trips the gate with, as the message names it. */
function trippedAs(e: ReviewedEntry, failOn: readonly string[]): string {
  if (failOn.includes(e.action)) return ACTION_LABEL[e.action as PlanAction];
  if (e.possibleAction !== undefined && failOn.includes(e.possibleAction)) return `possibly ${ACTION_LABEL[e.possibleAction]}`;
  return FAIL_ON_FAILURE;
}

/** The output format of the flags (`--json` is `--format json`). */
function formatOf(flags: PlanFlags): typeof PLAN_FORMATS[number] {
  const f = (flags.format ?? (flags.json ? 'json' : 'table')).toLowerCase();
  if (!(PLAN_FORMATS as readonly string[]).includes(f)) throw new CliError(`--format: '${flags.format}' is not a format; use one of ${PLAN_FORMATS.join(', ')}`);
  if (flags.json && f !== 'json') throw new CliError(`--json and --format ${f} ask for different outputs: give one of them`);
  return f as typeof PLAN_FORMATS[number];
}

/**
 * The live records of the account (CloudFormation mode or --local, not --no-live): from the connection settings, or
 * with --local and no service address the embedded emulator of the local-deploy state. Never fails the plan: what
 * kept them from being read is said in the output (and a failed read on stderr).
 */
async function liveOf(ctx: RunContext, flags: PlanFlags): Promise<Live> {
  const not = (reason: string): Live => ({ summary: { read: false, reason, notes: [] }, close: async () => undefined });
  if (flags.live === false) return not('--no-live');
  if (flags.from !== undefined) return not('--from compares two cloud assemblies offline');
  const embedded = embeddedEmulatorState(ctx, flags) !== undefined;
  if (!hasServiceAddress(flags, ctx.io.env) && !embedded) {
    return not(flags.local ? `no service address, and no embedded emulator state beside ${flags.state}`
      : 'no service address: set DPI_BASE_URL and DPI_REFRESH_TOKEN (or pass --base-url) to read it');
  }
  let unlock: (() => void) | undefined;
  try {
    // The embedded emulator saves its state when a call changes it (the token exchange): not while a local deploy runs.
    unlock = embedded ? lockLocalState(flags.state) : undefined;
  } catch (e) {
    return not(`the embedded emulator's state is in use: ${(e as Error).message}`);
  }
  let service: Service | undefined;
  try {
    service = await serviceOf(ctx, flags, () => undefined);
    const records = await readLive(service.client);
    const note = minimalNote(records);
    const open = service;
    const release = unlock;
    return {
      records,
      summary: {
        read: true,
        notes: note ? [note] : [],
        subscriptions: records.subscriptions.size,
        identities: records.identities.size,
        requests: records.requests,
      },
      // The records a deploy adopts: from the listing, with their stored parameters (bulk reads).
      adoptions: (ids) => readAdoptions(open.client, ids, records.listed),
      close: async () => {
        try {
          await open.close();
        } finally {
          release?.();
        }
      },
    };
  } catch (e) {
    await service?.close();
    unlock?.();
    const message = (e as Error).message;
    ctx.io.stderr.write(`dpi plan: the live state could not be read (${message}); the plan assumes each record is live and as last deployed\n`);
    return not(`the listings failed: ${message}`);
  }
}

/** The live state of a plan, and the service it was read from (open until `close`, for the reads of adoptions). */
interface Live {
  readonly records?: LiveRecords;
  readonly summary: LiveSummary;
  readonly adoptions?: (ids: readonly string[]) => Promise<ReadonlyMap<string, PlanAdoptionHint>>;
  close(): Promise<void>;
}

/** Runs `dpi plan`. */
export async function runPlan(ctx: RunContext, flags: PlanFlags): Promise<void> {
  const format = formatOf(flags);
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
  const live = await liveOf(ctx, flags);
  const decide = planSeams.planner ?? planResource;
  // Each resource's input (its declared identity, its deployed and declared properties) for the live findings.
  const inputs = new Map<string, PlanInput>();
  const records = live.records;
  const planner: Planner = (input) => {
    inputs.set(`${input.stack}\0${input.logicalId}`, input);
    const liveStatus = records ? liveStatusOf(records, input) : undefined;
    return decide(liveStatus !== undefined ? { ...input, liveStatus } : input);
  };
  let planned;
  try {
    planned = await collectPlan({
      app: flags.app,
      local: flags.local,
      state: flags.state,
      from: flags.from,
      cloudFormation: () => (planSeams.cloudFormation ?? cloudFormationClient)({ region: flags.region, profile: flags.profile }),
      journal: journalOpener(flags),
      ...(flags.table !== undefined ? { table: flags.table } : {}),
      ...(live.adoptions ? { adoptions: live.adoptions } : {}),
      warn: (m) => ctx.io.stderr.write(`${m}\n`),
    }, planner);
  } finally {
    await live.close();
  }
  const entries: ReviewedEntry[] = records ? withLiveFindings(planned, inputs, records) : planned;
  const tripped = entries.filter((e) => tripsGate(e, failOn));
  if (format === 'json') {
    printJson(ctx, planJson(entries, failOn, tripped.length > 0, live.summary));
  } else if (format === 'markdown') {
    ctx.io.stdout.write(renderPlanMarkdown(entries, { live: live.summary }));
  } else {
    ctx.io.stdout.write(renderPlan(entries, { all: !!flags.all, paint: painter(useColour(ctx)), live: live.summary }));
  }
  // A gate that lets a record-ending or rebuilding action through says so (e.g. --fail-on replace and a rebuild).
  const passed = failOn.length === 0 ? [] : DESTRUCTIVE_ACTIONS.filter((a) => !failOn.includes(a)
    && entries.some((e) => e.action === a || e.possibleAction === a));
  if (passed.length > 0) {
    ctx.io.stderr.write(`note: --fail-on ${failOn.join(',')} lets ${passed.join(', ')} through (planned or possible); `
      + `--fail-on destructive covers ${DESTRUCTIVE_ACTIONS.join(', ')}\n`);
  }
  if (tripped.length > 0) {
    const kinds = [...new Set(tripped.map((e) => trippedAs(e, failOn)))];
    throw new CliError(`--fail-on: ${tripped.length} resource${tripped.length === 1 ? '' : 's'} planned to ${kinds.join(', ')}`, EXIT.DATA_ERROR);
  }
}
