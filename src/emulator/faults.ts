// fastify is bundled into the dpi CLI by esbuild, so a devDependency is enough.
// eslint-disable-next-line import/no-extraneous-dependencies
import type { FastifyInstance } from 'fastify';
import { Ctx, fail, Fault, isObj } from './core';

/** Longest a fault may slow or hold a request (ms): a forgotten hold ends by itself. */
export const MAX_FAULT_WAIT_MS = 60_000;

/** Validates one fault of `POST /_emulator/faults` (400 with the reason when it is not one). */
export function parseFault(f: unknown): Fault {
  if (!isObj(f)) fail(400, 'a fault must be an object');
  if (typeof f.pathPrefix !== 'string' || !f.pathPrefix.startsWith('/')) fail(400, 'pathPrefix must be a path starting with /');
  const drop = f.drop === true;
  if (f.dropResponse !== undefined && typeof f.dropResponse !== 'boolean') fail(400, 'dropResponse must be a boolean');
  if (f.hold !== undefined && typeof f.hold !== 'boolean') fail(400, 'hold must be a boolean');
  const dropResponse = f.dropResponse === true;
  const hold = f.hold === true;
  if (dropResponse && (drop || f.status !== undefined || f.body !== undefined || f.retryAfter !== undefined)) {
    fail(400, 'dropResponse cannot be combined with status, drop, body or retryAfter (the request is handled normally)');
  }
  const passes = drop || dropResponse || hold || f.delayMs !== undefined;
  const status = f.status === undefined && passes ? (drop ? 0 : -1) : f.status;
  if (typeof status !== 'number' || !Number.isInteger(status) || (status !== 0 && status !== -1 && (status < 100 || status > 599))) {
    fail(400, 'status must be an HTTP status (100-599), or 0 to drop the connection');
  }
  const count = f.count === undefined ? 1 : f.count;
  if (typeof count !== 'number' || !Number.isSafeInteger(count) || count < 1) fail(400, 'count must be a positive integer');
  if (f.method !== undefined && typeof f.method !== 'string') fail(400, 'method must be a string');
  if (f.skip !== undefined && (typeof f.skip !== 'number' || !Number.isSafeInteger(f.skip) || f.skip < 0)) fail(400, 'skip must be a non-negative integer');
  if (f.retryAfter !== undefined && (typeof f.retryAfter !== 'number' || !Number.isSafeInteger(f.retryAfter) || f.retryAfter < 0)) fail(400, 'retryAfter must be a non-negative integer (seconds)');
  if (f.delayMs !== undefined && (typeof f.delayMs !== 'number' || f.delayMs < 0 || f.delayMs > MAX_FAULT_WAIT_MS)) fail(400, `delayMs must be 0-${MAX_FAULT_WAIT_MS}`);
  return {
    method: f.method as string | undefined,
    pathPrefix: f.pathPrefix,
    status,
    count,
    ...(typeof f.skip === 'number' && f.skip > 0 ? { skip: f.skip } : {}),
    retryAfter: f.retryAfter as number | undefined,
    delayMs: f.delayMs as number | undefined,
    body: f.body,
    drop: drop || status === 0,
    ...(dropResponse ? { dropResponse: true } : {}),
    ...(hold ? { hold: true } : {}),
  };
}

/** The fault a request meets, if any (its count and skip are used up here). */
export function takeFault(ctx: Ctx, method: string, path: string): Fault | undefined {
  const i = ctx.faults.findIndex((f) => f.count > 0 && path.startsWith(f.pathPrefix) && (!f.method || f.method.toUpperCase() === method));
  if (i < 0) return undefined;
  const f = ctx.faults[i];
  if ((f.skip ?? 0) > 0) {
    f.skip! -= 1;
    return undefined;
  }
  f.count -= 1;
  if (f.count <= 0) ctx.faults.splice(i, 1);
  return f;
}

/**
 * Waits as the fault says before the request goes on: `delayMs` (service time), then, for a `hold` fault, until the test releases it
 * (`POST /_emulator/faults/release`), the faults are cleared, the emulator resets or stops, or MAX_FAULT_WAIT_MS pass.
 */
export async function waitAsFaultSays(ctx: Ctx, f: Fault): Promise<void> {
  if (f.delayMs && f.delayMs > 0) await (ctx.sleep ? ctx.sleep(f.delayMs) : new Promise((r) => setTimeout(r, f.delayMs)));
  if (!f.hold) return;
  await new Promise<void>((resolve) => {
    const timer = setTimeout(() => release(), MAX_FAULT_WAIT_MS);
    const release = (): void => {
      clearTimeout(timer);
      const at = ctx.held.indexOf(release);
      if (at >= 0) ctx.held.splice(at, 1);
      resolve();
    };
    ctx.held.push(release);
  });
}

/** Lets held requests go on, oldest first: `count` of them (default all). Returns how many were released. */
export function releaseHeld(ctx: Ctx, count = ctx.held.length): number {
  const released = ctx.held.slice(0, count);
  for (const r of released) r();
  return released.length;
}

/** `POST/GET/DELETE /_emulator/faults`, `GET /_emulator/faults/held` and `POST /_emulator/faults/release`. */
export function registerFaultRoutes(app: FastifyInstance, ctx: Ctx): void {
  app.post('/_emulator/faults', async (req, reply) => {
    const list = Array.isArray(req.body) ? req.body : [req.body];
    const added = list.map(parseFault);
    ctx.faults.push(...added);
    return reply.status(200).send({ faults: ctx.faults });
  });
  app.delete('/_emulator/faults', async (_req, reply) => {
    ctx.faults.length = 0;
    releaseHeld(ctx);
    return reply.status(204).send();
  });
  app.get('/_emulator/faults', async () => ({ faults: ctx.faults }));
  app.get('/_emulator/faults/held', async () => ({ held: ctx.held.length }));
  app.post('/_emulator/faults/release', async (req) => {
    const b = req.body ?? {};
    if (!isObj(b)) fail(400, 'body must be {} or {"count": <positive integer>}');
    if (b.count !== undefined && (typeof b.count !== 'number' || !Number.isSafeInteger(b.count) || b.count < 1)) fail(400, 'count must be a positive integer');
    const released = releaseHeld(ctx, b.count as number | undefined);
    return { released, held: ctx.held.length };
  });
}
