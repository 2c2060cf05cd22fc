// fastify is bundled into the dpi CLI by esbuild, so a devDependency is enough.
// eslint-disable-next-line import/no-extraneous-dependencies
import { FastifyInstance, FastifyRequest } from 'fastify';
import { Ctx, fail, pathId, principal } from '../core';
import { boolFilter, orderById, timeFilter, timeOf } from '../filters';
import { RemoteIdentityFixture } from '../fixtures';
import { intFilter, listBody } from '../views';
import { registerIdentityMetaRoutes } from './identity-meta';
import { registerIdentityTypeRoutes } from './identity-types';

/** Creation time shown for fixture identities (they carry none). */
const FIXTURE_TIME = '2024-01-01T00:00:00';

function invalidatedAt(r: RemoteIdentityFixture): string | null {
  return r.invalid_identity === 1 ? FIXTURE_TIME : null;
}

/**
 * Whether `account` may use the identity: it created it, or the identity is shared with it (vendor doc
 * remote-identity-api.md, "List Shared Remote Identities"; subscriptions-api.md, "Remote identity reconciliation").
 */
export function usableBy(r: RemoteIdentityFixture, account: number): boolean {
  return r.account === account || (r.shared_with ?? []).includes(account);
}

/** A remote identity as the read mode shows it: minimal = `{type, id}` (the spec shows only `id`). */
function identityView(ctx: Ctx, r: RemoteIdentityFixture): Record<string, unknown> {
  if (ctx.reads === 'minimal') return { type: 'RemoteIdentity', id: String(r.id) };
  const user = r.user ?? ctx.s.users.find((u) => u.account === r.account)?.id ?? null;
  return {
    type: 'RemoteIdentity',
    id: String(r.id),
    attributes: {
      name: r.name ?? '',
      created_at: FIXTURE_TIME,
      modified_at: FIXTURE_TIME,
      remote_unique_id: r.remote_unique_id ?? String(r.id),
      account_id: r.account,
      user_id: user,
      invalid_identity: r.invalid_identity ?? 0,
      invalidated_at: invalidatedAt(r),
      notified_at: null,
      notification_counter: 0,
      region: r.region ?? 'global',
      email: r.email ?? '',
      oauth_id: null,
    },
    relationships: {
      remote_identity_type: { data: { type: 'RemoteIdentityType', id: String(r.remote_identity_type_id) } },
      account: { data: { type: 'Account', id: String(r.account) } },
      user: { data: user === null ? null : { type: 'User', id: String(user) } },
      remote_identity_type_application: { data: null },
      oauth: { data: null },
    },
  };
}

/**
 * `GET /sri` (the identities the caller may use: its own and those shared with it), `GET /ri` (the identities the
 * caller created), both with the filters `id`, `remote_identity_type`, `invalid_identity`, the
 * time lookups of `invalidated_at`, `ordering=-id`), and `GET /ri/{id}` (an identity the caller may use; any other is a 404), in both modes.
 */
export function registerIdentityRoutes(app: FastifyInstance, ctx: Ctx): void {
  const identities = (shared: boolean) => async (req: FastifyRequest): Promise<unknown> => {
    const who = principal(req);
    const id = intFilter(req, 'id');
    const type = intFilter(req, 'remote_identity_type');
    const invalid = boolFilter(req, 'invalid_identity');
    const invalidated = timeFilter(req, 'invalidated_at');
    const rows = ctx.s.remoteIdentities.filter((r) => (shared ? usableBy(r, who.account) : r.account === who.account)
      && (id === undefined || r.id === id)
      && (type === undefined || r.remote_identity_type_id === type)
      && (invalid === undefined || (r.invalid_identity ?? 0) === invalid)
      && invalidated(timeOf(invalidatedAt(r))));
    return listBody(ctx, req, orderById(req, rows).map((r) => identityView(ctx, r)));
  };
  registerIdentityTypeRoutes(app, ctx);
  // The identity meta routes: vendor reads only (the spec shows none; minimal: 404 as any unknown route).
  if (ctx.reads === 'vendor') registerIdentityMetaRoutes(app, ctx);
  app.get('/sri', identities(true));
  app.get('/ri', identities(false));
  app.get('/ri/:id', async (req) => {
    const who = principal(req);
    const id = pathId((req.params as Record<string, string>).id, 'remote identity');
    const r = ctx.s.remoteIdentities.find((x) => x.id === id);
    if (!r || !usableBy(r, who.account)) fail(404, `remote identity ${id} not found`);
    return { data: identityView(ctx, r) };
  });
}
