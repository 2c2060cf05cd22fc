// commander is bundled into the dpi CLI by esbuild, so a devDependency is enough.
// eslint-disable-next-line import/no-extraneous-dependencies
import { Command } from 'commander';
import { HistoryInfo, ProductDefinition, ServiceError } from '../../client';
import { addConnectionOptions, ConnectionFlags } from '../connection';
import { addJsonOption, connectFor, printJson, RunContext } from '../context';
import { CliError, toCliError } from '../errors';
import { renderTable, sanitize, terminalWidth } from '../format';
import { healthCell, healthOf, HEALTH_NOT_SHOWN, identityHealth, invalidIdentitiesLine } from '../identity-health';

interface JsonFlag { json?: boolean }

/** Remote identity types of marketplace selling-partner accounts. */
export const SP_IDENTITY_TYPES: Readonly<Record<number, string>> = { 17: 'seller', 18: 'vendor' };

const dash = (v: unknown): string => (v === undefined || v === null || v === '' ? '-' : String(v));

/** `dpi products [--storage]` */
export function productsCommand(ctx: RunContext): Command {
  const cmd = new Command('products')
    .description('list source products (or, with --storage, storage products): IDs for Subscription productId')
    .option('--storage', 'list storage (destination) products instead of source products');
  addJsonOption(cmd);
  addConnectionOptions(cmd);
  return cmd.action(async (opts: ConnectionFlags & JsonFlag & { storage?: boolean }) => {
    const { client, origins } = connectFor(ctx, opts);
    try {
      const products = await client.products.list({ isStorageProduct: opts.storage ? 1 : 0 });
      if (opts.json) return printJson(ctx, products);
      ctx.io.stdout.write(renderTable(
        ['ID', 'NAME', 'ACTIVE', 'REMOTE IDENTITY TYPE', 'REQUIRED META FIELDS'],
        products.map((p) => [
          p.id, p.name, p.active === 1 ? 'yes' : 'no', dash(p.remote_identity_type?.id),
          (p.required_meta_fields ?? []).join(', ') || '-',
        ]),
        terminalWidth(ctx.io),
      ));
    } catch (e) {
      throw toCliError(e, { origins });
    }
  });
}

/** One row of `dpi stages`. */
export interface StageRow {
  stage_id: number;
  name: string;
  /** The payload is returned with `enabled=true`. */
  enabled: boolean;
  /** `restricted_to` of the card's stage record, when any. */
  restricted_to: string[] | null;
  /** The card's history_info records of the stage (one per subproduct). */
  history: Array<Pick<HistoryInfo, 'subproduct_id' | 'days' | 'max_request_time' | 'schedule_offset'>>;
}

/** `dpi stages PRODUCT_ID` */
export function stagesCommand(ctx: RunContext): Command {
  const cmd = new Command('stages')
    .description('named stages (stage_id >= 1000) of a product, with the history limits of each (for stageIds and HistoryRequest)')
    .argument('<product-id>', 'product ID (see dpi products)');
  addJsonOption(cmd);
  addConnectionOptions(cmd);
  return cmd.action(async (productId: string, opts: ConnectionFlags & JsonFlag) => {
    if (!/^\d+$/.test(productId)) throw new CliError(`product ID must be an integer, got '${productId}'`);
    const { client, origins } = connectFor(ctx, opts);
    let card: ProductDefinition;
    let rows: StageRow[];
    try {
      const [all, enabled, def] = await Promise.all([
        client.catalog.listPayloads(productId, { stageIdGte: 1000 }),
        client.catalog.listPayloads(productId, { stageIdGte: 1000, enabled: true }),
        client.catalog.getCard(productId),
      ]);
      card = def;
      const enabledIds = new Set(enabled.map((p) => p.id));
      rows = all
        .filter((p) => p.stage_id >= 1000)
        .sort((a, b) => a.stage_id - b.stage_id)
        .map((p) => ({
          stage_id: p.stage_id,
          name: p.name,
          enabled: enabledIds.has(p.id),
          restricted_to: card.stages?.find((s) => s.stage_id === p.stage_id)?.restricted_to ?? null,
          history: (card.history_info ?? []).filter((h) => h.stage_id === p.stage_id).map((h) => ({
            subproduct_id: h.subproduct_id, days: h.days, max_request_time: h.max_request_time, schedule_offset: h.schedule_offset,
          })),
        }));
    } catch (e) {
      if (e instanceof ServiceError && e.status === 404) throw new CliError(`product ${productId} does not exist (see dpi products)`);
      throw toCliError(e, { origins });
    }
    if (opts.json) return printJson(ctx, { product_id: Number(productId), product_name: card.name, stages: rows });
    if (rows.length === 0) {
      ctx.io.stdout.write(`product ${productId} (${sanitize(card.name)}) has no named stages (stage_id >= 1000)\n`);
      return;
    }
    const multi = rows.some((r) => r.history.length > 1);
    const hist = (r: StageRow, f: (h: StageRow['history'][number]) => number | null): string =>
      r.history.length === 0 ? '-' : r.history.map((h) => (multi ? `${h.subproduct_id}: ${dash(f(h))}` : dash(f(h)))).join(', ');
    ctx.io.stdout.write(`product ${productId} (${sanitize(card.name)})\n`);
    ctx.io.stdout.write(renderTable(
      ['STAGE ID', 'NAME', 'ENABLED', 'HISTORY DAYS', 'MAX REQUEST AGE (DAYS)', 'RESTRICTED TO'],
      rows.map((r) => [
        String(r.stage_id), r.name, r.enabled ? 'yes' : 'no',
        hist(r, (h) => h.days), hist(r, (h) => h.max_request_time), r.restricted_to ? r.restricted_to.join(', ') : '-',
      ]),
      terminalWidth(ctx.io),
    ));
  });
}

/** `dpi identities` */
export function identitiesCommand(ctx: RunContext): Command {
  const cmd = new Command('identities')
    .description('remote identities of the account (IDs for remoteIdentityId); marks selling-partner seller (17) and vendor (18) identities '
      + 'and the ones the service marks invalid (revoked or expired: the seller must re-authorize them)');
  addJsonOption(cmd);
  addConnectionOptions(cmd);
  return cmd.action(async (opts: ConnectionFlags & JsonFlag) => {
    const { client, origins } = connectFor(ctx, opts);
    try {
      const ids = await client.remoteIdentities.list();
      const health = identityHealth(ids);
      if (!health.known) ctx.io.stderr.write(HEALTH_NOT_SHOWN + '\n');
      if (opts.json) {
        return printJson(ctx, ids.map((r) => ({
          ...r,
          sp_account_type: SP_IDENTITY_TYPES[r.remote_identity_type_id ?? -1] ?? null,
          invalid_identity: r.invalid_identity ?? null,
          invalidated_at: r.invalidated_at ?? null,
          health: healthOf(r),
        })));
      }
      ctx.io.stdout.write(renderTable(
        ['ID', 'NAME', 'TYPE', 'TYPE NAME', 'SP ACCOUNT', 'HEALTH'],
        ids.map((r) => [r.id, dash(r.name), dash(r.remote_identity_type_id), dash(r.remote_identity_type_name),
          SP_IDENTITY_TYPES[r.remote_identity_type_id ?? -1] ?? '-', healthCell(r)]),
        terminalWidth(ctx.io),
      ));
      const line = invalidIdentitiesLine(health);
      if (line) ctx.io.stderr.write(line + '\n');
    } catch (e) {
      throw toCliError(e, { origins });
    }
  });
}

/** `dpi storages` */
export function storagesCommand(ctx: RunContext): Command {
  const cmd = new Command('storages').description('active storage destinations of the account (IDs for storageGroupId)');
  addJsonOption(cmd);
  addConnectionOptions(cmd);
  return cmd.action(async (opts: ConnectionFlags & JsonFlag) => {
    const { client, origins } = connectFor(ctx, opts);
    try {
      const rows = await client.storages.list();
      if (opts.json) return printJson(ctx, rows);
      ctx.io.stdout.write(renderTable(
        ['ID', 'NAME', 'STATUS', 'STORAGE PRODUCT'],
        rows.map((s) => [s.id, dash(s.name), dash(s.status), dash(s.product)]),
        terminalWidth(ctx.io),
      ));
    } catch (e) {
      throw toCliError(e, { origins });
    }
  });
}
