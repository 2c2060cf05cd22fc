/**
 * The two sides `dpi plan` compares, per stack of the app (nested stacks followed):
 * - CloudFormation (default): each stack's current template (GetTemplate) and physical IDs (ListStackResources), nested
 *   stacks found through their parents' `AWS::CloudFormation::Stack` resources (src/cli/deployed.ts);
 * - `--from DIR`: the stacks of another cloud assembly (offline review, no physical IDs);
 * - `--local`: the `dpi local-deploy` state, with the declared side resolved by the local runner's own code
 *   (src/local/plan-source.ts, loaded with the runner's part).
 * Every resource goes through `planResource` (the handler's decisions) in the order the deploy handles it.
 */
import type * as cfnSdk from '@aws-sdk/client-cloudformation';
import { deployedTableUse, exportLookup, tableUseOf } from './journal-table';
import type { PlanAdoptionHint, PlanEntry } from '../../handler/plan-types';
import { AssemblyStack, readAssembly } from '../../local/assembly';
import type { LocalPlanSource } from '../../local/plan-source';
import { readState, ResourceState } from '../../local/state';
import { isDpiType, Template } from '../../local/template';
import { CloudFormationSender, deployedResources, DeployedStack, journalKeyOf } from '../deployed';
import { CliError } from '../errors';
import { loadPart } from '../load-part';
import { withAdoptions } from './plan-adoptions';
import { CHANGES_REFERENCES, Planner, planTemplatePairs, TemplatePair } from './plan-compare';
import { JournalTarget, PlanJournalOpener, readJournalHints, tableOf } from './plan-journal';
import { assemblyPaths, constructName, metadataPath, StackPaths } from './plan-paths';

/** What `collectPlan` reads. */
export interface PlanSourceOptions {
  readonly app: string;
  readonly local?: boolean;
  readonly state: string;
  readonly from?: string;
  /** Makes the CloudFormation client (default mode only). */
  readonly cloudFormation?: () => CloudFormationSender;
  /** Opens the lifecycle journal (CloudFormation mode and `--local`); undefined: the journal is not read. */
  readonly journal?: PlanJournalOpener;
  /** `--table`: the journal table (default: each resource's connection's). */
  readonly table?: string;
  /** Says a note on stderr (e.g. that the journal could not be read). */
  readonly warn?: (message: string) => void;
  /**
   * Reads the records the deploy would adopt (their subscription IDs): each resource that adopts one is then planned
   * with those reads (`PlanInput.adoption`). Undefined: not read (the live state was not read).
   */
  readonly adoptions?: (ids: readonly string[]) => Promise<ReadonlyMap<string, PlanAdoptionHint>>;
}

/** The planner, noting in `ids` the subscription IDs the deploy adopts (an `AdoptId` not yet deployed as such). */
function noteAdoptions(planner: Planner, ids: Set<string>): Planner {
  return (input) => {
    const adopt = input.newProps?.AdoptId;
    if (typeof adopt === 'string' && input.oldProps?.AdoptId !== adopt && input.physicalId !== adopt) ids.add(adopt);
    return planner(input);
  };
}

/** Where a deployed resource's journal record is, by `<plan stack>\0<logical ID>`. */
type JournalRefs = Map<string, { key: string; table: JournalTarget['table'] }>;

const refOf = (stack: string, logicalId: string): string => `${stack}\0${logicalId}`;

/**
 * Plans twice when the first plan ends or replaces deployed records: the second time with what the lifecycle journal
 * records of them (the handler decides ownership from it). When the journal cannot be read, the first plan stands
 * (its endings say "unless the lifecycle journal records it as adopted") and `warn` says why.
 */
async function withJournal(o: PlanSourceOptions, refs: JournalRefs, plan: (planner: Planner) => PlanEntry[], given: Planner): Promise<PlanEntry[]> {
  let planner = given;
  const adopted = new Set<string>();
  let first = plan(o.adoptions ? noteAdoptions(planner, adopted) : planner);
  if (o.adoptions && adopted.size > 0) {
    // An adoption depends on what the service has of the adopted record: planned again with its reads.
    planner = withAdoptions(planner, await o.adoptions([...adopted].sort()));
    first = plan(planner);
  }
  // Endings (who owns the record) and refusals (a dropped parameter a revert keeps) depend on the journal.
  const dependsOnJournal = (e: PlanEntry): boolean => e.action === 'delete' || e.action === 'replace' || e.failure !== undefined;
  if (!o.journal) {
    // --from compares two cloud assemblies: no deployed stack, so no journal to read (said once, as for a failed read).
    if (o.from !== undefined && first.some(dependsOnJournal)) {
      o.warn?.('dpi plan: the lifecycle journal is not read with --from (no deployed stack to find it from); a planned delete ends the '
        + 'record unless the journal records it as adopted');
    }
    return first;
  }
  const targets: JournalTarget[] = [];
  for (const e of first) {
    if (!dependsOnJournal(e) || e.physicalId === undefined) continue;
    const where = refs.get(refOf(e.stack, e.logicalId));
    if (where) targets.push({ ref: refOf(e.stack, e.logicalId), ...where, physicalId: e.physicalId });
  }
  if (targets.length === 0) return first;
  const read = await readJournalHints(targets, o.journal);
  if ('error' in read) {
    o.warn?.(`dpi plan: the lifecycle journal could not be read (${read.error}); a planned delete ends the record unless the journal `
      + 'records it as adopted');
    return first;
  }
  return plan((input) => planner({ ...input, journal: read.hints.get(refOf(input.stack, input.logicalId)) ?? {} }));
}

function readApp(dir: string, what: '--app' | '--from'): AssemblyStack[] {
  try {
    return readAssembly(dir);
  } catch (e) {
    // The assembly reader's advice names --app; for --from it is the other assembly's directory.
    const message = (e as Error).message.replace(/ or pass --app <cdk\.out directory>$/, what === '--from' ? ' or pass --from <cdk.out directory>' : ' or pass --app <cdk.out directory>');
    throw new CliError(`${what}: ${message}`);
  }
}

/** A stack's name in plan entries: a nested stack's construct path (else `<parent>/<logical ID>`), else its name. */
function displayNames(stacks: readonly AssemblyStack[], paths: ReadonlyMap<string, StackPaths>): Map<string, string> {
  const out = new Map<string, string>();
  for (const s of stacks) {
    const own = paths.get(s.stackName)?.stackPath;
    out.set(s.stackName, own ?? (s.nested ? `${out.get(s.nested.parent.stackName) ?? s.nested.parent.stackName}/${s.nested.logicalId}` : s.stackName));
  }
  return out;
}

function pathsOf(t: Template | undefined, known: ReadonlyMap<string, string> | undefined): Map<string, string> {
  const out = new Map<string, string>(known ?? []);
  for (const [id, r] of Object.entries(t?.Resources ?? {})) {
    const p = metadataPath(r);
    if (p !== undefined) out.set(id, p);
  }
  return out;
}

/** The plan entries of the app against what is deployed (see the module comment). */
export async function collectPlan(o: PlanSourceOptions, planner: Planner): Promise<PlanEntry[]> {
  const stacks = readApp(o.app, '--app');
  const refs: JournalRefs = new Map();
  if (o.local) return withJournal(o, refs, (p) => planLocal(stacks, o, p, refs), planner);
  if (o.from !== undefined) {
    const pairs = fromAssembly(stacks, readApp(o.from, '--from'));
    return withJournal({ ...o, journal: undefined }, refs, (p) => planTemplatePairs(pairs, p), planner);
  }
  const cfn = o.cloudFormation!();
  const { pairs, deployed } = await fromCloudFormation(stacks, cfn);
  // The journal table each deployed resource's connection names (a `Ref` to a parameter or resource of its stack and an
  // `Fn::ImportValue` resolved; one that cannot be resolved leaves the journal unread, said on stderr).
  const dpiOf = (p: TemplatePair): Array<[string, { Type: string; Properties?: Record<string, unknown> }]> =>
    Object.entries(p.oldTemplate?.Resources ?? {}).filter(([, r]) => isDpiType(r.Type));
  let exportOf: ((name: string) => string | undefined) | undefined;
  try {
    exportOf = await exportLookup(pairs.flatMap((p) => dpiOf(p).map(([, r]) => r.Properties)), cfn);
  } catch (e) {
    o.warn?.(`dpi plan: ${(e as Error).message}`);
  }
  for (const p of pairs) {
    if (p.deployedName === undefined) continue;
    const d = deployed.get(p.deployedName);
    for (const [id, r] of dpiOf(p)) {
      const use = deployedTableUse(d, p.deployedName, id, r.Properties, exportOf);
      refs.set(refOf(p.display, id), { key: journalKeyOf(p.deployedName, id, r.Properties), table: tableOf(use, o.table) });
    }
  }
  return withJournal(o, refs, (p) => planTemplatePairs(pairs, p), planner);
}

/** `--from DIR`: stacks matched by name (a nested stack's is derived from its parent's and its logical ID in both). */
function fromAssembly(stacks: AssemblyStack[], old: AssemblyStack[]): TemplatePair[] {
  const newPaths = assemblyPaths(stacks);
  const oldPaths = assemblyPaths(old);
  const names = displayNames(stacks, newPaths);
  const oldNames = displayNames(old, oldPaths);
  const oldByName = new Map(old.map((s) => [s.stackName, s]));
  const known = new Set(stacks.map((s) => s.stackName));
  const pairs: TemplatePair[] = stacks.map((s) => {
    const before = oldByName.get(s.stackName);
    return {
      display: names.get(s.stackName)!,
      ...linkOf(s),
      newTemplate: s.template,
      ...(before ? { oldTemplate: before.template } : {}),
      newPaths: pathsOf(s.template, newPaths.get(s.stackName)?.resources),
      oldPaths: pathsOf(before?.template, oldPaths.get(s.stackName)?.resources),
    };
  });
  // Nested stacks the app's stacks no longer hold: their resources leave.
  for (const s of old) {
    if (known.has(s.stackName) || !s.nested || !isInApp(s, known)) continue;
    pairs.push({ display: oldNames.get(s.stackName)!, oldTemplate: s.template, oldPaths: pathsOf(s.template, oldPaths.get(s.stackName)?.resources) });
  }
  return pairs;
}

/** A pair's place in the app: its stack name and, for a nested stack, its parent and holding resource. */
function linkOf(s: AssemblyStack): Pick<TemplatePair, 'key' | 'nestedIn'> {
  return { key: s.stackName, ...(s.nested ? { nestedIn: { parent: s.nested.parent.stackName, logicalId: s.nested.logicalId } } : {}) };
}

/** Whether the top-level stack above a nested stack is in the app. */
function isInApp(s: AssemblyStack, known: ReadonlySet<string>): boolean {
  let p = s.nested?.parent;
  while (p?.nested) p = p.nested.parent;
  return p !== undefined && known.has(p.stackName);
}

type CfnModule = typeof cfnSdk;

function sdk(): CfnModule {
  // A dependency of the package, external in the dpi bundle: loaded only when the plan reads CloudFormation.
  // eslint-disable-next-line @typescript-eslint/no-require-imports, import/no-extraneous-dependencies
  return require('@aws-sdk/client-cloudformation') as CfnModule;
}

async function deployedTemplate(stack: DeployedStack, cfn: CloudFormationSender): Promise<Template | undefined> {
  const live = [...stack.resources.values()].some((r) => isDpiType(r.type) && r.status !== 'DELETE_COMPLETE');
  if (!live) return undefined;
  const m = sdk();
  let body: string | undefined;
  try {
    const t = await cfn.send(new m.GetTemplateCommand({ StackName: stack.stackId, TemplateStage: 'Processed' })) as cfnSdk.GetTemplateCommandOutput;
    body = t.TemplateBody;
  } catch (e) {
    const err = e as { name?: string; message?: string };
    throw new CliError(`CloudFormation GetTemplate of stack ${stack.stackName} failed: ${err.name ?? 'Error'}: ${err.message ?? String(e)}; `
      + 'check the AWS credentials and region (--profile, --region)');
  }
  try {
    return JSON.parse(body ?? '{}') as Template;
  } catch (e) {
    throw new CliError(`the template of stack ${stack.stackName} (GetTemplate) is not JSON (${(e as Error).message}); `
      + 'a YAML template cannot be compared: deploy the app with the cdk CLI (JSON templates)');
  }
}

function physicalIdsOf(stack: DeployedStack | undefined): Map<string, string> {
  const out = new Map<string, string>();
  for (const r of stack?.resources.values() ?? []) if (r.physicalId && r.status !== 'DELETE_COMPLETE') out.set(r.logicalId, r.physicalId);
  return out;
}

/** Default mode: CloudFormation's current templates and physical IDs; a stack not deployed has none. */
async function fromCloudFormation(stacks: AssemblyStack[], cfn: CloudFormationSender):
Promise<{ pairs: TemplatePair[]; deployed: Map<string, DeployedStack> }> {
  const newPaths = assemblyPaths(stacks);
  const names = displayNames(stacks, newPaths);
  let deployed: Map<string, DeployedStack | undefined>;
  try {
    deployed = await deployedResources(stacks.filter((s) => !s.nested).map((s) => s.stackName), cfn, { nested: true });
  } catch (e) {
    throw new CliError((e as Error).message);
  }
  const byId = new Map<string, DeployedStack>();
  for (const d of deployed.values()) if (d) byId.set(d.stackId, d);
  // The deployed stack of each app stack: by name, a nested one through its parent's AWS::CloudFormation::Stack resource.
  const match = new Map<string, DeployedStack | undefined>();
  for (const s of stacks) {
    if (!s.nested) {
      match.set(s.stackName, deployed.get(s.stackName));
      continue;
    }
    const parent = match.get(s.nested.parent.stackName);
    const holder = parent?.resources.get(s.nested.logicalId);
    match.set(s.stackName, holder?.physicalId && holder.status !== 'DELETE_COMPLETE' ? byId.get(holder.physicalId) : undefined);
  }
  const pairs: TemplatePair[] = [];
  for (const s of stacks) {
    const d = match.get(s.stackName);
    const oldTemplate = d ? await deployedTemplate(d, cfn) : undefined;
    pairs.push({
      display: names.get(s.stackName)!,
      ...linkOf(s),
      ...(d ? { deployedName: d.stackName } : {}),
      newTemplate: s.template,
      ...(oldTemplate ? { oldTemplate } : {}),
      physicalIds: physicalIdsOf(d),
      newPaths: pathsOf(s.template, newPaths.get(s.stackName)?.resources),
      oldPaths: pathsOf(oldTemplate, undefined),
    });
  }
  // Deployed nested stacks that the app's stacks no longer hold: their resources leave with them.
  const matched = new Set([...match.values()].filter((d): d is DeployedStack => d !== undefined).map((d) => d.stackId));
  const displayOf = new Map<string, string>();
  for (const s of stacks) if (match.get(s.stackName)) displayOf.set(match.get(s.stackName)!.stackName, names.get(s.stackName)!);
  for (const d of byId.values()) {
    if (matched.has(d.stackId) || d.parentStack === undefined) continue;
    const parent = [...byId.values()].find((p) => p.stackName === d.parentStack);
    const holder = parent ? [...parent.resources.values()].find((r) => r.physicalId === d.stackId) : undefined;
    const display = `${displayOf.get(d.parentStack) ?? d.parentStack}/${holder?.logicalId ?? d.stackName}`;
    displayOf.set(d.stackName, display);
    const oldTemplate = await deployedTemplate(d, cfn);
    if (!oldTemplate) continue;
    pairs.push({ display, deployedName: d.stackName, oldTemplate, physicalIds: physicalIdsOf(d), oldPaths: pathsOf(oldTemplate, undefined) });
  }
  return { pairs, deployed: new Map([...byId.values()].map((d) => [d.stackName, d])) };
}

/** `--local`: the local-deploy state against the app resolved the way the runner resolves it. */
function planLocal(stacks: AssemblyStack[], o: PlanSourceOptions, planner: Planner, refs: JournalRefs): PlanEntry[] {
  let state;
  try {
    state = readState(o.state);
  } catch (e) {
    throw new CliError((e as Error).message);
  }
  const paths = assemblyPaths(stacks);
  const names = displayNames(stacks, paths);
  const { LocalPlanSource: Source } = loadPart<typeof import('../../local/runner')>('local/runner', '../local/runner');
  const source: LocalPlanSource = new Source(stacks, state);
  const out: PlanEntry[] = [];
  const head = (display: string, logicalId: string, type: string, path: string | undefined, physicalId: string | undefined) => ({
    type, stack: display, logicalId, ...(path !== undefined ? { constructPath: path } : {}), ...(physicalId !== undefined ? { physicalId } : {}),
  });
  // Where each deployed resource's journal record is (the state's stack name is the one its events carried).
  const remember = (display: string, r: ResourceState): void => {
    refs.set(refOf(display, r.logicalId), {
      key: journalKeyOf(r.stack, r.logicalId, r.properties), table: tableOf(tableUseOf(r.stack, r.logicalId, r.properties), o.table),
    });
  };
  for (const s of stacks) {
    const display = names.get(s.stackName)!;
    const declaredPaths = paths.get(s.stackName)?.resources;
    let sp;
    try {
      sp = source.stackPlan(s);
    } catch (e) {
      throw new CliError(`${s.stackName}: ${(e as Error).message}`);
    }
    const declared = new Set<string>();
    for (const r of sp.resources) {
      const before = source.deployed(s.stackName, r.logicalId);
      if (before) remember(display, before);
      if (before && before.type !== r.type) {
        throw new CliError(`${s.stackName}/${r.logicalId}: Update of resource type is not permitted (${before.type} -> ${r.type}); `
          + 'local-deploy refuses this change: rename the construct to replace it');
      }
      let newProps: Record<string, unknown>;
      try {
        newProps = sp.resolve(r.logicalId);
      } catch (e) {
        throw new CliError(`${s.stackName}/${r.logicalId}: ${(e as Error).message} (local-deploy would fail on it)`);
      }
      declared.add(r.logicalId);
      const deployedPath = before?.path !== undefined ? constructName(before.path) : undefined;
      const path = r.path !== undefined ? constructName(r.path) : declaredPaths?.get(r.logicalId) ?? deployedPath;
      const entry = planner({
        ...head(display, r.logicalId, r.type, path, before?.physicalId),
        ...(before ? { oldProps: before.properties } : {}),
        newProps,
        // As local-deploy does: the replaced resource keeps the UpdateReplacePolicy it was deployed with.
        ...(before?.updateReplacePolicy !== undefined ? { updateReplacePolicy: before.updateReplacePolicy } : {}),
      });
      if (CHANGES_REFERENCES.has(entry.action)) source.markChanging(s.stackName, r.logicalId);
      out.push(entry);
    }
    sp.finish();
    for (const r of [...source.deployedOf(s.stackName)].reverse()) {
      if (declared.has(r.logicalId)) continue;
      remember(display, r);
      out.push(planner({ ...head(display, r.logicalId, r.type, r.path && constructName(r.path), r.physicalId), ...leaving(r) }));
    }
  }
  for (const name of source.removedNested()) {
    const parentDisplay = (n: string): string => {
      const st = state.stacks.find((x) => x.stackName === n);
      if (!st?.parentStack) return n;
      return `${names.get(st.parentStack) ?? parentDisplay(st.parentStack)}/${n.startsWith(`${st.parentStack}-`) ? n.slice(st.parentStack.length + 1) : n}`;
    };
    const display = parentDisplay(name);
    for (const r of [...source.deployedOf(name)].reverse()) {
      remember(display, r);
      out.push(planner({ ...head(display, r.logicalId, r.type, r.path && constructName(r.path), r.physicalId), ...leaving(r) }));
    }
  }
  return out;
}

/** A deployed resource that leaves: its properties and DeletionPolicy (local-deploy applies it as CloudFormation does). */
function leaving(r: ResourceState): { oldProps: Record<string, unknown>; deletionPolicy?: string } {
  return { oldProps: r.properties, ...(r.deletionPolicy !== undefined ? { deletionPolicy: r.deletionPolicy } : {}) };
}
