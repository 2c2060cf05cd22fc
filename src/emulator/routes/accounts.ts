// fastify is bundled into the dpi CLI by esbuild, so a devDependency is enough.
// eslint-disable-next-line import/no-extraneous-dependencies
import { FastifyInstance } from 'fastify';
import { Ctx, principal } from '../core';
import { isoSeconds, listBody } from '../views';

/** Creation time shown for fixture accounts and users (they carry none). */
const FIXTURE_TIME = isoSeconds(Date.UTC(2024, 0, 1) / 1000);

/**
 * `GET /account` (one record in `data`) and `GET /user` (the vendor's list envelope, the caller's user as `data[0]`),
 * in both read modes. minimal shows `id` only (all the spec shows); vendor the documented attributes.
 */
export function registerAccountRoutes(app: FastifyInstance, ctx: Ctx): void {
  const vendor = ctx.reads === 'vendor';
  app.get('/account', async (req) => {
    const who = principal(req);
    if (!vendor) return { data: { type: 'Account', id: String(who.account) } };
    const a = ctx.s.accounts.find((x) => x.id === who.account);
    return { data: { type: 'Account', id: String(who.account), attributes: { name: a?.name ?? '' } } };
  });
  app.get('/user', async (req) => {
    const who = principal(req);
    if (!vendor) return listBody(ctx, req, [{ type: 'User', id: String(who.user) }]);
    const u = ctx.s.users.find((x) => x.id === who.user);
    const email = u?.email ?? '';
    return listBody(ctx, req, [{
      type: 'User',
      id: String(who.user),
      attributes: {
        account_id: who.account,
        first_name: u?.first_name ?? '',
        last_name: u?.last_name ?? '',
        email_address: email,
        created_at: FIXTURE_TIME,
        modified_at: FIXTURE_TIME,
        is_admin: u?.is_admin ?? 0,
        email_address_normalized: email.toLowerCase(),
      },
    }]);
  });
}
