/**
 * `dpi local-deploy` of a fleet that deploys in waves (src/notifications/fleet-waves.ts): the nested stacks of a wave
 * start only when every nested stack of the wave before is complete, and the destroy runs the waves in reverse.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { Duration } from 'aws-cdk-lib';
import { synthFleetApp } from './fleet-app';
import { tempDir } from './helpers';
import { FIRST_IDENTITY, identityFixtures } from '../../bench/lib/pipelines';
import { DEFAULT_REFRESH_TOKEN } from '../../src/emulator';
import { defaultHandlerPath, runLocalDeploy } from '../../src/local';
import { fleetBucketOf } from '../../src/notifications/fleet-hash';
import { planWaves } from '../../src/notifications/fleet-waves';

jest.setTimeout(180_000);

if (!existsSync(defaultHandlerPath())) throw new Error('the handler bundle is missing: run \'npx projen bundle\' first');

const IDS = Array.from({ length: 14 }, (_, i) => FIRST_IDENTITY + i);
const COUNT = 8;

test('14 pipelines at 28 requests per hour (5 pipelines a wave): each wave starts after the one before, and is destroyed before it', async () => {
  const tmp = tempDir();
  try {
    const app = join(tmp.dir, 'cdk.out');
    // A limit this low only decides the waves: the local run paces by its embedded emulator's limit.
    synthFleetApp(app, { identities: IDS, nestedStackCount: COUNT, provider: { rateLimitRequests: 28, rateLimitWindow: Duration.hours(1) } });
    const perStack = new Map<number, number>();
    for (const id of IDS) perStack.set(fleetBucketOf(id, COUNT), (perStack.get(fleetBucketOf(id, COUNT)) ?? 0) + 1);
    const { waves } = planWaves(perStack, 5);
    expect(waves.length).toBeGreaterThanOrEqual(3);
    const stateFile = join(tmp.dir, 'state', 'local-state.json');
    const run = (destroy: boolean): ReturnType<typeof runLocalDeploy> => runLocalDeploy({
      app,
      destroy,
      stateFile,
      refreshToken: DEFAULT_REFRESH_TOKEN,
      fixtures: identityFixtures(IDS.length),
      progress: () => undefined,
      output: () => undefined,
    });
    /** For each nested stack index: the positions of the first and the last event of its pipelines. */
    const spans = (events: Array<{ stack: string; type: string; logicalId: string }>): Map<number, [number, number]> => {
      const out = new Map<number, [number, number]>();
      events.forEach((e, i) => {
        const m = e.type === 'Custom::DpiNotificationPipeline' ? /^Fleet-SellersPipelines(\d+)NestedStack/.exec(e.stack) : null;
        if (!m) return;
        const index = Number(m[1]);
        const s = out.get(index);
        out.set(index, s ? [s[0], i] : [i, i]);
      });
      return out;
    };
    const deployed = await run(false);
    expect(deployed.success).toBe(true);
    const up = spans(deployed.events);
    for (let w = 1; w < waves.length; w++) {
      for (const index of waves[w]) for (const before of waves[w - 1]) expect(up.get(index)![0]).toBeGreaterThan(up.get(before)![1]);
    }
    const destroyed = await run(true);
    expect(destroyed.success).toBe(true);
    const down = spans(destroyed.events);
    for (let w = 1; w < waves.length; w++) {
      for (const index of waves[w]) for (const before of waves[w - 1]) expect(down.get(before)![0]).toBeGreaterThan(down.get(index)![1]);
    }
  } finally {
    tmp.cleanup();
  }
});
