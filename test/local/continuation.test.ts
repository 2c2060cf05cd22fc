/**
 * Waits longer than an invocation continue asynchronously, in `dpi local-deploy` with the REAL bundled handler in
 * isolated containers: the embedded emulator's rate limit (and so the provider's request budget) is two requests per
 * five minutes, so a subscription's Create needs more of the service's windows than its onEvent's ten minutes hold.
 * Its onEvent answers a continuation; the waiter (the template's state machine: every 30 s, for an hour) polls
 * isComplete until the Create is done. At a time scale of 60 the half hour of cloud time passes in about half a minute.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { App } from 'aws-cdk-lib';
import { connectedStack } from './apps';
import { synthFleetApp } from './fleet-app';
import { tempDir } from './helpers';
import { FIRST_IDENTITY, identityFixtures } from '../../bench/lib/pipelines';
import { Subscription } from '../../src';
import { defaultHandlerPath, runLocalDeploy } from '../../src/local';
import { stopWarmContainers } from '../../src/local/containers';

const BUNDLE = defaultHandlerPath();
if (!existsSync(BUNDLE)) throw new Error(`${BUNDLE} is missing: run 'npx projen bundle' before the local-deploy tests`);

jest.setTimeout(300_000);

let tmp: { dir: string; cleanup: () => void };
beforeEach(() => {
  tmp = tempDir();
});
afterEach(() => tmp.cleanup());
afterAll(() => stopWarmContainers());

function synthApp(outdir: string): string {
  const app = new App({ outdir });
  const { stack, connection } = connectedStack(app, 'Waits');
  new Subscription(stack, 'Orders', {
    connection, productId: 3001, storageGroupId: 501, remoteIdentityId: 362, productParameters: { marketplace_id: 'ATVPDKIKX0DER' },
  });
  app.synth();
  return outdir;
}

test('a Create whose turns take longer than its onEvent timeout completes through isComplete, with no failed resource', async () => {
  const app = synthApp(join(tmp.dir, 'cdk.out'));
  const stateFile = join(tmp.dir, 'state', 'local-state.json');
  const lines: string[] = [];
  const common = {
    app, stateFile, rateLimit: { requests: 2, seconds: 300 }, timeScale: 60, progress: (l: string) => lines.push(l), output: () => undefined,
  } as const;
  const deployed = await runLocalDeploy(common);
  const log = readFileSync(join(tmp.dir, 'state', 'handler.log'), 'utf8');
  const failed = deployed.events.filter((e) => /FAILED/.test(e.status));
  expect(failed).toEqual([]);
  expect(deployed.success).toBe(true);
  // The onEvent answered a continuation; isComplete finished the Create.
  expect(log).toContain('continuing in isComplete');
  expect(log).toMatch(/"msg":"isComplete done".*"IsComplete":true.*"DpiContinuation":"resumed"/);
  // The run counts its embedded emulator's requests (token exchange, reads, the POST) and its 429s apart. At scale 60
  // a few wall milliseconds between a container's clock and the emulator's are seconds of cloud time, so on a busy
  // machine a request sent at the window's edge can be refused (then it waits for the window): their number is not
  // fixed, but refused ones are never all of them.
  expect(deployed.serviceRequests).toEqual({ total: expect.any(Number), throttled: expect.any(Number) });
  expect(deployed.serviceRequests!.total).toBeGreaterThanOrEqual(3);
  expect(deployed.serviceRequests!.throttled).toBeLessThan(deployed.serviceRequests!.total);
  const orders = deployed.resources.find((r) => r.type === 'Custom::DpiSubscription');
  expect(orders?.physicalId).toMatch(/^\d+$/);
  // The destroy ends it (its turns may continue too).
  const destroyed = await runLocalDeploy({ ...common, destroy: true });
  expect(destroyed.events.filter((e) => /FAILED/.test(e.status))).toEqual([]);
  expect(destroyed.success).toBe(true);
});

test('a fleet whose pipelines wait past their onEvent timeout: each nested stack\'s pipeline completes through its parent provider\'s waiter', async () => {
  const ids = [FIRST_IDENTITY, FIRST_IDENTITY + 1, FIRST_IDENTITY + 2];
  const app = join(tmp.dir, 'cdk.out');
  synthFleetApp(app, { identities: ids, nestedStackCount: 2 });
  const common = {
    app,
    stateFile: join(tmp.dir, 'state', 'local-state.json'),
    fixtures: identityFixtures(ids.length),
    rateLimit: { requests: 4, seconds: 300 },
    timeScale: 60,
    progress: () => undefined,
    output: () => undefined,
  } as const;
  const deployed = await runLocalDeploy(common);
  expect(deployed.events.filter((e) => /FAILED/.test(e.status))).toEqual([]);
  expect(deployed.success).toBe(true);
  const log = readFileSync(join(tmp.dir, 'state', 'handler.log'), 'utf8');
  expect(log).toContain('continuing in isComplete');
  // Every pipeline got the service's ID (not the request ID of a continuation taken as the answer).
  const pipelines = deployed.resources.filter((r) => r.type === 'Custom::DpiNotificationPipeline');
  expect(pipelines).toHaveLength(ids.length);
  for (const p of pipelines) expect(p.physicalId).toMatch(/^\d+$/);
  const destroyed = await runLocalDeploy({ ...common, destroy: true });
  expect(destroyed.events.filter((e) => /FAILED/.test(e.status))).toEqual([]);
  expect(destroyed.success).toBe(true);
});
