/**
 * `dpi drift`: for a deployed app, compares every `Custom::Dpi*` resource's state as the handler applied it at the last
 * deploy (the lifecycle journal) with what the service shows now, and prints a table per stack (a nested stack's right
 * after the stack that holds it). The resources come from CloudFormation (src/cli/deployed.ts: `ListStackResources` of
 * each stack and of its nested stacks, their journal keys from the templates; the SDK is loaded only when this command
 * runs) or, with --local, from the `dpi local-deploy` state. Exit 1 when anything drifted, 0 when everything is in sync, 2 when the check could
 * not run. Prints per stack a summary and the rows that are not IN_SYNC (--all: every row). Makes no changing call,
 * except with --fix (drift-fix.ts: the declared state re-applied through the handler's convergence code; exit 0 when
 * everything drifted was restored).
 */
import { terminalWidth } from '../format';
import { JournalFlags, lockLocalState, openJournal } from './journal-access';
import { checkDrift, DriftResource, DriftRow, isDpiType, isDrifted } from '../../handler/drift';
import { NESTED_STACK_TYPE, readAssembly } from '../../local/assembly';
import { readState } from '../../local/state';
import { isLoopbackHost } from '../../local/transport';
import { ConnectionFlags } from '../connection';
import { printJson, RunContext, useColour } from '../context';
import {
  cloudFormationClient, CloudFormationSender, deployedResources, DeployedStack, journalKeyOf, resourcesByJournalKey,
} from '../deployed';
import { CliError, EXIT, toCliError } from '../errors';
import { allRestored, confirmFix, fixable, fixDrift, FixOutcome, renderFix } from './drift-fix';
import { driftJson, driftTotals, FIX_HINT, renderStackDrift } from './drift-render';
import { chooseJournalTable, deployedTableUse, dpiPropertiesOf, exportLookup, TableUse, tableUseOf } from './journal-table';
import { embeddedEmulatorState, Service, serviceOf } from './service-of';

export { driftJson, renderStackDrift } from './drift-render';

/** Makes the CloudFormation client of a run (tests replace it; default: the AWS SDK with the standard credential chain). */
export type CloudFormationFactory = (o: { region?: string; profile?: string }) => CloudFormationSender;

let factory: CloudFormationFactory | undefined;

/** Replaces how `dpi drift` reads CloudFormation (tests); undefined restores the AWS SDK. Returns the previous factory. */
export function setCloudFormationFactory(next: CloudFormationFactory | undefined): CloudFormationFactory | undefined {
  const prev = factory;
  factory = next;
  return prev;
}

export interface DriftFlags extends ConnectionFlags, JournalFlags {
  app: string;
  stack?: string[];
  reads?: string;
  pipelineSubscriptionsKey?: string;
  /** Print every row (default: a summary and the rows that are not IN_SYNC). */
  all?: boolean;
  /** Re-apply the declared state of the MODIFIED resources the stack holds. */
  fix?: boolean;
  /** With --fix: do not ask. */
  yes?: boolean;
}

/** The stacks of a run (nested stacks right after the stack that holds them) and their Custom::Dpi* resources. */
interface Checked {
  stacks: string[];
  /** Stacks with a CloudFormation operation in progress: `--fix` leaves their resources alone. */
  busy?: string[];
  /** Nested stack -> the stack that holds it. */
  parents: Map<string, string>;
  resources: DriftResource[];
  /** The lifecycle journal table each resource uses (its Connection.JournalTableName). */
  tables: TableUse[];
}

/** Orders stacks so that each nested stack follows the stack that holds it. */
function nestedAfterParents(names: string[], parents: ReadonlyMap<string, string>): string[] {
  const out: string[] = [];
  const add = (n: string): void => {
    if (out.includes(n)) return;
    out.push(n);
    for (const c of names) if (parents.get(c) === n) add(c);
  };
  for (const n of names) if (!parents.has(n) || !names.includes(parents.get(n)!)) add(n);
  for (const n of names) add(n);
  return out;
}

/** The stacks' resources from CloudFormation (src/cli/deployed.ts), their nested stacks included. */
async function fromCloudFormation(flags: DriftFlags): Promise<Checked> {
  let wanted = flags.stack ?? [];
  if (wanted.length === 0) {
    try {
      // Stacks without a Custom::Dpi* resource or a nested stack (the lifecycle journal's own stack) have nothing to check.
      const read = readAssembly(flags.app);
      wanted = read.filter((s) => Object.values(s.template.Resources ?? {}).some((r) => isDpiType(r.Type) || r.Type === NESTED_STACK_TYPE))
        .map((s) => s.stackName);
    } catch (e) {
      throw new CliError(`${(e as Error).message}; or name the deployed stacks with --stack NAME`);
    }
    if (wanted.length === 0) throw new CliError(`the cloud assembly ${flags.app} has no stack with a Custom::Dpi* resource; name the deployed stacks with --stack NAME`);
  }
  const cfn = (factory ?? cloudFormationClient)({ region: flags.region, profile: flags.profile });
  let deployed: Map<string, DeployedStack | undefined>;
  try {
    // Every stack's deployed template: the journal table its resources name is the deployed one (a local cloud
    // assembly may be older or newer than what was deployed).
    deployed = await deployedResources(wanted, cfn, { nested: true, templates: true });
  } catch (e) {
    throw new CliError((e as Error).message);
  }
  const missing = wanted.filter((w) => deployed.get(w) === undefined);
  if (missing.length > 0) {
    throw new CliError(`stack ${missing.join(', ')} does not exist in CloudFormation${flags.region ? ` (${flags.region})` : ''}: deploy it, or pick the stacks with --stack NAME`);
  }
  const parents = new Map<string, string>();
  const names: string[] = [];
  for (const s of deployed.values()) {
    if (!s || names.includes(s.stackName)) continue;
    names.push(s.stackName);
    if (s.parentStack !== undefined && deployed.has(s.parentStack)) parents.set(s.stackName, s.parentStack);
  }
  const stacks = nestedAfterParents(names, parents);
  const byKey = resourcesByJournalKey(deployed);
  const resources: DriftResource[] = [];
  for (const stack of stacks) {
    for (const r of [...byKey.values()].filter((x) => x.stackName === stack)) {
      if (!isDpiType(r.type)) continue;
      resources.push({ stack, logicalId: r.logicalId, type: r.type, physicalId: r.physicalId ?? '', key: r.key });
    }
  }
  const busy = [...deployed.values()].filter((s) => s !== undefined && s.status.endsWith('_IN_PROGRESS')).map((s) => s!.stackName);
  // The journal table of each resource, from the deployed templates; a `Ref` to a table or a parameter of the same stack
  // and an `Fn::ImportValue` (the account's exports) are resolved.
  let exportOf: ((name: string) => string | undefined) | undefined;
  try {
    exportOf = await exportLookup(dpiPropertiesOf(deployed.values()), cfn);
  } catch (e) {
    throw new CliError((e as Error).message);
  }
  const tables: TableUse[] = [];
  for (const stack of stacks) {
    const s = [...deployed.values()].find((x) => x?.stackName === stack);
    for (const r of resources.filter((x) => x.stack === stack)) {
      tables.push(deployedTableUse(s, stack, r.logicalId, s?.dpiProperties?.get(r.logicalId), exportOf));
    }
  }
  return { stacks, parents, resources, busy, tables };
}

/**
 * `--local --fix` changes records the local journal proves were made in the emulator the local-deploy state was
 * deployed against; a service address (flags or DPI_* variables) that is not loopback may be the real service, where
 * the same IDs name someone else's records.
 */
function refuseLocalFixAgainstRemote(flags: DriftFlags, origins: readonly string[]): void {
  if (!flags.local || !flags.fix) return;
  const remote = [...new Set(origins)].filter((o) => {
    try {
      return !isLoopbackHost(new URL(o).hostname);
    } catch {
      return true;
    }
  });
  if (remote.length > 0) {
    throw new CliError(`--local --fix: the service address ${remote.join(', ')} is not the emulator of the local-deploy state; `
      + 'the local journal proves nothing about records there. Unset the DPI_* addresses (the embedded emulator is used) or point '
      + 'them at the emulator you deployed to with --emulator', EXIT.FAILURE);
  }
}

/** The stacks' resources from the `dpi local-deploy` state. */
function fromLocalState(flags: DriftFlags): Checked {
  let state;
  try {
    state = readState(flags.state);
  } catch (e) {
    throw new CliError((e as Error).message);
  }
  if (state.stacks.length === 0) throw new CliError(`no local-deploy state in ${flags.state}: run dpi local-deploy first (or pass --state FILE)`);
  // Without --stack: the stacks with a Custom::Dpi* resource or a nested stack (not the lifecycle journal's own stack).
  const served = (name: string): boolean => Object.values(state.resources).some((r) => r.stack === name && isDpiType(r.type))
    || state.stacks.some((c) => c.parentStack === name);
  const wanted = flags.stack && flags.stack.length > 0 ? flags.stack : state.stacks.map((s) => s.stackName).filter(served);
  const unknown = wanted.filter((w) => !state.stacks.some((s) => s.stackName === w));
  if (unknown.length > 0) {
    throw new CliError(`--stack ${unknown.join(', ')}: not in the local-deploy state ${flags.state} (stacks: ${state.stacks.map((s) => s.stackName).join(', ')})`);
  }
  const parents = new Map<string, string>();
  for (const s of state.stacks) if (s.parentStack !== undefined && wanted.includes(s.parentStack)) parents.set(s.stackName, s.parentStack);
  const resources: DriftResource[] = [];
  const tables: TableUse[] = [];
  for (const stack of wanted) {
    for (const r of Object.values(state.resources)) {
      if (r.stack !== stack || !isDpiType(r.type)) continue;
      const key = journalKeyOf(r.stack, r.logicalId, r.properties);
      resources.push({ stack, logicalId: r.logicalId, type: r.type, physicalId: r.physicalId, key });
      tables.push(tableUseOf(stack, r.logicalId, r.properties));
    }
  }
  return { stacks: nestedAfterParents(wanted, parents), parents, resources, tables };
}

/** Runs `dpi drift` (the command's definition is in drift-command.ts; this part is loaded only when it runs). */
export async function runDrift(ctx: RunContext, flags: DriftFlags): Promise<void> {
  if (flags.yes && !flags.fix) throw new CliError('--yes is only meaningful with --fix');
  const { stacks, parents, resources, busy = [], tables } = flags.local ? fromLocalState(flags) : await fromCloudFormation(flags);
  // Every resource checked must use the journal read (a record missing from another journal is not "never made").
  const chosen = chooseJournalTable(flags.table, tables, {
    command: 'dpi drift', source: flags.local ? `the local-deploy state ${flags.state}` : `stacks ${stacks.join(', ')}`, strict: true,
  });
  let read = 0;
  // The embedded emulator saves its state when it stops, and --fix writes the local journal: neither while a dpi
  // local-deploy (or another such command) uses the state.
  const unlock = flags.local && (flags.fix || embeddedEmulatorState(ctx, flags) !== undefined) ? lockLocalState(flags.state) : undefined;
  let service: Service;
  try {
    // Outside --local the journal table the deploy's provider shares its request budget in is the one read here.
    const budget = !flags.local && flags.budgetTable === undefined ? { budgetTable: chosen.table, budgetEndpoint: flags.endpoint } : {};
    service = await serviceOf(ctx, { ...flags, ...budget }, () => (read < resources.length ? `${read} of ${resources.length} resources read` : undefined));
  } catch (e) {
    unlock?.();
    throw e;
  }
  try {
    refuseLocalFixAgainstRemote(flags, service.origins);
  } catch (e) {
    await service.close();
    unlock?.();
    throw e;
  }
  let rows: DriftRow[];
  let where: string;
  let fixed: FixOutcome[] | undefined;
  try {
    const j = await openJournal({ ...flags, table: chosen.table, tableFrom: chosen.from, readOnly: !flags.fix }, 'dpi drift');
    where = j.where;
    try {
      rows = await checkDrift(resources, {
        client: service.client, journal: j.journal, pipelineSubscriptionsKey: flags.pipelineSubscriptionsKey, onProgress: (done) => { read = done; },
      });
      if (flags.fix) {
        // A stack being deployed may have changed a record whose journal save is still to come: leave it to the deploy.
        for (const b of busy) ctx.io.stderr.write(`dpi drift --fix: stack ${b} has an operation in progress; its resources are left alone\n`);
        const drifted = rows.filter(isDrifted).filter((r) => !busy.includes(r.stack));
        if (!flags.json) ctx.io.stdout.write(report(ctx, flags, stacks, parents, rows, where, false));
        await confirmFix(fixable(drifted).length, flags.yes === true);
        fixed = await fixDrift(drifted, { client: service.client, journal: j.journal, subscriptionsKey: flags.pipelineSubscriptionsKey },
          (line) => ctx.io.stderr.write(`${line}\n`));
      }
    } catch (e) {
      throw toCliError(e, { origins: service.origins });
    } finally {
      await j.close();
    }
  } finally {
    await service.close();
    unlock?.();
  }
  const source = flags.local ? `local-deploy state ${flags.state}` : 'CloudFormation';
  if (flags.json) printJson(ctx, { ...driftJson(source, stacks, rows, parents), ...(fixed ? { fixed } : {}) });
  else if (fixed) ctx.io.stdout.write(`\n${renderFix(fixed)}`);
  else ctx.io.stdout.write(report(ctx, flags, stacks, parents, rows, where, true));
  const drifted = rows.filter(isDrifted);
  if (fixed ? !allRestored(drifted, fixed) : drifted.length > 0) throw new CliError('', EXIT.DATA_ERROR);
}

/** The text report: a summary per stack with its rows (not IN_SYNC, or every row with --all), the total, the --fix hint. */
function report(ctx: RunContext, flags: DriftFlags, stacks: string[], parents: ReadonlyMap<string, string>, rows: DriftRow[], where: string,
  hint: boolean): string {
  const colour = useColour(ctx);
  const width = terminalWidth(ctx.io);
  const blocks = stacks.map((s) => renderStackDrift(s, rows.filter((r) => r.stack === s), colour, parents.get(s), flags.all === true, width));
  // A blank line around a stack's table; stacks that are one summary line each follow one another.
  const lines = (b: string): number => b.split('\n').length - 1;
  let out = blocks.map((b, i) => (i > 0 && (lines(b) > 1 || lines(blocks[i - 1]) > 1) ? '\n' : '') + b).join('');
  out += `\n${driftTotals(rows, where)}`;
  if (hint && rows.some(isDrifted)) out += `${FIX_HINT}\n`;
  return out;
}
