/** The emulator's admin routes (`/_emulator/...`): reset, fixtures, transactions, faults, clock, state, request log. */
import type { FastifyInstance } from 'fastify';
import { Ctx, fail, isObj } from '../core';
import { applyFixtures } from '../domain';
import { registerFaultRoutes, releaseHeld } from '../faults';
import { refreshHistory } from './history';
import { ingestTx, txToApi } from './transactions';
import type { EmulatorStateSnapshot } from '../state';

/** Latest clock value the admin API accepts (9999-12-31T23:59:59Z). */
const MAX_CLOCK = 253402300799;

export function snapshot(ctx: Ctx): EmulatorStateSnapshot {
  return JSON.parse(JSON.stringify({ ...ctx.s, now: ctx.now() })) as EmulatorStateSnapshot;
}

export function registerAdmin(app: FastifyInstance, ctx: Ctx, seed: () => void, clock: { set(n: number): void; advance(by: number): void }): void {
  app.post('/_emulator/reset', async (_req, reply) => {
    ctx.generation = (ctx.generation ?? 0) + 1;
    seed();
    ctx.faults.length = 0;
    releaseHeld(ctx);
    ctx.requests.length = 0;
    ctx.hits.clear();
    return reply.status(204).send();
  });
  app.post('/_emulator/fixtures', async (req, reply) => {
    const counts = applyFixtures(ctx, req.body);
    return reply.status(200).send({ loaded: counts });
  });
  app.post('/_emulator/tx', async (req, reply) => {
    // One report, or an array of reports (ingested in order; answered as an array).
    if (Array.isArray(req.body)) return reply.status(200).send({ data: req.body.map((r) => txToApi(ingestTx(ctx, r))) });
    const rec = ingestTx(ctx, req.body);
    return reply.status(200).send({ data: txToApi(rec) });
  });
  registerFaultRoutes(app, ctx);
  app.post('/_emulator/clock', async (req) => {
    const b = req.body;
    if (!isObj(b)) fail(400, 'body must be {"now": <unix seconds>} or {"advance": <seconds>}');
    const inRange = (n: number): boolean => Number.isSafeInteger(Math.floor(n)) && n >= 0 && n <= MAX_CLOCK;
    if (typeof b.now === 'number' && Number.isFinite(b.now)) {
      if (!inRange(b.now)) fail(400, `now must be Unix seconds between 0 and ${MAX_CLOCK}`);
      clock.set(b.now);
    } else if (typeof b.advance === 'number' && Number.isFinite(b.advance)) {
      if (!inRange(ctx.now() + b.advance)) fail(400, `advance must keep the clock between 0 and ${MAX_CLOCK}`);
      clock.advance(b.advance);
    } else {
      fail(400, 'body must be {"now": <unix seconds>} or {"advance": <seconds>}');
    }
    refreshHistory(ctx);
    return { now: ctx.now() };
  });
  // `exact`: with the fractions of a second (a client that runs its own clock on the emulator's starts from it).
  app.get('/_emulator/clock', async () => ({ now: ctx.now(), exact: ctx.exactNow?.() ?? ctx.now() }));
  app.get('/_emulator/state', async () => {
    refreshHistory(ctx);
    return snapshot(ctx);
  });
  app.get('/_emulator/requests', async () => ctx.requests);
  app.delete('/_emulator/requests', async (_req, reply) => {
    ctx.requests.length = 0;
    return reply.status(204).send();
  });
}
