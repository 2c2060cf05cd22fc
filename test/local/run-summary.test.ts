/**
 * The summary of a run that was refused before it started says what is deployed (the state file), never
 * "No resources deployed." while resources are deployed.
 */
import { writeFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { tempDir } from './helpers';
import { runLocalDeploy } from '../../src/local';
import { writeState, emptyState, resourceKey } from '../../src/local/state';

let tmp: { dir: string; cleanup: () => void };
beforeEach(() => {
  tmp = tempDir();
});
afterEach(() => tmp.cleanup());

function deployedState(file: string, n: number): void {
  const state = emptyState();
  for (let i = 0; i < n; i++) {
    const logicalId = `Pipeline${i}`;
    state.resources[resourceKey('Fleet', logicalId)] = {
      stack: 'Fleet',
      logicalId,
      type: 'Custom::DpiNotificationPipeline',
      physicalId: String(9000 + i),
      properties: {},
      attributes: {},
      dependsOn: [],
      waiter: false,
    };
  }
  mkdirSync(join(file, '..'), { recursive: true });
  writeState(file, state);
}

test('a run refused before it starts: the summary is what the state file says is deployed', async () => {
  const stateFile = join(tmp.dir, 'state', 'local-state.json');
  deployedState(stateFile, 3);
  const out: string[] = [];
  const r = await runLocalDeploy({
    stateFile, emulatorUrl: 'http://127.0.0.1:9', fixtures: { remoteIdentities: [] }, progress: () => undefined, output: (l) => out.push(l),
  });
  expect(r.success).toBe(false);
  expect(r.error).toMatch(/fixtures seed the embedded emulator/);
  expect(out).not.toContain('No resources deployed.');
  expect(out[0]).toBe(`Nothing changed; deployed per ${stateFile}: 3 resources`);
  expect(out.filter((l) => /^Fleet\s+Pipeline\d\s+Custom::DpiNotificationPipeline\s+90\d\d/.test(l))).toHaveLength(3);
  expect(r.resources).toHaveLength(3);
});

test('an unreadable state file: the summary says what is deployed is not known', async () => {
  const stateFile = join(tmp.dir, 'bad', 'local-state.json');
  mkdirSync(join(stateFile, '..'), { recursive: true });
  writeFileSync(stateFile, '{not json');
  const out: string[] = [];
  const r = await runLocalDeploy({ stateFile, progress: () => undefined, output: (l) => out.push(l) });
  expect(r.success).toBe(false);
  expect(out).toHaveLength(1);
  expect(out[0]).toMatch(/^Nothing changed; what is deployed is not known: /);
});
