/**
 * Deploying many pipelines: the scheduler of dpi local-deploy (concurrency, dependency order), the service calls per
 * pipeline Create and Delete from the emulator's request log (flat in N and in the account's history), and a deploy
 * against a tight rate limit (every 429 waited out, nothing failed, nothing left).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { measureDeploy } from '../../bench/lib/deploy-run';
import { identityFixtures, synthPipelineApp } from '../../bench/lib/pipelines';
import { DEFAULT_REFRESH_TOKEN, startEmulator } from '../../src/emulator';
import { runLocalDeploy } from '../../src/local';
import { parseConcurrency, runScheduled } from '../../src/local/scheduler';

jest.setTimeout(240_000);

const tick = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

describe('runScheduled', () => {
  // a <- b <- d, a <- c, e independent
  const deps: Record<string, string[]> = { a: [], b: ['a'], c: ['a'], d: ['b'], e: [] };
  const ids = ['a', 'b', 'c', 'd', 'e'];

  test('runs every ID after what it waits for, at most `concurrency` at once', async () => {
    let running = 0;
    let peak = 0;
    const started: string[] = [];
    const finished = new Set<string>();
    const r = await runScheduled(ids, (id) => deps[id], 2, async (id) => {
      for (const d of deps[id]) expect(finished.has(d)).toBe(true);
      started.push(id);
      running++;
      peak = Math.max(peak, running);
      await tick(10);
      running--;
      finished.add(id);
      return true;
    });
    expect(peak).toBe(2);
    expect(new Set(r.finished)).toEqual(new Set(ids));
    expect(r.failed).toEqual([]);
    expect(r.notStarted).toEqual([]);
    expect(started.slice(0, 2)).toEqual(['a', 'e']);
  });

  test('concurrency 1 keeps the order of the IDs', async () => {
    const started: string[] = [];
    await runScheduled(ids, (id) => deps[id], 1, async (id) => {
      started.push(id);
      await tick(1);
      return true;
    });
    expect(started).toEqual(ids);
  });

  test('a failure starts nothing more (deploy); in-flight steps finish', async () => {
    const r = await runScheduled(ids, (id) => deps[id], 3, async (id) => {
      await tick(id === 'e' ? 30 : 5);
      return id !== 'b';
    });
    expect(r.failed).toEqual(['b']);
    expect(r.finished).toContain('e');
    expect(r.notStarted).toEqual(['d']);
  });

  test('without stopOnFailure only what waits for the failure is skipped (destroy)', async () => {
    const skipped: string[] = [];
    // Deletion order: dependents first (d waits for nothing, b waits for d, a waits for b and c).
    const dependents: Record<string, string[]> = { d: [], b: ['d'], c: [], a: ['b', 'c'], e: [] };
    const r = await runScheduled(['d', 'e', 'b', 'c', 'a'], (id) => dependents[id], 1, async (id) => id !== 'b', false, (id) => skipped.push(id));
    expect(r.failed).toEqual(['b']);
    expect(skipped).toEqual(['a']);
    expect(r.finished).toEqual(['d', 'e', 'b', 'c']);
  });

  test('--concurrency takes positive integers only', () => {
    expect(parseConcurrency('4')).toBe(4);
    expect(parseConcurrency(undefined)).toBe(10);
    expect(() => parseConcurrency('0')).toThrow(/concurrency '0' is not a positive integer/);
    expect(() => parseConcurrency('two')).toThrow(/concurrency 'two'/);
  });
});

describe('dpi local-deploy of many pipelines', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'dpi-scale-test-'));
  });
  afterAll(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  test('independent pipelines run concurrently; --concurrency 1 runs them one at a time; progress has one line per event', async () => {
    const app = join(dir, 'five');
    synthPipelineApp(app, 5);
    const emu = await startEmulator({ host: '127.0.0.1', port: 0, fixtures: identityFixtures(5), rateLimit: 'off' });
    try {
      const statuses = async (concurrency: number, destroy = false): Promise<string[]> => {
        const lines: string[] = [];
        const r = await runLocalDeploy({
          app,
          destroy,
          emulatorUrl: emu.url,
          stateFile: join(dir, `five-${concurrency}`, 'state.json'),
          refreshToken: DEFAULT_REFRESH_TOKEN,
          concurrency,
          progress: (l) => lines.push(l),
          output: () => undefined,
        });
        expect(r.success).toBe(true);
        // One progress line per event, as it happens.
        expect(lines.filter((l) => l.includes(' | ')).length).toBe(r.events.length);
        if (!destroy) expect(r.resources.map((x) => x.logicalId)).toEqual(r.resources.map((x) => x.logicalId).sort());
        return r.events.filter((e) => e.type === 'Custom::DpiNotificationPipeline').map((e) => e.status);
      };
      const parallel = await statuses(5);
      // Every pipeline started before the first one finished.
      expect(parallel.slice(0, 5)).toEqual(Array(5).fill('CREATE_IN_PROGRESS'));
      const parallelDelete = await statuses(5, true);
      expect(parallelDelete.slice(0, 5)).toEqual(Array(5).fill('DELETE_IN_PROGRESS'));
      const serial = await statuses(1);
      expect(serial).toEqual(Array(5).fill(['CREATE_IN_PROGRESS', 'CREATE_COMPLETE']).flat());
      expect(await statuses(1, true)).toEqual(Array(5).fill(['DELETE_IN_PROGRESS', 'DELETE_COMPLETE']).flat());
    } finally {
      await emu.stop();
    }
  });

  test.each([10, 100])('service calls per pipeline at N = %i: Create 4 (+3 per Lambda container), Delete 3, with or without account history', async (n) => {
    const noLimit = { requests: 1_000_000, seconds: 1 };
    // Each container (concurrent invocations run in containers of their own) reads the account, the user and the
    // product once, and exchanges the token once: as many times as containers served the deploy, never per pipeline.
    const expectedCreate = (containers: number): Record<string, number> => ({
      'GET /v2/product/{id}': containers,
      'GET /account': containers,
      'GET /user': containers,
      // The identity's health before anything is made (one read per first create attempt).
      'GET /ri/{id}': n,
      'POST /service/sp/notifications-unified/{id}': n,
      // The product's subscriptions listed before each subscription POST (what a lost answer is resolved against), and
      // once per journal the two lists that learn whether the service narrows them to an identity (narrowing.ts).
      'GET /v2/sub': n + 2,
      'POST /v2/sub': n,
    });
    const expectedDelete = {
      'GET /sub/{id}': n,
      'DELETE /service/sp/notifications-unified/{id}/{id}': n,
      'PATCH /v2/sub/{id}': n,
    };
    const fresh = await measureDeploy({ pipelines: n, rateLimit: noLimit, pipelinesPerStack: 60 });
    // At most --concurrency (10) at once per stack, so at most 10 containers per stack's function (onEvent and
    // isComplete each), the others warm; the containers that served calls each read the account, user and product once.
    expect(fresh.deploy.containers).toBeGreaterThan(1);
    expect(fresh.deploy.containers).toBeLessThanOrEqual(2 * 10 * Math.ceil(n / 60));
    expect(fresh.deploy.exchanges).toBeLessThanOrEqual(fresh.deploy.containers);
    expect(fresh.deploy.byCall).toEqual(expectedCreate(fresh.deploy.exchanges));
    expect(fresh.destroy.byCall).toEqual(expectedDelete);
    expect(fresh.left).toBe(0);
    // An account with history (the invalid subscriptions of an earlier cycle) costs the same.
    if (n === 10) {
      const again = await measureDeploy({ pipelines: n, rateLimit: noLimit, warmHistory: true });
      expect(again.deploy.byCall).toEqual(expectedCreate(again.deploy.exchanges));
      expect(again.destroy.byCall).toEqual(expectedDelete);
    }
  });

  test('40 pipelines against a tight rate limit: 429s are met and waited out, nothing fails, nothing is left', async () => {
    // The waits move the emulator's clock (the rate limit's) instead of passing: the 429s are met, no wall time is waited.
    // 10 a second: the first containers' start-up reads alone (3 each, 10 containers at once) meet the limit, however slow the machine.
    const r = await measureDeploy({ pipelines: 40, rateLimit: { requests: 10, seconds: 1 }, waits: 'emulator-clock' });
    expect(r.deploy.failures).toEqual([]);
    expect(r.destroy.failures).toEqual([]);
    expect(r.deploy.ok && r.destroy.ok).toBe(true);
    expect(r.deploy.refused + r.destroy.refused).toBeGreaterThan(0);
    // Each container that served calls (an isComplete container may serve none) reads the account, user and product once.
    expect(r.deploy.calls).toBe(4 * 40 + 2 + 3 * r.deploy.exchanges);
    expect(r.destroy.calls).toBe(3 * 40);
    expect(r.left).toBe(0);
  });
});
