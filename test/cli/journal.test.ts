/**
 * `dpi journal show|resolve` against the dpi local-deploy journal (--local), written the way the handler writes it.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { dpi } from './helpers';
import { dynamoJournal } from '../../src/handler/journal';
import { startJournalServer } from '../../src/local/journal-server';

const KEY = 'MarketplaceData/SellerNotifications8C79AC32';
let dir: string;
beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'dpi-journal-cli-'));
  // What a unified create whose answer was lost leaves: a `posting` record (and an older, finished one).
  const server = await startJournalServer({ stateFile: join(dir, 'journal.json') });
  const j = dynamoJournal({ table: 'dpi-lifecycle-journal', endpoint: server.endpoint, sleep: (ms) => new Promise((r) => setTimeout(r, ms)) });
  const old = await j.create(KEY, 'active', { identity: '362' }, '9001');
  await j.save(old, 'deleted', old.doc);
  await j.create(KEY, 'posting', { identity: '362', postUnclear: 'UND_ERR_SOCKET' });
  await server.stop();
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const local = ['--local', '--state', (): string => join(dir, 'local-state.json')];
const args = (...a: Array<string | (() => string)>): string[] => a.map((x) => (typeof x === 'function' ? x() : x));

test('show prints the records of a resource; --json for scripts', async () => {
  const r = await dpi(args('journal', 'show', KEY, ...local), { env: {} });
  expect(r.code).toBe(0);
  const lines = r.stdout.trim().split('\n');
  expect(lines).toHaveLength(2);
  expect(lines[0]).toMatch(/ deleted +9001 /);
  expect(lines[1]).toMatch(/ posting +- .*identity 362, unclear: UND_ERR_SOCKET$/);
  const j = await dpi(args('journal', 'show', KEY, ...local, '--json'), { env: {} });
  expect((JSON.parse(j.stdout) as Array<{ state: string }>).map((x) => x.state)).toEqual(['deleted', 'posting']);
  const none = await dpi(args('journal', 'show', 'Other/Resource', ...local), { env: {} });
  expect(none.stdout).toContain('no records for Other/Resource');
});

test('resolve marks the unconfirmed attempt abandoned (once: a second resolve has nothing to do and exits 2)', async () => {
  const r = await dpi(args('journal', 'resolve', KEY, ...local), { env: {} });
  expect(r.code).toBe(0);
  expect(r.stdout).toMatch(new RegExp(`^resolved 1 attempt\\(s\\) of ${KEY} in .*journal\\.json: `));
  const after = await dpi(args('journal', 'show', KEY, ...local, '--json'), { env: {} });
  expect((JSON.parse(after.stdout) as Array<{ state: string }>).map((x) => x.state)).toEqual(['deleted', 'abandoned']);
  const again = await dpi(args('journal', 'resolve', KEY, ...local), { env: {} });
  expect(again.code).toBe(2);
  expect(again.stderr).toContain(`${KEY} has no attempt without a confirmed outcome`);
});

test('a corrupt local journal is named, exit 2', async () => {
  writeFileSync(join(dir, 'journal.json'), '{');
  const r = await dpi(args('journal', 'show', KEY, ...local), { env: {} });
  expect(r.code).toBe(2);
  expect(r.stderr).toContain(join(dir, 'journal.json'));
});

test('scan reads every record under a key prefix and every claim', async () => {
  const server = await startJournalServer({ stateFile: join(dir, 'journal.json') });
  try {
    const j = dynamoJournal({ table: 'dpi-lifecycle-journal', endpoint: server.endpoint, sleep: (ms) => new Promise((r) => setTimeout(r, ms)) });
    await j.create('OtherStack/Sub1', 'active', { subscriptionId: '77' }, '77');
    await j.claim('sub', '77', 'OtherStack/Sub1');
    const all = await j.scan();
    expect(all.records.map((r) => `${r.key} ${r.state}`)).toEqual([
      `${KEY} deleted`, `${KEY} posting`, 'OtherStack/Sub1 active',
    ]);
    expect(all.claims).toEqual([{ kind: 'sub', id: '77', owner: 'OtherStack/Sub1' }]);
    const some = await j.scan('OtherStack/');
    expect(some.records.map((r) => r.key)).toEqual(['OtherStack/Sub1']);
    expect(some.claims).toHaveLength(1);
  } finally {
    await server.stop();
  }
});
