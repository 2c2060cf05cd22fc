// fastify is bundled into the dpi CLI by esbuild, so a devDependency is enough.
// eslint-disable-next-line import/no-extraneous-dependencies
import { FastifyInstance, FastifyReply, FastifyRequest, RouteOptions } from 'fastify';

/**
 * The unversioned routes of the subscriptions service, which the vendor's subscriptions-api-legacy.md calls legacy
 * aliases of `/v1/...` (`/sub`, `/spm`, `/storages`, `/product`, and their single-record reads and updates).
 */
export const V1_ROUTES: readonly string[] = ['/sub', '/sub/:id', '/spm', '/storages', '/product', '/product/:id'];

/**
 * The `Deprecation` header of every v1 answer (vendor docs subscriptions-api-legacy.md and subscriptions-api.md: "V1
 * responses include a `Deprecation` response header"). The docs show no value: the emulator sends the RFC 9745 form,
 * a date (`@` Unix seconds), the day the vendor published v2 (its CHANGELOG.md, 0.0.8: 2026-08-11). The docs show no
 * `Sunset` or `Link` header, so none is sent.
 */
export const V1_DEPRECATION = '@1786406400';

const ALIAS = Symbol('v1-alias');

async function deprecated(_req: FastifyRequest, reply: FastifyReply, payload: unknown): Promise<unknown> {
  reply.header('Deprecation', V1_DEPRECATION);
  return payload;
}

function withDeprecation(hooks: RouteOptions['onSend']): RouteOptions['onSend'] {
  const list = hooks === undefined ? [] : Array.isArray(hooks) ? hooks : [hooks];
  return [...list, deprecated] as RouteOptions['onSend'];
}

/**
 * From here on, every route of V1_ROUTES is also served under `/v1` (same handler, in both read modes), and both
 * forms answer with the `Deprecation` header (errors included). Call before the routes are registered.
 */
export function serveV1Aliases(app: FastifyInstance): void {
  app.addHook('onRoute', (route) => {
    const custom = route as RouteOptions & { [ALIAS]?: true };
    if (!V1_ROUTES.includes(route.url) || custom[ALIAS]) return;
    route.onSend = withDeprecation(route.onSend);
    // HEAD routes are derived from the GET ones (the alias's GET gets its own).
    const methods = (Array.isArray(route.method) ? route.method : [route.method]).filter((m) => m !== 'HEAD');
    if (methods.length === 0) return;
    const alias = { ...route, method: methods, url: `/v1${route.url}`, path: `/v1${route.url}`, [ALIAS]: true };
    app.route(alias as RouteOptions);
  });
}
