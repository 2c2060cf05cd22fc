/**
 * The request budget of a `dpi` command: the service allows 1,000 requests per rolling 5 minutes per client address
 * (vendor docs), and a command run beside a deploy shares that limit with the deploy's provider containers when it
 * runs behind the same address. The provider's containers take their turns from the budget in the lifecycle journal
 * table (src/handler/rate-budget.ts); a command that reads that table from DynamoDB (`dpi drift`, `dpi orphans`, or any
 * service command given `--budget-table`) takes its turns there too, at the pace `--request-budget` (or
 * `DPI_REQUEST_BUDGET`) sets, by default the documented one. Where it cannot (no table, `--local`, no permission to
 * write the table's `budget#` items), it says so once and paces itself by the service's 429s, waiting them out
 * patiently (`CLI_MAX_RATE_LIMIT_WAIT_MS` per call).
 */
import { ServiceEndpoints } from '../client';
import { BudgetPace, parseBudget, RequestBudget } from '../client/budget';
import { REQUEST_BUDGET_ENV } from '../contract';
import { CliError } from './errors';
import { CliIo } from './io';
import { dynamoBudget } from '../handler/rate-budget';

/** The documented limit: 1,000 requests per 5 minutes (the provider's `rateLimitRequests` / `rateLimitWindow` defaults). */
export const DOCUMENTED_BUDGET = '1000/300';

/** The pace of a command: `--request-budget`, else `DPI_REQUEST_BUDGET`, else the documented limit; undefined: `off`. */
export function cliPace(flag: string | undefined, env: CliIo['env']): BudgetPace | undefined {
  const [value, name] = flag !== undefined ? [flag, '--request-budget'] : env[REQUEST_BUDGET_ENV] !== undefined
    ? [env[REQUEST_BUDGET_ENV], REQUEST_BUDGET_ENV] : [DOCUMENTED_BUDGET, 'the documented limit'];
  try {
    return parseBudget(value, name);
  } catch (e) {
    throw new CliError((e as Error).message);
  }
}

/** The DynamoDB table a command's budget lives in. */
export interface BudgetTable {
  readonly table: string;
  /** A DynamoDB-compatible endpoint (`--endpoint`). */
  readonly endpoint?: string;
}

/**
 * The budget of a command's client in `where` (the journal table it reads, or `--budget-table`), shared with the
 * provider containers of the same service address; undefined when the pace is `off`.
 */
export function cliBudget(where: BudgetTable, endpoints: ServiceEndpoints, pace: BudgetPace | undefined, io: CliIo): RequestBudget | undefined {
  if (pace === undefined) return undefined;
  let scope: string;
  try {
    scope = new URL(endpoints.baseUrl).origin;
  } catch {
    scope = endpoints.baseUrl;
  }
  const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
  return dynamoBudget({ table: where.table, ...(where.endpoint ? { endpoint: where.endpoint } : {}), sleep, provided: true }, scope, pace,
    (table, reason) => io.stderr.write(`dpi: the request budget in table ${table} could not be used (${reason}); this command paces its `
      + 'requests by the service\'s 429s only\n'));
}
