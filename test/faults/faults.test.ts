/**
 * The fault matrix in CI: a fixed set of scenarios at the calls where recovery is hardest (every creating POST whose
 * answer is lost, the unified DELETE, a 500 and a dropped connection on idempotent calls, 429, a slow answer), a
 * fixed-seed sample of the rest, and the kill test at two calls. `npm run faults` runs every call with every fault kind.
 */
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
    await lab.run(find('create', 'POST', /^\/auth\/api\/ref$/), kind('delay3s')),
  ];
  expectAccepted(results);
  expect(results.map((r) => r.outcome)).toEqual(['survived', 'survived', 'survived', 'survived']);
});

test('a fixed-seed sample of every call and fault kind', async () => {
  const all = lab.points.flatMap((point) => FAULT_KINDS.filter((k) => k.name !== 'delay3s').map((k) => ({ point, kind: k })));
  const results: ScenarioResult[] = [];
  for (const s of sample(all, 6, 2026)) results.push(await lab.run(s.point, s.kind));
  expectAccepted(results);
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
