// fastify is bundled into the dpi CLI by esbuild, so a devDependency is enough.
// eslint-disable-next-line import/no-extraneous-dependencies
import { FastifyInstance } from 'fastify';
import { Ctx, envelopeAttributes, fail, principal } from '../core';
import { spIdentity } from '../domain';
import { CredentialFixture } from '../fixtures';

const REGIONS = ['na', 'eu', 'fe'];
export const ASIN_BATCH_SIZE = 20;

function credentialsFrom(body: unknown): Omit<CredentialFixture, 'selling_partner_id'> {
  const { attrs } = envelopeAttributes(body, 'Service');
  for (const k of ['client_id', 'client_secret', 'region', 'refresh_token']) {
    if (typeof attrs[k] !== 'string' || attrs[k] === '') fail(400, `${k} is required`);
  }
  if (!REGIONS.includes(attrs.region as string)) fail(400, `region must be one of ${REGIONS.join(', ')}`);
  return {
    client_id: attrs.client_id as string,
    client_secret: attrs.client_secret as string,
    region: attrs.region as string,
    refresh_token: attrs.refresh_token as string,
  };
}

function findCredential(ctx: Ctx, c: Omit<CredentialFixture, 'selling_partner_id'>): CredentialFixture | undefined {
  return ctx.s.credentials.find((x) => x.client_id === c.client_id && x.client_secret === c.client_secret
    && x.region === c.region && x.refresh_token === c.refresh_token);
}

export function registerMarketplaceRoutes(app: FastifyInstance, ctx: Ctx): void {
  app.get('/service/sp/marketplaces/:rid', async (req) => {
    const who = principal(req);
    const ri = spIdentity(ctx.s, who, (req.params as Record<string, string>).rid);
    return (ri.marketplaces ?? []).map((id) => ctx.s.marketplaces.find((m) => m.id === id)).filter((m) => m !== undefined);
  });
  app.post('/service/sp/sp-id', async (req) => {
    principal(req);
    const c = credentialsFrom(req.body);
    const found = findCredential(ctx, c);
    if (!found) fail(400, 'could not obtain an access token with these credentials');
    return [{ type: 'Service', attributes: { selling_partner_id: found.selling_partner_id } }];
  });
  app.post('/service/sp/validate-creds', async (req, reply) => {
    principal(req);
    const c = credentialsFrom(req.body);
    if (!findCredential(ctx, c)) fail(400, 'credentials are invalid or the upstream call failed');
    return reply.status(204).send();
  });
  app.post('/service/sp/validate-asins/:rid', async (req) => {
    const who = principal(req);
    const ri = spIdentity(ctx.s, who, (req.params as Record<string, string>).rid);
    const { attrs } = envelopeAttributes(req.body, 'Service');
    const asins = attrs.asins;
    if (!Array.isArray(asins) || asins.length === 0 || asins.some((a) => typeof a !== 'string' || a === '')) {
      fail(400, 'asins must be a non-empty array of strings');
    }
    const markets = ri.marketplaces ?? [];
    const valid: Array<{ asin: string; attributes: Record<string, unknown> }> = [];
    const invalid: string[] = [];
    let batches = 0;
    for (let i = 0; i < asins.length; i += ASIN_BATCH_SIZE) {
      batches++;
      for (const asin of (asins as string[]).slice(i, i + ASIN_BATCH_SIZE)) {
        const hits = ctx.s.asins.filter((a) => a.asin === asin && markets.includes(a.marketplaceId));
        if (hits.length === 0) invalid.push(asin);
        else valid.push({ asin, attributes: { ...(hits[0].attributes ?? {}), marketplace_ids: hits.map((h) => h.marketplaceId) } });
      }
    }
    ctx.s.asinValidation.calls++;
    ctx.s.asinValidation.batches += batches;
    ctx.s.asinValidation.lastCallBatches = batches;
    return { valid_asins: valid, invalid_asins: invalid };
  });
}
