/**
 * The figures of docs/bench.md, "Fleets at the service's rate limit", recomputed from the library's functions: the
 * wave plan and the nested stack hash of a fleet of sellers from identity 100000, at the provider's defaults.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fleetBucketOf } from '../../src/notifications/fleet-hash';
import { CALLS_PER_PIPELINE, pipelinesPerWave, planWaves } from '../../src/notifications/fleet-waves';

const num = (x: string): number => Number(x.replace(/,/g, '').replace(/ min$/, ''));

test('every row of the table is what the wave plan gives', () => {
  const doc = readFileSync(join(__dirname, '..', '..', 'docs', 'bench.md'), 'utf8');
  const section = doc.slice(doc.indexOf('## Fleets at the service\'s rate limit'));
  const rows = [...section.matchAll(/^\| ([\d,]+) \| (\d+) \| ([\d,]+) \| ([\d.]+ min) \| (\d+) \| (\d+) \| (\d+) \|$/gm)].map((m) => m.slice(1).map(num));
  expect(rows.map((r) => r[0])).toEqual([300, 2000, 10000]);
  for (const [identities, count, calls, floorMin, waves, largestWave, largestStack] of rows) {
    const perStack = new Map<number, number>();
    for (let i = 0; i < identities; i++) {
      const b = fleetBucketOf(100_000 + i, count);
      perStack.set(b, (perStack.get(b) ?? 0) + 1);
    }
    const plan = planWaves(perStack, pipelinesPerWave(undefined)!);
    expect(plan.tooLarge).toEqual([]);
    expect([calls, floorMin, waves, largestWave, largestStack]).toEqual([
      CALLS_PER_PIPELINE * identities,
      (CALLS_PER_PIPELINE * identities / 1000) * 5,
      plan.waves.length,
      Math.max(...plan.waves.map((w) => w.reduce((sum, i) => sum + perStack.get(i)!, 0))),
      Math.max(...perStack.values()),
    ]);
  }
});
