import { readFileSync } from 'node:fs';

export * from './fixture-types';
import type { EmulatorFixtures } from './fixture-types';

// The default records live in default-fixtures.ts (re-exported here).
export { DEFAULT_CLOUD_ACCOUNT, DEFAULT_FIXTURES, DEFAULT_REFRESH_TOKEN, OTHER_REFRESH_TOKEN } from './default-fixtures';

/** Reads a fixtures JSON file (an object with the keys of EmulatorFixtures). Throws a clear error when invalid. */
export function loadFixturesFile(path: string): EmulatorFixtures {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    throw new Error(`cannot read fixtures file ${path}: ${(e as Error).message}`);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (e) {
    throw new Error(`fixtures file ${path} is not valid JSON: ${(e as Error).message}`);
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw new Error(`fixtures file ${path} must contain a JSON object`);
  }
  return parsed as EmulatorFixtures;
}
