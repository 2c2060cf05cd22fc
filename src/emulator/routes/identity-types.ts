// fastify is bundled into the dpi CLI by esbuild, so a devDependency is enough.
// eslint-disable-next-line import/no-extraneous-dependencies
import { FastifyInstance, FastifyRequest } from 'fastify';
import { Ctx, fail, pathId, principal, queryOne } from '../core';
import { RemoteIdentityTypeFixture } from '../fixtures';
import { listBody } from '../views';

/** Creation time shown for remote identity types (fixtures carry none). */
const FIXTURE_TIME = '2024-01-01T00:00:00';

/**
 * Every remote identity type the emulator knows, by ID: the `remoteIdentityTypes` fixtures, then the types that
 * products and identities name (`remote_identity_type_id`, named by their `remote_identity_type_name`).
 */
export function remoteIdentityTypes(ctx: Ctx): RemoteIdentityTypeFixture[] {
  const byId = new Map<number, RemoteIdentityTypeFixture>();
  for (const t of ctx.s.remoteIdentityTypes ?? []) byId.set(t.id, t);
  const named = [...ctx.s.products, ...ctx.s.remoteIdentities];
  for (const x of named) {
    const id = x.remote_identity_type_id;
    if (id == null || byId.has(id)) continue;
    byId.set(id, { id, name: x.remote_identity_type_name ?? `Remote identity type ${id}` });
  }
  return [...byId.values()].sort((a, b) => a.id - b.id);
}

/** A type as the read mode shows it: minimal = `{type, id}` (what a product's relationship shows in the spec). */
function typeView(ctx: Ctx, t: RemoteIdentityTypeFixture): Record<string, unknown> {
  if (ctx.reads === 'minimal') return { type: 'RemoteIdentityType', id: String(t.id) };
  return {
    type: 'RemoteIdentityType',
    id: String(t.id),
    attributes: { name: t.name, auth_service: t.auth_service ?? '', created_at: FIXTURE_TIME, modified_at: FIXTURE_TIME },
  };
}

/** An exact and a case-insensitive substring filter of one text field. */
function textFilter(req: FastifyRequest, field: string): (v: string) => boolean {
  const exact = queryOne(req.query, field);
  const like = queryOne(req.query, `${field}__icontains`)?.toLowerCase();
  return (v) => (exact === undefined || v === exact) && (like === undefined || v.toLowerCase().includes(like));
}

/**
 * `GET /rit` (filters `name`, `name__icontains`, `auth_service`, `auth_service__icontains`; the list envelope) and
 * `GET /rit/{id}` (a bare record, as the vendor's remote-identity-api.md shows it; unknown: 404), in both modes.
 */
export function registerIdentityTypeRoutes(app: FastifyInstance, ctx: Ctx): void {
  app.get('/rit', async (req) => {
    principal(req);
    const name = textFilter(req, 'name');
    const auth = textFilter(req, 'auth_service');
    const rows = remoteIdentityTypes(ctx).filter((t) => name(t.name) && auth(t.auth_service ?? ''));
    return listBody(ctx, req, rows.map((t) => typeView(ctx, t)));
  });
  app.get('/rit/:id', async (req) => {
    principal(req);
    const id = pathId((req.params as Record<string, string>).id, 'remote identity type');
    const t = remoteIdentityTypes(ctx).find((x) => x.id === id);
    if (!t) fail(404, `remote identity type ${id} not found`);
    return typeView(ctx, t);
  });
}
