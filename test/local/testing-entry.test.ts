/**
 * src/testing.ts from the sources (the packed package is tested in test/packaging): its exports work, its constant is
 * the emulator's, and its hand-declared emulator types stay interchangeable with the emulator's own (checked by the
 * type-check: a drift is a compile error here).
 */
import { join } from 'node:path';
import { tempDir } from './helpers';
import type { EmulatorOptions as ServerEmulatorOptions, RunningEmulator as ServerRunningEmulator } from '../../src/emulator';
import { DEFAULT_REFRESH_TOKEN } from '../../src/emulator';
import type { LocalDeployOptions as RunnerOptions } from '../../src/local';
import { EMULATOR_REFRESH_TOKEN, EmulatorOptions, LocalDeployOptions, RunningEmulator, runLocalDeploy, startEmulator } from '../../src/testing';

/** True when two types have the same property names (an option added to one and not the other fails the type-check). */
type SameKeys<A, B> = [keyof A] extends [keyof B] ? ([keyof B] extends [keyof A] ? true : false) : false;
export const sameKeys: [SameKeys<EmulatorOptions, ServerEmulatorOptions>, SameKeys<RunningEmulator, ServerRunningEmulator>] = [true, true];

// Both ways assignable: the testing entry's declarations match the emulator's and the runner's.
export const typeChecks = (
  o: EmulatorOptions, s: ServerEmulatorOptions, r: RunningEmulator, sr: ServerRunningEmulator, l: LocalDeployOptions, rl: RunnerOptions,
): unknown[] => {
  const a: ServerEmulatorOptions = o;
  const b: EmulatorOptions = s;
  const c: ServerRunningEmulator = r;
  const d: RunningEmulator = sr;
  const e: RunnerOptions = l;
  const f: LocalDeployOptions = rl;
  return [a, b, c, d, e, f];
};

test('the refresh token constant is the emulator\'s default token', () => {
  expect(EMULATOR_REFRESH_TOKEN).toBe(DEFAULT_REFRESH_TOKEN);
});

test('startEmulator and runLocalDeploy work from the sources', async () => {
  const tmp = tempDir();
  const emulator = await startEmulator({ rateLimit: 'off' });
  try {
    expect(emulator.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const lines: string[] = [];
    const r = await runLocalDeploy({
      emulatorUrl: emulator.url,
      refreshToken: EMULATOR_REFRESH_TOKEN,
      destroy: true,
      stateFile: join(tmp.dir, 'state.json'),
      progress: (l) => lines.push(l),
      output: () => undefined,
    });
    expect(r.success).toBe(true);
    expect(lines[0]).toMatch(/^Nothing to destroy/);
  } finally {
    await emulator.stop();
    tmp.cleanup();
  }
});
