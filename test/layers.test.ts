/**
 * The layers import downward only: the command line (src/cli) sits on everything else; the handler and the local
 * runner never import it (the Lambda must not depend on the command line); the emulator imports nothing of the rest of
 * src/ (it is an independent witness).
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

const SRC = resolve(__dirname, '..', 'src');

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    return statSync(p).isDirectory() ? files(p) : p.endsWith('.ts') ? [p] : [];
  });
}

/** Each relative import of a file, as the folder under src/ it lands in (`cli`, `handler`, ... or a file name). */
function importedLayers(file: string): Array<{ spec: string; layer: string }> {
  const text = readFileSync(file, 'utf8');
  const out: Array<{ spec: string; layer: string }> = [];
  for (const m of text.matchAll(/(?:from\s+|import\(|require\()\s*'(\.[^']*)'/g)) {
    const target = relative(SRC, resolve(dirname(file), m[1]));
    if (!target.startsWith('..')) out.push({ spec: m[1], layer: target.split('/')[0] });
  }
  return out;
}

function violations(layer: string, forbidden: (target: string) => boolean): string[] {
  return files(join(SRC, layer)).flatMap((f) => importedLayers(f)
    .filter((i) => i.layer !== layer && forbidden(i.layer))
    .map((i) => `${relative(SRC, f)} imports ${i.spec}`));
}

describe('layers import downward only', () => {
  test.each(['handler', 'local', 'client', 'emulator', 'monitoring', 'notifications', 'subscriptions'])('src/%s imports nothing from src/cli', (layer) => {
    expect(violations(layer, (t) => t === 'cli')).toEqual([]);
  });

  test('src/handler and src/client import nothing from src/local', () => {
    expect([...violations('handler', (t) => t === 'local'), ...violations('client', (t) => t === 'local')]).toEqual([]);
  });

  test('src/kinds (bundled into the Lambda) imports nothing but the contract, and no package', () => {
    expect(importedLayers(join(SRC, 'kinds', 'types.ts')).map((i) => i.layer)).toEqual(['contract']);
    expect(violations('kinds', (t) => t !== 'contract')).toEqual([]);
    const packages = files(join(SRC, 'kinds')).flatMap((f) => [...readFileSync(f, 'utf8').matchAll(/(?:from\s+|import\(|require\()\s*'([^.'][^']*)'/g)]
      .map((m) => `${relative(SRC, f)} imports ${m[1]}`));
    expect(packages).toEqual([]);
  });

  test('src/emulator imports nothing from the rest of src/', () => {
    expect(violations('emulator', () => true)).toEqual([]);
  });

  test('src/notifications imports nothing from src/monitoring (monitoring sits on notifications, not beside it)', () => {
    expect(violations('notifications', (t) => t === 'monitoring')).toEqual([]);
  });

  test('the notifications rule sees imports (the monitor imports notifications, the shared alarm helper is below both)', () => {
    const monitor = importedLayers(join(SRC, 'monitoring', 'subscription-monitor.ts')).map((i) => i.layer);
    expect(monitor).toEqual(expect.arrayContaining(['notifications', 'alarm-actions']));
    const pipeline = importedLayers(join(SRC, 'notifications', 'notification-pipeline.ts')).map((i) => i.layer);
    expect(pipeline).toContain('alarm-actions');
  });

  test('the check sees imports (a file of the command line imports the layers below it)', () => {
    const layers = importedLayers(join(SRC, 'cli', 'commands', 'local-deploy.ts')).map((i) => i.layer);
    expect(layers).toEqual(expect.arrayContaining(['local', 'emulator']));
  });
});
