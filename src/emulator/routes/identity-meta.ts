// fastify is bundled into the dpi CLI by esbuild, so a devDependency is enough.
// eslint-disable-next-line import/no-extraneous-dependencies
import { FastifyInstance, FastifyRequest } from 'fastify';
import { Ctx, fail, pathId, principal, queryOne } from '../core';
import { META_FORMATS } from '../domain';
import { RemoteIdentityFixture, RemoteIdentityMetaFixture } from '../fixtures';
import { intFilter, listBody } from '../views';

/** Creation time shown for fixture meta records (they carry none). */
const FIXTURE_TIME = '2024-01-01T00:00:00';

/**
 * The vendor's names of its meta keys (tutorials/amazon-identities/amazon-openbridge-identities/
 * amazon-identity-configuration.md, "Seller meta keys" and "Vendor meta keys"); key 32 is the seller's
 * `selling_partner_id` and the vendor's (type 18) `vendor_group_id`.
 */
const KEY_NAMES: Record<number, string> = {
  7: 'refresh_token',
  26: 'client_id',
  27: 'client_secret',
  30: 'country_code',
  31: 'region',
  32: 'selling_partner_id',
  67: 'is_private_app',
};

function keyName(m: RemoteIdentityMetaFixture, identity: RemoteIdentityFixture | undefined): string {
  if (m.key_name !== undefined) return m.key_name;
  if (m.remote_identity_type_meta_key === 32 && identity?.remote_identity_type_id === 18) return 'vendor_group_id';
  return KEY_NAMES[m.remote_identity_type_meta_key] ?? `meta_key_${m.remote_identity_type_meta_key}`;
}

function relationships(m: RemoteIdentityMetaFixture): Record<string, unknown> {
  return {
    remote_identity: { data: { type: 'RemoteIdentity', id: String(m.remote_identity) } },
    remote_identity_type_meta_key: { data: { type: 'RemoteIdentityTypeMetaKey', id: String(m.remote_identity_type_meta_key) } },
  };
}

/** A `GET /rim` record: the value as the fixture holds it (an `ENCRYPTED_*` one is the ciphertext given, never made up). */
function metaView(m: RemoteIdentityMetaFixture, identity: RemoteIdentityFixture | undefined): Record<string, unknown> {
  return {
    type: 'RemoteIdentityMeta',
    id: String(m.id),
    attributes: {
      remote_identity_id: m.remote_identity,
      remote_identity_type_meta_key: m.remote_identity_type_meta_key,
      remote_identity_type_meta_key_name: keyName(m, identity),
      meta_value: m.meta_value,
      meta_format: m.meta_format,
      created_at: FIXTURE_TIME,
      modified_at: FIXTURE_TIME,
    },
    relationships: relationships(m),
  };
}

/** A `GET /ri/{id}/rim-overview` record: which key is present and its format, without the value. */
function overviewView(m: RemoteIdentityMetaFixture, identity: RemoteIdentityFixture | undefined): Record<string, unknown> {
  return {
    type: 'RemoteIdentityMetaOverview',
    id: String(m.id),
    attributes: {
      remote_identity_id: m.remote_identity,
      remote_identity_type_meta_key: m.remote_identity_type_meta_key,
      remote_identity_type_meta_key_name: keyName(m, identity),
      meta_format: m.meta_format,
      created_at: FIXTURE_TIME,
      modified_at: FIXTURE_TIME,
    },
    relationships: relationships(m),
  };
}

/** `meta_format`: one of the four documented formats (400 otherwise); undefined when absent. */
function formatFilter(req: FastifyRequest): string | undefined {
  const f = queryOne(req.query, 'meta_format');
  if (f !== undefined && !META_FORMATS.includes(f)) fail(400, `meta_format must be one of ${META_FORMATS.join(', ')} (got ${JSON.stringify(f)})`);
  return f;
}

/**
 * The identity meta routes of the vendor's remote-identity-api.md, in vendor reads only (the spec shows neither; in
 * minimal reads they answer 404 like any unknown route, as `POST /v2/spp` does):
 * - `GET /rim`: the meta records of the identities the caller created (not those shared with it: they hold the
 *   creator's credentials), filters `remote_identity`, `meta_format`, the list envelope (`page`, `page_size`);
 * - `GET /ri/{id}/rim-overview`: the keys present for one identity the caller created (404 otherwise), without their
 *   values; filter `remote_identity_type_meta_key_name`; the list envelope.
 */
export function registerIdentityMetaRoutes(app: FastifyInstance, ctx: Ctx): void {
  const identityOf = (id: number): RemoteIdentityFixture | undefined => ctx.s.remoteIdentities.find((r) => r.id === id);
  app.get('/rim', async (req) => {
    const who = principal(req);
    const identity = intFilter(req, 'remote_identity');
    const format = formatFilter(req);
    const rows = (ctx.s.remoteIdentityMeta ?? []).filter((m) => identityOf(m.remote_identity)?.account === who.account
      && (identity === undefined || m.remote_identity === identity)
      && (format === undefined || m.meta_format === format));
    return listBody(ctx, req, rows.sort((a, b) => a.id - b.id).map((m) => metaView(m, identityOf(m.remote_identity))));
  });
  app.get('/ri/:id/rim-overview', async (req) => {
    const who = principal(req);
    const id = pathId((req.params as Record<string, string>).id, 'remote identity');
    const identity = identityOf(id);
    if (!identity || identity.account !== who.account) fail(404, `remote identity ${id} not found`);
    const name = queryOne(req.query, 'remote_identity_type_meta_key_name');
    const rows = (ctx.s.remoteIdentityMeta ?? []).filter((m) => m.remote_identity === id
      && (name === undefined || keyName(m, identity) === name));
    return listBody(ctx, req, rows.sort((a, b) => a.id - b.id).map((m) => overviewView(m, identity)));
  });
}
