/**
 * Which lifecycle journal table a command reads (`dpi orphans`, `dpi drift`, `dpi journal`): the one the stacks'
 * resources use. Every `Custom::Dpi*` resource carries its connection's table in `Connection.JournalTableName`
 * (`journalTableName`, or the name of the `journalTable` the connection was given); `--table` only confirms or picks
 * it. Resources that name different tables, or a `--table` that none of them names, are refused: judging ownership
 * against the wrong journal can end records another journal proves are someone's (see docs/cli.md, "The journal table").
 */
import { DEFAULT_JOURNAL_TABLE } from '../../contract';
import { isPlainObject } from '../../local/template';
import { CloudFormationSender, DeployedStack, exportedValues } from '../deployed';
import { CliError } from '../errors';

/** The journal table one `Custom::Dpi*` resource uses: a name, or an intrinsic the CLI cannot resolve. */
export interface TableUse {
  readonly stack: string;
  readonly logicalId: string;
  /** The table name; undefined when the template gives it as an intrinsic (`unresolved`). */
  readonly table?: string;
  /** The intrinsic (JSON) when the name is not known here, e.g. `{"Fn::ImportValue":"..."}`. */
  readonly unresolved?: string;
}

/** The table a command reads, and where its name came from (said in messages). */
export interface ChosenTable {
  readonly table: string;
  readonly from: string;
}

/**
 * The table of a resource from its properties: `Connection.JournalTableName` (a string; none: the handler's default
 * table), resolving `{"Ref": <logical ID>}` with `physicalIdOf` (the same stack's resources) and
 * `{"Fn::ImportValue": "<export>"}` with `exportOf` (the account's exports) when given.
 */
export function tableUseOf(stack: string, logicalId: string, props: Record<string, unknown> | undefined,
  physicalIdOf?: (logicalId: string) => string | undefined, exportOf?: (name: string) => string | undefined): TableUse {
  const conn = props?.Connection;
  const t = isPlainObject(conn) ? conn.JournalTableName : undefined;
  if (t === undefined || t === '') return { stack, logicalId, table: DEFAULT_JOURNAL_TABLE };
  if (typeof t === 'string') return { stack, logicalId, table: t };
  const resolved = isPlainObject(t) && typeof t.Ref === 'string' ? physicalIdOf?.(t.Ref)
    : isPlainObject(t) && typeof t['Fn::ImportValue'] === 'string' ? exportOf?.(t['Fn::ImportValue']) : undefined;
  if (resolved !== undefined && resolved !== '') return { stack, logicalId, table: resolved };
  return { stack, logicalId, unresolved: JSON.stringify(t) };
}

/** The table a resource of a deployed stack names: a `Ref` to one of its resources or parameters resolved, and an import through `exportOf`. */
export function deployedTableUse(s: DeployedStack | undefined, stack: string, logicalId: string, props: Record<string, unknown> | undefined,
  exportOf?: (name: string) => string | undefined): TableUse {
  return tableUseOf(stack, logicalId, props, (id) => s?.resources.get(id)?.physicalId ?? s?.parameters?.get(id), exportOf);
}

/**
 * The account's exports as a lookup, read (`ListExports`) only when some of `props` imports a value; undefined when
 * none does.
 */
export async function exportLookup(props: Iterable<unknown>, cfn: CloudFormationSender): Promise<((name: string) => string | undefined) | undefined> {
  if (![...props].some((p) => JSON.stringify(p ?? {}).includes('"Fn::ImportValue"'))) return undefined;
  const values = await exportedValues(cfn);
  return (name) => values.get(name);
}

/** The properties of every `Custom::Dpi*` resource of deployed stacks whose templates were read. */
export function dpiPropertiesOf(stacks: Iterable<DeployedStack | undefined>): Array<Record<string, unknown>> {
  return [...stacks].flatMap((s) => [...(s?.dpiProperties?.values() ?? [])]);
}

function stacksOf(uses: readonly TableUse[]): string {
  return [...new Set(uses.map((u) => u.stack))].join(', ');
}

/**
 * Chooses the table: `--table` when given and (`strict`) every resource uses it, or (not strict) some resource does;
 * else the one table the resources share; else, without resources, the default table. Refuses (a `CliError` naming
 * each table and its stacks) when the resources use different tables without `--table`, when `--table` is not theirs,
 * or when a table name is only known as an intrinsic and no `--table` is given.
 */
export function chooseJournalTable(flag: string | undefined, uses: readonly TableUse[], o: { command: string; source: string; strict?: boolean }):
ChosenTable {
  const byTable = new Map<string, TableUse[]>();
  for (const u of uses) if (u.table !== undefined) byTable.set(u.table, [...(byTable.get(u.table) ?? []), u]);
  const unresolved = uses.filter((u) => u.table === undefined);
  const list = [...byTable.entries()].map(([t, us]) => `${t} (stacks ${stacksOf(us)})`).join('; ');
  const given = flag !== undefined && flag !== '' ? flag : undefined;
  if (given !== undefined) {
    const others = [...byTable.keys()].filter((t) => t !== given);
    const mismatch = o.strict ? others.length > 0 : byTable.size > 0 && !byTable.has(given);
    if (mismatch) {
      throw new CliError(`${o.command}: --table ${given} is not the lifecycle journal table of the resources of ${o.source}: they use ${list}; `
        + 'reading another journal would judge what the stacks own against records they never wrote. Pass the table they use as '
        + `--table (or leave it out)${o.strict && byTable.size > 1 ? ', and --stack to check the stacks of one table at a time' : ''}`);
    }
    return { table: given, from: '--table' };
  }
  if (byTable.size > 1) {
    throw new CliError(`${o.command}: the resources of ${o.source} use different lifecycle journal tables: ${list}; pass --table NAME to `
      + `choose one${o.strict ? ' (and --stack NAME to check the stacks that use it)' : ''}`);
  }
  if (unresolved.length > 0) {
    throw new CliError(`${o.command}: the lifecycle journal table of ${unresolved.map((u) => `${u.stack}/${u.logicalId}`).slice(0, 5).join(', ')} `
      + `(${o.source}) is ${unresolved[0].unresolved}, which cannot be resolved here${byTable.size > 0 ? ` (the other resources use ${list})` : ''}: `
      + 'pass the name of the connection\'s journal table as --table NAME');
  }
  const only = [...byTable.keys()][0];
  if (only !== undefined) return { table: only, from: `the connection's journal table of the resources of ${o.source}` };
  return { table: DEFAULT_JOURNAL_TABLE, from: `the default table (no Custom::Dpi* resource in ${o.source} names one)` };
}
