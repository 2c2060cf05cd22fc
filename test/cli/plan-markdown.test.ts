/**
 * `dpi plan --format markdown` on the 300-identity fleet (issue 35): beside the fleet, one subscription is replaced
 * (its identity changes) and another, paused in the service since the last deploy (as the web UI pauses it), gets a
 * new name. The markdown shows the replacement first, then the paused subscription with its re-activation named, and
 * the 300 unchanged pipelines folded last; the deploy then does what the plan said (the subscription is active again,
 * the planned calls are the calls made).
 */
import { join } from 'node:path';
import { clearRequests, dpi, requests, testNoSecretsPrinted } from './helpers';
import { changingCalls, synthPlanFleet, unmatchedCalls } from './plan-apps';
import { PLATFORM_FIRST_IDENTITY, platformFixtures } from '../../bench/lib/platform-app';
import type { ReviewedEntry } from '../../src/cli/commands/plan-live';
import { DpiClient } from '../../src/client';
import { DEFAULT_REFRESH_TOKEN, RunningEmulator, startEmulator } from '../../src/emulator';
import { runLocalDeploy } from '../../src/local';
import { tempDir } from '../local/helpers';

jest.setTimeout(600_000);

const N = 300;
const FIRST = PLATFORM_FIRST_IDENTITY;
let emu: RunningEmulator;
let work: { dir: string; cleanup: () => void };
const state = (): string => join(work.dir, 'state', 'local-state.json');

interface PlanDoc { entries: ReviewedEntry[]; summary: Record<string, number>; live: { read: boolean; notes: string[]; requests: number } }

async function deploy(app: string): Promise<void> {
  const r = await runLocalDeploy({
    app,
    emulatorUrl: emu.url,
    stateFile: state(),
    refreshToken: DEFAULT_REFRESH_TOKEN,
    pollIntervalMs: 20,
    progress: () => undefined,
    output: () => undefined,
  });
  expect(r.error).toBeUndefined();
  expect(r.success).toBe(true);
}

function client(): DpiClient {
  const u = emu.url;
  return new DpiClient({
    endpoints: { baseUrl: u, subscriptionsUrl: u, accountUrl: u, userUrl: u, remoteIdentityUrl: u, authUrl: u },
    refreshToken: DEFAULT_REFRESH_TOKEN,
  });
}

beforeAll(async () => {
  work = tempDir('dpi-plan-markdown-');
  emu = await startEmulator({ host: '127.0.0.1', port: 0, fixtures: platformFixtures({ fleet: N, singles: 0, subscriptions: 0 }), rateLimit: 'off', reads: 'vendor' });
});
afterAll(async () => {
  await emu.stop();
  work.cleanup();
});

test('the fleet with one replacement and one paused subscription: the replacement first, the re-activation named, the rest folded', async () => {
  const v0 = synthPlanFleet(join(work.dir, 'v0'), N, {}, [], [
    { id: 'Orders', remoteIdentityId: FIRST, name: 'orders' },
    { id: 'Returns', remoteIdentityId: FIRST + 1, name: 'returns' },
  ]);
  await deploy(v0);
  const before = JSON.parse((await dpi(['plan', '--app', v0, '--local', '--state', state(), '--json', '--no-live'])).stdout) as PlanDoc;
  const returnsId = before.entries.find((e) => e.constructPath === 'Platform/Returns')!.physicalId!;
  const ordersId = before.entries.find((e) => e.constructPath === 'Platform/Orders')!.physicalId!;
  // Paused in the service after the deploy, as the web UI does it.
  await client().subscriptions.update(returnsId, { status: 'paused' });

  const v1 = synthPlanFleet(join(work.dir, 'v1'), N, {}, [], [
    { id: 'Orders', remoteIdentityId: FIRST + 2, name: 'orders' },
    { id: 'Returns', remoteIdentityId: FIRST + 1, name: 'returns-2' },
  ]);
  const args = ['plan', '--app', v1, '--local', '--state', state()];
  const r = await dpi([...args, '--format', 'markdown'], { emu });
  expect(r.stderr).toBe('');
  expect(r.code).toBe(0);
  const md = r.stdout;
  expect(md.split('\n')[0]).toBe('## dpi plan: 1 update, 1 replace, 300 no-change');
  expect(md).toContain('| replace | 1 |');
  expect(md).toContain('| no-change | 300 |');
  // The groups in review order, each resource in the group it belongs to.
  const at = (text: string): number => {
    const i = md.indexOf(text);
    expect(i).toBeGreaterThanOrEqual(0);
    return i;
  };
  const risky = at('### Ends, replaces or rebuilds records, fails, or names an unknown or invalid identity (1)');
  const replaced = at('<details><summary><b>replace</b> <code>Platform/Orders</code>');
  const undo = at('### Undoes a change made in the service (1)');
  const paused = at('<details><summary><b>update</b> <code>Platform/Returns</code>');
  const unchanged = at('### No change (300)');
  expect([risky, replaced, undo, paused, unchanged]).toEqual([...[risky, replaced, undo, paused, unchanged]].sort((a, b) => a - b));
  expect(md).not.toContain('### Updates in place');
  expect(md).not.toContain('### Creates');
  // The re-activation is named in the summary line and in the folded details.
  const returnsBlock = md.slice(paused, md.indexOf('</details>', paused));
  expect(returnsBlock.split('\n')[0]).toContain('this deploy re-activates it (status active)');
  expect(returnsBlock).toContain(`**live:** subscription ${returnsId} is paused in the service (deployed declaration: active); this deploy re-activates it`);
  expect(returnsBlock).toContain(`<code>PATCH /v2/sub/${returnsId}</code> set name, status`);
  expect(md.slice(replaced, undo)).toContain(`subscription ${ordersId} becomes invalid`);
  // The 300 pipelines: one folded list, none of them a block of its own.
  expect(md.slice(unchanged)).toContain('<details><summary>300 resources with no change</summary>');
  expect(md.match(/<details><summary><b>/g)).toHaveLength(2);
  expect(md).toMatch(/\*\*Live state:\*\* read \(\d+ subscriptions and 30\d remote identities listed in \d+ listing requests\); 1 resource with live differences/);
  // Deterministic.
  expect((await dpi([...args, '--format', 'markdown'], { emu })).stdout).toBe(md);

  const doc = JSON.parse((await dpi([...args, '--json'], { emu })).stdout) as PlanDoc;
  const returns = doc.entries.find((e) => e.constructPath === 'Platform/Returns')!;
  expect(returns.action).toBe('update');
  expect(returns.live).toEqual([expect.objectContaining({ kind: 'status', undoes: true, risk: false })]);
  expect(doc.live.read).toBe(true);
  expect(doc.live.notes).toEqual([]);
  // Bounded reads: a few listing pages, not one read per record.
  expect(doc.live.requests).toBeLessThanOrEqual(8);

  // The text names it too, with the live-state line under the summary.
  const text = await dpi(args, { emu });
  expect(text.code).toBe(0);
  expect(text.stdout).toContain(`live: subscription ${returnsId} is paused in the service (deployed declaration: active); this deploy re-activates it`);
  expect(text.stdout).toMatch(/\nLive state: \d+ subscriptions and 30\d remote identities listed \(\d+ listing requests\); 1 resource with live differences\n$/);

  await clearRequests(emu);
  await deploy(v1);
  expect(unmatchedCalls(doc.entries, changingCalls(await requests(emu)))).toEqual({ planned: [], made: [] });
  const after = await client().subscriptions.get(returnsId);
  expect(after.status).toBe('active');
  expect(after.name).toBe('returns-2');
  // Nothing is left to undo: the next plan has no change and no live difference.
  const next = await dpi([...args, '--format', 'markdown'], { emu });
  expect(next.stdout.split('\n')[0]).toBe('## dpi plan: 302 no-change');
  expect(next.stdout).toContain('; no live differences.');
  expect(next.stdout).not.toContain('<details><summary><b>');
});

testNoSecretsPrinted();
