// fastify is bundled into the dpi CLI by esbuild, so a devDependency is enough.
// eslint-disable-next-line import/no-extraneous-dependencies
import { FastifyInstance, FastifyRequest } from 'fastify';
import { Ctx, principal, queryOne } from '../core';
import { orderById } from '../filters';
import { StorageFixture } from '../fixtures';
import { intFilter, listBody } from '../views';

/**
 * A storage destination as the read mode shows it: minimal = `{type, id}` (the spec shows only `id`). vendor: name,
 * status, product and account; the v2 route adds the documented `storage_group_id` (the ID a subscription's
 * `storage_group` takes).
 */
function storageView(ctx: Ctx, x: StorageFixture, v2: boolean): Record<string, unknown> {
  if (ctx.reads === 'minimal') return { type: 'Storage', id: String(x.id) };
  return {
    type: 'Storage',
    id: String(x.id),
    attributes: {
      name: x.name ?? '',
      status: x.status ?? 'active',
      product_id: x.product ?? null,
      account_id: x.account,
      ...(v2 ? { storage_group_id: x.id } : {}),
    },
  };
}

/** `GET /storages` and `GET /v2/storages`, both modes; filters `id`, `name`, `status`, `status__not`, `product`. */
export function registerStorageRoutes(app: FastifyInstance, ctx: Ctx): void {
  const storages = (v2: boolean) => async (req: FastifyRequest): Promise<unknown> => {
    const who = principal(req);
    const status = queryOne(req.query, 'status');
    const statusNot = queryOne(req.query, 'status__not');
    const name = queryOne(req.query, 'name');
    const id = intFilter(req, 'id');
    const product = intFilter(req, 'product');
    const rows = ctx.s.storages.filter((x) => x.account === who.account
      && (status === undefined || (x.status ?? 'active') === status)
      && (statusNot === undefined || (x.status ?? 'active') !== statusNot)
      && (name === undefined || x.name === name) && (id === undefined || x.id === id)
      && (product === undefined || x.product === product));
    return listBody(ctx, req, orderById(req, rows).map((x) => storageView(ctx, x, v2)));
  };
  app.get('/storages', storages(false));
  app.get('/v2/storages', storages(true));
}
