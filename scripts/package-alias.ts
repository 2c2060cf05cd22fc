/**
 * Resolves the package's own name to its sources when code of this repository runs with ts-node:
 * `data-pipeline-integration-cdk` -> src/index.ts, `data-pipeline-integration-cdk/testing` -> src/testing.ts.
 *
 * The examples import the package by name, as a customer's app does. Without this hook Node's package
 * self-reference (package.json `exports`) resolves that name to the compiled lib/, which a fresh clone does not
 * have and which may be older than the sources. Loaded first by scripts/demo.ts and scripts/faults.ts (the
 * faults task: `ts-node -r`) and by examples/cdk.json (`ts-node -r`). Jest maps the same names with
 * `moduleNameMapper`, the type-check with `paths` (tsconfig.typecheck.json).
 */
import Module from 'node:module';
import { join } from 'node:path';

const root = join(__dirname, '..');
const ALIASES: Record<string, string> = {
  'data-pipeline-integration-cdk': join(root, 'src', 'index.ts'),
  'data-pipeline-integration-cdk/testing': join(root, 'src', 'testing.ts'),
};

type Resolve = (request: string, ...rest: unknown[]) => string;
const mod = Module as unknown as { _resolveFilename: Resolve };
const original = mod._resolveFilename;
mod._resolveFilename = function resolveFilename(this: unknown, request: string, ...rest: unknown[]): string {
  return original.call(this, ALIASES[request] ?? request, ...rest);
};
