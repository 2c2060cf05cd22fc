/**
 * Fixtures given to an emulator that starts from an existing state file are merged into it: the records the state
 * lacks are added, the ones it has are kept as saved, and `fixturesMerge` says what (never silently ignored).
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describeFixturesMerge, startEmulator } from '../../src/emulator';

const seller = (id: number, name = `Seller ${id}`): { id: number; account: number; name: string; remote_identity_type_id: number } => ({
  id, account: 1001, name, remote_identity_type_id: 17,
});

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'emu-merge-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

test('new fixture identities are added to a saved state; saved ones are kept as they are; the merge is reported and saved', async () => {
  const file = join(dir, 'state.json');
  const first = await startEmulator({ stateFile: file, fixtures: { remoteIdentities: [seller(5001), seller(5002)] } });
  expect(first.fixturesMerge).toBeUndefined();
  await first.stop();

  const second = await startEmulator({
    stateFile: file,
    fixtures: { remoteIdentities: [seller(5001, 'Renamed'), seller(5002), seller(5003)], pageSize: 50 },
  });
  try {
    expect(second.fixturesMerge).toEqual({ added: { remoteIdentities: 1 }, kept: { remoteIdentities: 2 }, set: ['pageSize'] });
    const ids = second.state().remoteIdentities.filter((r) => r.id >= 5001).map((r) => [r.id, r.name]);
    expect(ids).toEqual([[5001, 'Seller 5001'], [5002, 'Seller 5002'], [5003, 'Seller 5003']]);
    expect(second.state().pageSize).toBe(50);
    // On disk before anyone reads it.
    const saved = JSON.parse(readFileSync(file, 'utf8')) as { state: { remoteIdentities: Array<{ id: number }> } };
    expect(saved.state.remoteIdentities.map((r) => r.id)).toContain(5003);
    expect(describeFixturesMerge(second.fixturesMerge!)).toBe(
      'added 1 remoteIdentities; kept 2 records the state already has, as the state has them (2 remoteIdentities); set pageSize');
  } finally {
    await second.stop();
  }
});

test('fixtures the saved state already has: nothing added, and it says so', async () => {
  const file = join(dir, 'state.json');
  await (await startEmulator({ stateFile: file, fixtures: { remoteIdentities: [seller(5001)] } })).stop();
  const again = await startEmulator({ stateFile: file, fixtures: { remoteIdentities: [seller(5001)] } });
  try {
    expect(describeFixturesMerge(again.fixturesMerge!)).toMatch(/^added no records \(the state has every fixture record already\); kept 1 record /);
  } finally {
    await again.stop();
  }
});

test('an invalid fixture record fails the start, naming the state file', async () => {
  const file = join(dir, 'state.json');
  await (await startEmulator({ stateFile: file })).stop();
  await expect(startEmulator({ stateFile: file, fixtures: { remoteIdentities: [{ id: 1 } as never] } }))
    .rejects.toThrow(`fixtures cannot be merged into the state of ${file}: fixtures.remoteIdentities[0] is missing required fields`);
});
