/**
 * `dpi status` without `--subscription`: every subscription and payload of the account from one healthchecks listing
 * (vendor docs; see docs/cli.md). Where the service does not serve the listing (404) it says so and names
 * `--subscription <id>`: it never pages each subscription's transactions of a whole account.
 */
import { DpiClient, HealthcheckRecord } from '../../client';
import { latestPerPayload } from '../../client/healthchecks';
import { CliError, EXIT, toCliError } from '../errors';
import { Colour, isoSeconds, painter, renderTable, sanitize, truncate, wrapLine } from '../format';
import { IdentityHealth, identityHealth, invalidIdentitiesLine } from '../identity-health';

/** The account-wide filters of `dpi status`, as flags. */
export interface AccountStatusFilters {
  /**
   * `--status`: the rows whose newest check has this status (exact, e.g. OK or ERROR). Applied here, after the newest
   * check per payload is taken, not sent to the route: a service that answers a history of checks would otherwise
   * show an older OK of a payload whose newest check is an ERROR.
   */
  status?: string;
  /** `--payload`: `payload_name` (exact). */
  payload?: string;
  /** `--product`: `product_name__icontains`. */
  product?: string;
  /** `--name`: `subscription_name__icontains`. */
  name?: string;
  /** `--days` given explicitly: `modified_at__gte` = now - N days. */
  days?: number;
}

/** One row: a subscription's payload and its latest healthcheck. */
export interface AccountStatusRow {
  subscription_id: string;
  subscription_name: string;
  product_id: number | null;
  product_name: string;
  payload_name: string;
  status: string;
  /** `hc_runtime` (else `modified_at`) as the service shows it. */
  last_run: string;
  err_msg: string;
  error_code: string;
  transaction_id: string;
  sender: string;
}

/** What the account-wide status shows. */
export interface AccountStatus {
  accountId: string;
  /** The filters: the route's filters sent, and `status` (applied to the newest rows, not sent). */
  filters: Record<string, string>;
  rows: AccountStatusRow[];
  /** True when any row is in ERROR (exit code 1). */
  hasError: boolean;
  /** The account's remote identity health (one identity list read); `error` when that read failed. */
  identities: IdentityHealth | { error: string };
}

/** The route's query parameters of the flags (`--status` is not one of them: see `AccountStatusFilters.status`). */
export function healthcheckFilters(f: AccountStatusFilters, nowMs: number): Record<string, string> {
  const out: Record<string, string> = {};
  if (f.payload !== undefined) out.payload_name = f.payload;
  if (f.product !== undefined) out.product_name__icontains = f.product;
  if (f.name !== undefined) out.subscription_name__icontains = f.name;
  if (f.days !== undefined) out.modified_at__gte = isoSeconds(Math.floor(nowMs / 1000) - f.days * 86400).replace('T', ' ').replace(/Z$/, '');
  return out;
}

/** The message (exit code 2) where the service does not serve the listing. */
export const NOT_SERVED = 'this service does not serve the healthchecks listing (404), so dpi status cannot show the whole account '
  + 'in one call; name one subscription: dpi status --subscription <id>';

const byId = (a: string, b: string): number => {
  const x = /^\d+$/.test(a) && /^\d+$/.test(b) ? Number(a) - Number(b) : 0;
  return x !== 0 ? x : a < b ? -1 : a > b ? 1 : 0;
};

/**
 * Reads the listing (all pages) and builds the rows: the newest record per subscription and payload (a service that
 * answers a history of checks shows, and exits on, the latest only, as the monitor counts them), sorted by
 * subscription ID then payload.
 */
export async function collectAccountStatus(client: DpiClient, f: AccountStatusFilters, nowMs: number): Promise<AccountStatus> {
  const filters = healthcheckFilters(f, nowMs);
  const accountId = await client.healthchecks.accountId();
  const records = await client.healthchecks.list({ filters, accountId });
  if (records === undefined) throw new CliError(NOT_SERVED, EXIT.FAILURE);
  const rows = latestPerPayload(records).map((r: HealthcheckRecord): AccountStatusRow => ({
    subscription_id: r.subscription_id,
    subscription_name: r.subscription_name,
    product_id: r.product_id,
    product_name: r.product_name,
    payload_name: r.payload_name,
    status: r.status,
    last_run: r.hc_runtime || r.modified_at,
    err_msg: r.err_msg,
    error_code: r.error_code,
    transaction_id: r.transaction_id,
    sender: r.sender,
  })).filter((r) => f.status === undefined || r.status === f.status)
    .sort((a, b) => byId(a.subscription_id, b.subscription_id) || (a.payload_name < b.payload_name ? -1 : a.payload_name > b.payload_name ? 1 : 0));
  // Identity health never fails the status: a failed read is said in one line.
  const identities = await client.remoteIdentities.list().then(identityHealth, (e: unknown) => ({ error: toCliError(e).message }));
  return {
    accountId, filters: { ...(f.status !== undefined ? { status: f.status } : {}), ...filters }, rows, hasError: rows.some((r) => r.status === 'ERROR'), identities,
  };
}

/** Counts per status, and the subscriptions with at least one row in ERROR. */
function summaryOf(s: AccountStatus): { subscriptions: number; byStatus: Record<string, number>; subscriptionsWithError: number } {
  const byStatus: Record<string, number> = {};
  for (const r of s.rows) byStatus[r.status || '-'] = (byStatus[r.status || '-'] ?? 0) + 1;
  return {
    subscriptions: new Set(s.rows.map((r) => r.subscription_id)).size,
    byStatus,
    subscriptionsWithError: new Set(s.rows.filter((r) => r.status === 'ERROR').map((r) => r.subscription_id)).size,
  };
}

const plural = (n: number, word: string): string => `${n} ${word}${n === 1 ? '' : 's'}`;
const STATUS_COLOUR: Record<string, Colour> = { OK: 'green', ERROR: 'red' };

/** Renders the account-wide table and its summary line. */
export function renderAccountStatus(s: AccountStatus, o: { now: number; colour: boolean; width?: number }): string {
  const paint = painter(o.colour);
  const sum = summaryOf(s);
  const filters = Object.entries(s.filters).map(([k, v]) => `${k}=${v}`).join(' ');
  let text = wrapLine(`account ${s.accountId}: latest healthcheck per subscription and payload${filters ? ` (${filters})` : ''}, `
    + `at ${isoSeconds(Math.floor(o.now / 1000))}`, o.width) + '\n';
  if (s.rows.length === 0) return text + 'no healthcheck records\n' + identitiesText(s, paint);
  text += renderTable(
    ['SUBSCRIPTION', 'NAME', 'PRODUCT', 'PAYLOAD', 'STATUS', 'LAST RUN', 'DETAIL'],
    s.rows.map((r) => [
      r.subscription_id, truncate(r.subscription_name || '-', 40), truncate(r.product_name || '-', 30), r.payload_name || '-',
      paint(STATUS_COLOUR[r.status] ?? 'yellow', r.status || '-'), r.last_run || '-',
      r.status === 'ERROR' ? truncate([r.error_code, r.err_msg].filter((x) => x).join(': ') || 'ERROR', 100) : '',
    ]),
    o.width,
  );
  const counts = Object.entries(sum.byStatus).sort(([a], [b]) => (a < b ? -1 : 1)).map(([k, n]) => `${n} ${k}`).join(', ');
  const line = `${plural(s.rows.length, 'payload')} of ${plural(sum.subscriptions, 'subscription')}: ${counts}`;
  text += (sum.subscriptionsWithError > 0 ? paint('red', `${line}; ${plural(sum.subscriptionsWithError, 'subscription')} with an ERROR`) : line) + '\n';
  return text + identitiesText(s, paint);
}

/** The line naming the invalid identities (red), or that their health could not be read; '' otherwise. */
function identitiesText(s: AccountStatus, paint: (c: Colour | undefined, t: string) => string): string {
  if ('error' in s.identities) return sanitize(`remote identity health could not be read: ${s.identities.error}`) + '\n';
  const line = invalidIdentitiesLine(s.identities);
  return line ? paint('red', line) + '\n' : '';
}

/** The JSON document of `dpi status --json` without `--subscription`. */
export function accountStatusJson(s: AccountStatus, o: { now: number }): object {
  const sum = summaryOf(s);
  return {
    account_id: /^\d+$/.test(s.accountId) ? Number(s.accountId) : s.accountId,
    source: 'healthchecks',
    generated_at: Math.floor(o.now / 1000),
    filters: s.filters,
    has_error: s.hasError,
    summary: {
      payloads: s.rows.length,
      subscriptions: sum.subscriptions,
      by_status: sum.byStatus,
      subscriptions_with_error: sum.subscriptionsWithError,
    },
    rows: s.rows,
    identities: 'error' in s.identities
      ? { health: 'unread', error: s.identities.error, invalid: [] }
      : { health: s.identities.known ? 'known' : 'unknown', invalid: s.identities.invalid },
  };
}
