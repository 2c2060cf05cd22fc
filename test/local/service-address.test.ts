/**
 * The service keeps its address from one deploy to the next, and with it the rate window of its client address and
 * the provider's request budget (scoped by the service address). The embedded emulator of `dpi local-deploy` does the
 * same: each run listens where the state's last one did, so a destroy right after a deploy meets the deploy's window
 * and the budget that counted it. When that port is taken, the run says so and both start afresh at the new address.
 * The REAL bundled handler.
 */
import { existsSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { synthTinyApp } from './apps';
import { tempDir } from './helpers';
import { defaultHandlerPath, readJournalState, runLocalDeploy } from '../../src/local';
import { stopWarmContainers } from '../../src/local/containers';
import { dpi } from '../cli/helpers';

const BUNDLE = defaultHandlerPath();
if (!existsSync(BUNDLE)) throw new Error(`${BUNDLE} is missing: run 'npx projen bundle' before the local-deploy tests`);

jest.setTimeout(120_000);

let tmp: { dir: string; cleanup: () => void };
beforeEach(() => {
  tmp = tempDir();
});
afterEach(() => tmp.cleanup());
afterAll(() => stopWarmContainers());

const AT = /^Embedded emulator at (http:\/\/127\.0\.0\.1:\d+) /;

/** The budget counters of the run's journal: `budget#<service address>`. */
function budgetScopes(stateDir: string): string[] {
  const journal = readJournalState(join(stateDir, 'journal.json'));
  const out: string[] = [];
  for (const t of journal.tables) {
    for (const item of t.Items as Array<Record<string, { S?: string }>>) {
      if (item.sk?.S === 'counter' && item.pk?.S?.startsWith('budget#')) out.push(item.pk.S);
    }
  }
  return out.sort();
}

/** The request times the emulator's state file keeps in its rate window. */
function windowHits(stateDir: string): number {
  const saved = JSON.parse(readFileSync(join(stateDir, 'emulator-state.json'), 'utf8')) as { rateHits?: Record<string, number[]> };
  return Object.values(saved.rateHits ?? {}).flat().length;
}

test('a destroy right after a deploy meets the same service address, its rate window and its request budget; a taken port starts both afresh', async () => {
  const app = synthTinyApp(join(tmp.dir, 'cdk.out'), { subscriptionName: 'orders' });
  const stateDir = join(tmp.dir, 'state');
  const stateFile = join(stateDir, 'local-state.json');
  const run = async (destroy: boolean): Promise<{ url: string; lines: string[]; requests: number }> => {
    const lines: string[] = [];
    const r = await runLocalDeploy({ app, stateFile, destroy, progress: (l) => lines.push(l), output: () => undefined });
    expect(r.error).toBeUndefined();
    expect(r.success).toBe(true);
    const url = lines.map((l) => AT.exec(l)?.[1]).find((u) => u !== undefined);
    expect(url).toBeDefined();
    return { url: url!, lines, requests: r.serviceRequests?.total ?? 0 };
  };

  const deployed = await run(false);
  expect(deployed.requests).toBeGreaterThan(0);
  expect(windowHits(stateDir)).toBe(deployed.requests);
  expect(budgetScopes(stateDir)).toEqual([`budget#${deployed.url}`]);

  // A command line reading the service in between (dpi drift --local) is another client: its reads count in no
  // window of the provider's, and the address stays.
  const saved = readFileSync(join(stateDir, 'emulator-state.json'), 'utf8');
  const drift = await dpi(['drift', '--local', '--state', stateFile], { env: {} });
  expect([drift.code, drift.stderr]).toEqual([0, '']);
  const [was, read] = [saved, readFileSync(join(stateDir, 'emulator-state.json'), 'utf8')].map((t) => JSON.parse(t) as Record<string, unknown>);
  expect([read.address, read.rateHits]).toEqual([was.address, was.rateHits]);

  const destroyed = await run(true);
  expect(destroyed.url).toBe(deployed.url);
  expect(destroyed.lines.join('\n')).not.toContain('is taken');
  // One window holds both runs' requests (the service's 5 minutes), and one budget counted them.
  expect(windowHits(stateDir)).toBe(deployed.requests + destroyed.requests);
  expect(budgetScopes(stateDir)).toEqual([`budget#${deployed.url}`]);

  // Someone else listens on that port now: the next run listens elsewhere, and says what that means.
  const squatter = createServer();
  await new Promise<void>((resolve) => squatter.listen(Number(new URL(deployed.url).port), '127.0.0.1', resolve));
  try {
    const moved = await run(false);
    expect(moved.url).not.toBe(deployed.url);
    expect(moved.lines).toContain(`Embedded emulator: the address of the last run, ${deployed.url}, is taken; at this one the service's rate `
      + 'window starts empty and the provider\'s request budget starts afresh');
    expect(windowHits(stateDir)).toBe(moved.requests);
    expect(budgetScopes(stateDir)).toEqual([`budget#${deployed.url}`, `budget#${moved.url}`].sort());
    const after = await run(true);
    expect(after.url).toBe(moved.url);
  } finally {
    await new Promise((resolve) => squatter.close(resolve));
  }
});
