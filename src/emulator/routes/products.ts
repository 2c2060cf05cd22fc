// fastify is bundled into the dpi CLI by esbuild, so a devDependency is enough.
// eslint-disable-next-line import/no-extraneous-dependencies
import { FastifyInstance, FastifyRequest } from 'fastify';
import { Ctx, fail, pathId, principal, queryOne } from '../core';
import { boolFilter } from '../filters';
import { ProductFixture } from '../fixtures';
import { intFilter, listBody } from '../views';

/** Creation and modification time shown for products in vendor reads (fixtures carry none). */
const FIXTURE_TIME = '2024-01-01T00:00:00';

/**
 * A Product record (subscriptions service), as the spec shows it; vendor reads add the documented extras `summary`,
 * `created_at` and `modified_at` (vendor doc products-api.md, "Product Fields").
 */
export function productRecord(p: ProductFixture, vendor = false): Record<string, unknown> {
  return {
    type: 'Product',
    id: String(p.id),
    attributes: {
      active: p.active ?? 1,
      name: p.name,
      ...(vendor ? { summary: p.summary ?? '' } : {}),
      is_storage_product: p.is_storage_product ?? 0,
      ...(vendor ? { created_at: FIXTURE_TIME, modified_at: FIXTURE_TIME } : {}),
      required_meta_fields: p.required_meta_fields ?? [],
    },
    relationships: {
      remote_identity_type: {
        data: p.remote_identity_type_id == null ? null : { type: 'RemoteIdentityType', id: String(p.remote_identity_type_id) },
      },
    },
  };
}

/**
 * Product records of the subscriptions service, both modes: `GET /product`, `GET /v2/product` (all products, as the
 * spec says; filters `is_storage_product`, `remote_identity_type`, `active`, `name`, `name__icontains` when given,
 * vendor doc products-api.md), `GET /v2/product/{id}` and
 * `GET /product/{id}` (a bare record without `data`, as the vendor documents it).
 */
export function registerProductRoutes(app: FastifyInstance, ctx: Ctx): void {
  const vendor = ctx.reads === 'vendor';
  const products = async (req: FastifyRequest): Promise<unknown> => {
    principal(req);
    const storage = boolFilter(req, 'is_storage_product');
    const active = boolFilter(req, 'active');
    const rit = intFilter(req, 'remote_identity_type');
    const name = queryOne(req.query, 'name');
    const nameLike = queryOne(req.query, 'name__icontains')?.toLowerCase();
    const rows = ctx.s.products.filter((p) => (name === undefined || p.name === name)
      && (nameLike === undefined || p.name.toLowerCase().includes(nameLike))
      && (storage === undefined || (p.is_storage_product ?? 0) === storage)
      && (active === undefined || (p.active ?? 1) === active)
      && (rit === undefined || p.remote_identity_type_id === rit));
    return listBody(ctx, req, rows.map((p) => productRecord(p, vendor)));
  };
  app.get('/product', products);
  app.get('/v2/product', products);
  const oneProduct = (req: FastifyRequest): ProductFixture => {
    principal(req);
    const id = pathId((req.params as Record<string, string>).id, 'product');
    const p = ctx.s.products.find((x) => x.id === id);
    if (!p) fail(404, `product ${id} not found`);
    return p;
  };
  app.get('/v2/product/:id', async (req) => ({ data: productRecord(oneProduct(req), vendor) }));
  app.get('/product/:id', async (req) => productRecord(oneProduct(req), vendor));
}
