/**
 * At-least-once delivery through the runner (`redeliver`), with the real handler: every onEvent event of a deploy, an
 * update and a destroy delivered twice, at once in two containers or again after a lost answer. The service ends with
 * exactly what one delivery would have made, and a bystander the app did not make is untouched.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { synthTinyApp } from './apps';
import { tempDir } from './helpers';
import { DEFAULT_REFRESH_TOKEN, RunningEmulator, startEmulator } from '../../src/emulator';
import { LocalDeployOptions, runLocalDeploy } from '../../src/local';

let emu: RunningEmulator;
let tmp: { dir: string; cleanup: () => void };
beforeEach(async () => {
  tmp = tempDir('dpi-redeliver-');
  emu = await startEmulator({ host: '127.0.0.1', port: 0 });
});
afterEach(async () => {
  await emu.stop();
  tmp.cleanup();
});

const active = (): string[] => [
  ...emu.state().pipelines.map((p) => `pipeline ${p.remoteIdentityId}`),
  ...emu.state().subscriptions.filter((s) => s.status === 'active').map((s) => `sub ${s.product} ${s.name}`),
].sort();

/** The app's account's active subscriptions of product 3001 (the emulator's fixtures hold another account's too). */
const orders = (): string[] => emu.state().subscriptions.filter((s) => s.product === 3001 && s.status === 'active' && s.account === 1001).map((s) => s.name);

test.each(['at-once', 'after-answer'] as const)('every event delivered twice (%s): one of everything, the same answer, nothing else touched', async (redeliver) => {
  // The bystanders: what the emulator's fixtures hold that the app did not make (another account's subscription, ...).
  const before = active();
  expect(before.length).toBeGreaterThan(0);
  const opts = (app: string, extra: Partial<LocalDeployOptions> = {}): LocalDeployOptions => ({
    app,
    emulatorUrl: emu.url,
    refreshToken: DEFAULT_REFRESH_TOKEN,
    stateFile: join(tmp.dir, 'state', 'local-state.json'),
    redeliver,
    progress: () => undefined,
    output: () => undefined,
    ...extra,
  });
  const deployed = await runLocalDeploy(opts(synthTinyApp(join(tmp.dir, 'v1'), { subscriptionName: 'orders' })));
  expect([deployed.success, deployed.error]).toEqual([true, undefined]);
  expect(active()).toEqual([...before, 'pipeline 362', 'sub 107 ' + emu.state().subscriptions.find((s) => s.product === 107 && s.status === 'active')!.name, 'sub 3001 orders'].sort());
  // Two deliveries of each Create, one record each: the pipeline's and the subscription's.
  expect(emu.state().pipelines).toHaveLength(1);
  expect(orders()).toEqual(['orders']);
  if (redeliver === 'at-once') expect(deployed.containers!.used).toBeGreaterThanOrEqual(2);
  // Each Create (the pipeline's, the subscription's) was indeed handled twice by onEvent, and both succeeded (the
  // waiter's isComplete then answers once, at once).
  const creates = readFileSync(join(tmp.dir, 'state', 'handler.log'), 'utf8').split('\n').filter((l) => /"RequestType":"Create"/.test(l) && /"msg":"onEvent done"/.test(l));
  expect(creates).toHaveLength(4);

  const renamed = await runLocalDeploy(opts(synthTinyApp(join(tmp.dir, 'v2'), { subscriptionName: 'orders-renamed' })));
  expect([renamed.success, renamed.error]).toEqual([true, undefined]);
  expect(orders()).toEqual(['orders-renamed']);

  const destroyed = await runLocalDeploy(opts('', { destroy: true }));
  expect([destroyed.success, destroyed.error]).toEqual([true, undefined]);
  expect(active()).toEqual(before);
}, 120_000);
