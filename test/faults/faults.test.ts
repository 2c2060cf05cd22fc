/**
 * The fault matrix in CI: a fixed set of scenarios at the calls where recovery is hardest (every creating POST whose
 * answer is lost, the unified DELETE, a 500 and a dropped connection on idempotent calls, 429, a slow answer), a
 * fixed-seed sample of the rest, and the kill test at two calls. `npm run faults` runs every call with every fault kind.
 * Every scenario runs with bystanders present (records the app did not make, see bystanders.ts): a changed one is
 * `harmed`.
 */
import { harmedBystanders } from './bystanders';
import { ACCEPTED, CallPoint, FAULT_KINDS, FaultLab, label, ScenarioResult } from './matrix';
import { sample } from './sample';

jest.setTimeout(300_000);

let lab: FaultLab;
beforeAll(async () => {
  lab = await FaultLab.start();
});
afterAll(async () => {
  await lab?.stop();
});

const kind = (name: string): (typeof FAULT_KINDS)[number] => FAULT_KINDS.find((k) => k.name === name)!;
const find = (phase: string, method: string, path: RegExp, nth = 0): CallPoint => {
  const p = lab.points.filter((x) => x.phase === phase && x.method === method && path.test(x.path))[nth];
  if (!p) throw new Error(`no ${phase} ${method} ${path} call in the example's lifecycle`);
  return p;
};

function expectAccepted(results: ScenarioResult[]): void {
  const bad = results.filter((r) => !ACCEPTED.has(r.outcome)).map((r) => `${label(r.point)} ${r.kind}: ${r.outcome} (${r.detail})`);
  expect(bad).toEqual([]);
}

test('the clean lifecycle makes the calls the matrix injects into', () => {
  const phases = new Set(lab.points.map((p) => p.phase));
  expect([...phases]).toEqual(['create', 'update', 'destroy']);
  expect(lab.points.filter((p) => p.method === 'POST' && p.path.startsWith('/service/sp/notifications-unified/'))).toHaveLength(2);
});

test('every scenario has the bystanders; they are left out of the comparison with the clean run, and a change is seen', () => {
  const b = lab.bystanders;
  expect(b.records.map((x) => `${x.name} ${x.kind}`)).toEqual([
    'ui-3001 subscription', 'ui-107-364 subscription', 'ui-pipeline-364 pipeline', 'ui-pipeline-364 subscription', 'other-journal-3001 subscription',
  ]);
  // The clean run ended with them as they were made (FaultLab.start fails otherwise), and none is in its summary.
  const state = lab.emulator.state();
  expect(harmedBystanders(state, b)).toEqual([]);
  expect(lab.live().filter((l) => /name=(ui-|other-journal-)|identity=364/.test(l))).toEqual([]);
  // A change the app could make is named with the bystander.
  const ui = state.subscriptions.find((x) => x.name === 'ui-3001')!;
  ui.status = 'invalid';
  ui.product_parameters.stage_ids = '[1001]';
  state.upstreamSubscriptions.find((u) => u.remoteIdentityId === 364 && u.notificationType === 'ORDER_CHANGE')!.enabled = false;
  expect(harmedBystanders(state, b)).toEqual([
    `ui-3001 (subscription ${ui.id}): status "active" -> "invalid", product_parameters.stage_ids (none) -> "[1001]"`,
    expect.stringMatching(/^ui-pipeline-364 \(pipeline pl-\d+\): upstream \[.*\] -> \[.*ORDER_CHANGE=upstream-\d+@eb-dest-\d+ \(disabled\).*\]$/),
  ]);
});

test('every occurrence of a call is a point of its own (the fault reaches it with skip)', () => {
  const keys = lab.points.map((p) => `${p.phase} ${p.method} ${p.path} ${p.skip}`);
  expect(new Set(keys).size).toBe(keys.length);
  const subs = lab.points.filter((p) => p.phase === 'create' && p.method === 'POST' && p.path === '/v2/sub');
  expect(subs.map((p) => p.skip)).toEqual([0, 1, 2]);
});

test('lost answers of every creating call: nothing made twice, nothing left', async () => {
  const results = [
    await lab.run(find('create', 'POST', /^\/v2\/sub$/), kind('dropResponse')),
    await lab.run(find('create', 'POST', /^\/service\/history\//), kind('dropResponse')),
    await lab.run(find('create', 'POST', /^\/service\/jobs\/jobs\//, 1), kind('dropResponse')),
    await lab.run(find('update', 'POST', /^\/service\/jobs\/jobs\//), kind('dropResponse')),
    await lab.run(find('destroy', 'DELETE', /^\/service\/sp\/notifications-unified\//), kind('dropResponse')),
  ];
  expectAccepted(results);
  expect(results.map((r) => r.outcome)).toEqual(['survived', 'survived', 'survived', 'survived', 'survived']);
});

test('the unified create whose answer is lost is the residual case: it refuses until the service removed it and the attempt is resolved', async () => {
  const r = await lab.run(find('create', 'POST', /^\/service\/sp\/notifications-unified\/362$/), kind('dropResponse'));
  expect(r.outcome).toBe('residual');
  expect(r.detail).toContain('only the service can remove it');
});

test('500, dropped connections, 429 and a slow answer on idempotent calls are absorbed', async () => {
  const results = [
    await lab.run(find('update', 'PATCH', /^\/service\/sp\/notifications-unified\//), kind('500')),
    await lab.run(find('destroy', 'PATCH', /^\/v2\/sub\//), kind('drop')),
    await lab.run(find('create', 'GET', /^\/v2\/product\/107$/), kind('429')),
    // The full matrix (npm run faults) slows every call by 3 s; here a fraction of a second is slow enough.
    await lab.run(find('create', 'POST', /^\/auth\/api\/ref$/), { name: 'delay300ms', fault: { delayMs: 300 } }),
  ];
  expectAccepted(results);
  expect(results.map((r) => r.outcome)).toEqual(['survived', 'survived', 'survived', 'survived']);
});

test('a fixed-seed sample of every call and fault kind', async () => {
  // The service's faults (the cloud's, slower, have a test of their own below).
  const all = lab.points.flatMap((point) => FAULT_KINDS.filter((k) => k.name !== 'delay3s' && !k.runner).map((k) => ({ point, kind: k })));
  const results: ScenarioResult[] = [];
  for (const s of sample(all, 6, 2026)) results.push(await lab.run(s.point, s.kind));
  expectAccepted(results);
});

test('bystanders survive lost creates: every POST /v2/sub of create with 500 and with the answer lost, every unified POST with 500', async () => {
  const subs = lab.points.filter((p) => p.phase === 'create' && p.method === 'POST' && p.path === '/v2/sub');
  const unified = lab.points.filter((p) => p.phase === 'create' && p.method === 'POST' && p.path.startsWith('/service/sp/notifications-unified/'));
  expect([subs.length, unified.length]).toEqual([3, 2]);
  const results: ScenarioResult[] = [];
  for (const p of subs) for (const k of ['500', 'dropResponse']) results.push(await lab.run(p, kind(k)));
  for (const p of unified) results.push(await lab.run(p, kind('500')));
  // Not harmed, leaked, inconsistent or stuck.
  expectAccepted(results);
});

test('the cloud\'s faults at a creating call: the operation cancelled, the event delivered twice, the invocation\'s deadline', async () => {
  const results = [
    await lab.run(find('create', 'POST', /^\/v2\/sub$/), kind('cancel')),
    await lab.run(find('create', 'POST', /^\/service\/sp\/notifications-unified\/362$/), kind('cancel')),
    await lab.run(find('update', 'POST', /^\/service\/jobs\/jobs\//), kind('cancel')),
    await lab.run(find('create', 'POST', /^\/v2\/sub$/, 1), kind('duplicate')),
    await lab.run(find('create', 'POST', /^\/service\/sp\/notifications-unified\/362$/), kind('duplicate')),
    await lab.run(find('create', 'POST', /^\/v2\/sub$/), kind('deadline')),
  ];
  expectAccepted(results);
  // The cancel faults fired while the call was in flight: the deploy failed with a cancelled resource.
  for (const r of results.slice(0, 3)) expect(r.outcome).not.toBe('survived');
});

test('kill test: the runner killed while a call is held (applied, and not applied), then run again and destroyed, leaves nothing', async () => {
  const results = [
    await lab.kill(find('create', 'POST', /^\/v2\/sub$/, 1), true),
    await lab.kill(find('destroy', 'PATCH', /^\/v2\/sub\//, 1), false),
    await lab.kill(find('create', 'POST', /^\/service\/sp\/notifications-unified\/363$/), true),
  ];
  expectAccepted(results);
  // Killed while the unified create was in flight: the residual case, resolved with its step.
  expect(results[2].outcome).toBe('residual');
});
