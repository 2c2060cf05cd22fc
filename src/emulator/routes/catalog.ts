// fastify is bundled into the dpi CLI by esbuild, so a devDependency is enough.
// eslint-disable-next-line import/no-extraneous-dependencies
import { FastifyInstance } from 'fastify';
import { ApiError, Ctx, fail, parseIntStrict, principal, queryOne } from '../core';
import { ProductFixture } from '../fixtures';

/** Creation and modification time of payload records in vendor reads (fixtures carry none). */
const FIXTURE_TIME = '2024-01-01T00:00:00';

function stageNames(ctx: Ctx, p: ProductFixture): string[] {
  if (p.stages && p.stages.length > 0) return p.stages.map((s) => s.name);
  return ctx.s.payloads.filter((x) => x.product === p.id && x.stage_id >= 1000 && x.enabled !== false).map((x) => x.name);
}

function productOr404(ctx: Ctx, raw: unknown): ProductFixture {
  const id = parseIntStrict(raw);
  const p = id === undefined ? undefined : ctx.s.products.find((x) => x.id === id);
  if (!p) fail(404, `product ${String(raw)} does not exist`);
  if (ctx.s.failingCatalogProducts.includes(p.id)) {
    throw new ApiError(500, { error: `internal error reading product ${p.id} (emulated)` });
  }
  return p;
}

export function productDefinition(p: ProductFixture): Record<string, unknown> {
  return {
    id: p.id,
    product_group_id: p.product_group_id ?? 1,
    name: p.name,
    summary: p.summary ?? '',
    description: p.description ?? null,
    worker_name: p.worker_name ?? null,
    remote_identity_type_name: p.remote_identity_type_name ?? null,
    remote_identity_type_id: p.remote_identity_type_id ?? null,
    is_storage_product: p.is_storage_product ?? 0,
    active: p.active ?? 1,
    allow_as_trial: p.allow_as_trial ?? 0,
    premium_product: p.premium_product ?? 0,
    initialize_job: p.initialize_job ?? 0,
    subscription_info: p.subscription_info ?? null,
    backend_info: p.backend_info ?? null,
    history_info: p.history_info ?? null,
    stages: p.stages ?? null,
  };
}

export function registerCatalogRoutes(app: FastifyInstance, ctx: Ctx): void {
  app.get('/service/product-cards/card', async (req) => {
    principal(req);
    return ctx.s.products.filter((p) => (p.active ?? 1) === 1).map((p) => ({
      id: p.id, name: p.name, summary: p.summary ?? '', payloads: stageNames(ctx, p),
    }));
  });
  app.get('/service/product-cards/card/:id', async (req) => {
    principal(req);
    return productDefinition(productOr404(ctx, (req.params as Record<string, string>).id));
  });
  app.get('/service/products/product/:id/payloads', async (req) => {
    principal(req);
    const p = productOr404(ctx, (req.params as Record<string, string>).id);
    const gteRaw = queryOne(req.query, 'stage_id__gte');
    let gte: number | undefined;
    if (gteRaw !== undefined) {
      gte = parseIntStrict(gteRaw);
      if (gte === undefined) fail(400, 'stage_id__gte must be an integer');
    }
    const enabledRaw = queryOne(req.query, 'enabled');
    if (enabledRaw !== undefined && enabledRaw !== 'true' && enabledRaw !== 'false') fail(400, "enabled must be 'true' or 'false'");
    const rows = ctx.s.payloads.filter((x) => x.product === p.id
      && (gte === undefined || x.stage_id >= gte)
      && (enabledRaw === undefined || (x.enabled !== false) === (enabledRaw === 'true')));
    // Vendor reads add the documented times (products-api.md, "Payload Definition Fields"); fixtures carry none.
    const times = ctx.reads === 'vendor' ? { created_at: FIXTURE_TIME, modified_at: FIXTURE_TIME } : {};
    return { data: rows.map((x) => ({ type: 'Product', id: String(x.id), attributes: { name: x.name, ...times, stage_id: x.stage_id } })) };
  });
}
