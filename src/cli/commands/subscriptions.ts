/**
 * `dpi subscriptions`: the account's subscriptions as the service lists them (`GET /v2/sub`), i.e. what remains in the
 * service, e.g. after a destroy. The interface specification shows a subscription's ID and status only (minimal
 * reads); product, identity and name are shown where the service shows them, `-` elsewhere.
 */
// commander is bundled into the dpi CLI by esbuild, so a devDependency is enough.
// eslint-disable-next-line import/no-extraneous-dependencies
import { Command } from 'commander';
import { Subscription } from '../../client';
import { addConnectionOptions, ConnectionFlags } from '../connection';
import { addJsonOption, printJson, RunContext } from '../context';
import { CliError, toCliError } from '../errors';
import { renderTable, terminalWidth } from '../format';
import { addLocalOptions, openService } from './local-service';

interface SubscriptionsFlags extends ConnectionFlags {
  local?: boolean;
  state: string;
  reads?: string;
  product?: string;
  status?: string;
  json?: boolean;
}

const dash = (v: unknown): string => (v === undefined || v === null || v === '' ? '-' : String(v));

/** The note printed when the reads show no more than the ID and status of any subscription. */
export const MINIMAL_READS_NOTE = 'the service shows only the ID and status of each subscription (the interface specification\'s reads): '
  + 'product, identity and name are not shown';

/** `dpi subscriptions` */
export function subscriptionsCommand(ctx: RunContext): Command {
  const cmd = new Command('subscriptions')
    .description('the account\'s subscriptions as the service lists them (what remains in the service, e.g. after a destroy); '
      + 'with --local, those of the dpi local-deploy emulator')
    .option('--product <id>', 'only the subscriptions of this product (the service\'s filter)')
    .option('--status <status>', 'only the subscriptions with this status (e.g. active, cancelled)');
  addLocalOptions(cmd);
  addJsonOption(cmd);
  addConnectionOptions(cmd);
  return cmd.action(async (opts: SubscriptionsFlags) => {
    if (opts.product !== undefined && !/^\d+$/.test(opts.product)) throw new CliError(`--product: expected an integer product ID, got '${opts.product}'`);
    const service = await openService(ctx, opts);
    let subs: Subscription[];
    try {
      subs = await service.client.subscriptions.list(opts.product !== undefined ? { product: opts.product } : {});
    } catch (e) {
      throw toCliError(e, { origins: service.origins });
    } finally {
      await service.close();
    }
    if (opts.status !== undefined) subs = subs.filter((s) => s.status === opts.status);
    if (opts.json) return printJson(ctx, subs);
    const minimal = subs.length > 0 && subs.every((s) => s.product === undefined && s.remote_identity === undefined && s.name === undefined);
    if (minimal) ctx.io.stderr.write(`${MINIMAL_READS_NOTE}\n`);
    const counts = new Map<string, number>();
    for (const s of subs) counts.set(s.status, (counts.get(s.status) ?? 0) + 1);
    const where = opts.local && service.embedded ? ' in the local-deploy emulator' : '';
    const byStatus = [...counts].map(([k, n]) => `${n} ${k}`).join(', ');
    ctx.io.stdout.write(`${subs.length} subscription${subs.length === 1 ? '' : 's'}${where}${byStatus ? ` (${byStatus})` : ''}\n`);
    if (subs.length === 0) return;
    ctx.io.stdout.write(renderTable(
      ['ID', 'STATUS', 'PRODUCT', 'IDENTITY', 'NAME'],
      subs.map((s) => [s.id, s.status, dash(s.product), dash(s.remote_identity), dash(s.name)]),
      terminalWidth(ctx.io),
    ));
  });
}
