/**
 * `dpi plan` findings of the review of issue 23, through the CLI: a decisive value decided at deploy time (a template
 * parameter) is planned at its worst case, shown and gated on (`--fail-on replace` trips on a possible replace).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { dpi } from './helpers';
import { synthExample } from './plan-apps';
import type { PlanEntry } from '../../src/handler/plan-types';
import { tempDir } from '../local/helpers';

jest.setTimeout(120_000);

let work: { dir: string; cleanup: () => void };
beforeAll(() => {
  work = tempDir('dpi-plan-review-');
});
afterAll(() => work.cleanup());

/** The example app whose Orders subscription takes its remote identity from a template parameter. */
function withIdentityParameter(dir: string): string {
  synthExample(dir);
  const file = join(dir, 'MarketplaceData.template.json');
  const t = JSON.parse(readFileSync(file, 'utf8')) as {
    Parameters?: Record<string, unknown>;
    Resources: Record<string, { Type: string; Properties: Record<string, unknown> }>;
  };
  t.Parameters = { ...(t.Parameters ?? {}), IdentityParam: { Type: 'String', Default: '362' } };
  const [, orders] = Object.entries(t.Resources).find(([id, r]) => r.Type === 'Custom::DpiSubscription' && id.startsWith('Orders'))!;
  orders.Properties.RemoteIdentityId = { Ref: 'IdentityParam' };
  writeFileSync(file, JSON.stringify(t, undefined, 1));
  return dir;
}

test('a remote identity from a template parameter: no change now, a possible replace, and --fail-on replace trips on it', async () => {
  const base = withIdentityParameter(join(work.dir, 'base'));
  const head = withIdentityParameter(join(work.dir, 'head'));
  const r = await dpi(['plan', '--app', head, '--from', base, '--json', '--fail-on', 'replace']);
  expect(r.code).toBe(1);
  expect(r.stderr).toContain('possibly replace');
  const doc = JSON.parse(r.stdout) as { entries: PlanEntry[]; possible: number };
  const orders = doc.entries.find((e) => e.constructPath === 'MarketplaceData/Orders')!;
  expect(orders.action).toBe('no-change');
  expect(orders.possibleAction).toBe('replace');
  expect(orders.effects).toContain('remoteIdentityId comes from parameter IdentityParam: if its value changes, this is a replace');
  // What references the subscription may follow it: its backfill is a possible replace too.
  expect(doc.entries.find((e) => e.constructPath === 'MarketplaceData/OrdersBackfill')?.possibleAction).toBe('replace');
  expect(doc.possible).toBeGreaterThanOrEqual(2);
  // The pipelines do not use it.
  expect(doc.entries.filter((e) => e.type === 'Custom::DpiNotificationPipeline').every((e) => e.possibleAction === undefined)).toBe(true);

  const text = await dpi(['plan', '--app', head, '--from', base]);
  expect(text.code).toBe(0);
  expect(text.stdout).toMatch(/no-change\s+MarketplaceData\/Orders\s+\(Subscription\)\s+\[possibly replace\]/);
  expect(text.stdout).toContain('with a worse possible action (a value decided at deploy time)');
  // A gate that lets a possible replace through says so; `destructive` (rebuild, replace, delete) trips on it.
  const lets = await dpi(['plan', '--app', head, '--from', base, '--fail-on', 'delete']);
  expect(lets.code).toBe(0);
  expect(lets.stderr).toContain('note: --fail-on delete lets replace through (planned or possible); --fail-on destructive covers rebuild, replace, delete');
  const destructive = await dpi(['plan', '--app', head, '--from', base, '--fail-on', 'destructive']);
  expect(destructive.code).toBe(1);
  expect(destructive.stderr).toContain('--fail-on: 3 resources planned to possibly replace');
  expect(destructive.stderr).not.toContain('note: --fail-on');
});
