/**
 * The layers import downward only: the command line (src/cli) sits on everything else; the handler and the local
 * runner never import it (the Lambda must not depend on the command line); the emulator imports nothing of the rest of
 * src/ (it is an independent witness). A kind's folder (src/kinds/<kind>/) holds its layers by folder: directly in it
 * wire.ts (pure) and construct*.ts (the construct); in runtime/ the handler's code (the Lambda: handler, drift, plan,
 * repair); in tools/ the command line's (orphans, resolve). The registry's lists (src/kinds/registry/) are each of the
 * layer they list.
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

/** The layer of each folder of a kind (src/kinds/<kind>/<folder>/...). */
const KIND_FOLDERS: Record<string, string> = { runtime: 'handler', tools: 'cli' };

/**
 * The layer of a file of a kind's folder, by where it is (`rel`: its path under src/kinds/<kind>/, without `.ts`):
 * `wire` is pure, `construct` and `construct-<more>` the construct, anything under runtime/ the handler, under tools/
 * the command line; anything else is `unknown ...`, with the rule in the message.
 */
function kindFileLayer(kind: string, rel: string): string {
  const parts = rel.split('/');
  if (parts.length === 1) {
    if (parts[0] === 'wire') return 'kinds';
    if (parts[0] === 'construct' || parts[0].startsWith('construct-')) return 'constructs';
    return `unknown part kinds/${kind}/${rel}.ts: directly in a kind's folder only wire.ts (pure) and construct*.ts (the construct) belong; Lambda code goes in runtime/, command-line code in tools/`;
  }
  return KIND_FOLDERS[parts[0]] ?? `unknown folder kinds/${kind}/${parts[0]}/ (of ${rel}.ts): a kind's folders are runtime/ (the Lambda) and tools/ (the command line)`;
}

/** The layer of each list of the registry. */
const REGISTRY_LISTS: Record<string, string> = { kinds: 'kinds', constructs: 'constructs', lambda: 'handler', tools: 'handler', cli: 'cli' };

/** The layer of a file under src/ (`cli`, `handler`, ... a top folder, or a file name such as `contract`). */
function layerOf(file: string): string {
  const parts = relative(SRC, file).replace(/\.ts$/, '').split('/');
  if (parts[0] !== 'kinds' || parts.length === 2) return parts[0];
  if (parts[1] === 'registry') return REGISTRY_LISTS[parts[2]] ?? `unknown registry list ${parts[2]}`;
  return kindFileLayer(parts[1], parts.slice(2).join('/'));
}

/** Each relative import of a file, with the layer of the file it lands in. */
function importedLayers(file: string): Array<{ spec: string; layer: string }> {
  const text = readFileSync(file, 'utf8');
  const out: Array<{ spec: string; layer: string }> = [];
  for (const m of text.matchAll(/(?:from\s+|import\(|require\()\s*'(\.[^']*)'/g)) {
    const target = resolve(dirname(file), m[1]);
    if (relative(SRC, target).startsWith('..')) continue;
    const asFile = statSafe(target) ? join(target, 'index.ts') : `${target}.ts`;
    out.push({ spec: m[1], layer: layerOf(asFile) });
  }
  return out;
}

function statSafe(p: string): boolean {
  try {
    return statSync(p).isDirectory();
  } catch {
    return false;
  }
}

/** The package imports of a file (`runtime`: only those that load code, not `import type`). */
function packages(file: string, runtime = false): string[] {
  const text = readFileSync(file, 'utf8');
  const re = runtime ? /(?:^import\s+(?!type\b)[^;]*?from\s+|import\(|require\()\s*'([^.'][^']*)'/gm : /(?:from\s+|import\(|require\()\s*'([^.'][^']*)'/g;
  return [...text.matchAll(re)].map((m) => m[1]);
}

/** The files of src/ a file loads at run time (itself included; `import type` loads nothing). */
function closure(file: string, seen = new Set<string>()): Set<string> {
  if (seen.has(file)) return seen;
  seen.add(file);
  for (const m of readFileSync(file, 'utf8').matchAll(/(?:^import\s+(?!type\b)[^;]*?from\s+|^export\s+(?!type\b)[^;]*?from\s+|import\(|require\()\s*'(\.[^']*)'/gm)) {
    const target = resolve(dirname(file), m[1]);
    const asFile = statSafe(target) ? join(target, 'index.ts') : `${target}.ts`;
    if (!relative(SRC, asFile).startsWith('..')) closure(asFile, seen);
  }
  return seen;
}

const ALL = files(SRC);

function violations(layer: string, forbidden: (target: string) => boolean): string[] {
  return ALL.filter((f) => layerOf(f) === layer).flatMap((f) => importedLayers(f)
    .filter((i) => i.layer !== layer && forbidden(i.layer))
    .map((i) => `${relative(SRC, f)} imports ${i.spec}`));
}

describe('layers import downward only', () => {
  test('every file of a kind folder and of the registry has a layer', () => {
    expect(ALL.map(layerOf).filter((l) => l.startsWith('unknown'))).toEqual([]);
  });

  test('a kind\'s layers are its folders: wire and construct* directly in it, runtime/ the handler, tools/ the command line', () => {
    expect(kindFileLayer('subscription', 'wire')).toBe('kinds');
    expect(kindFileLayer('subscription', 'construct')).toBe('constructs');
    expect(kindFileLayer('notification-pipeline', 'construct-props')).toBe('constructs');
    expect(kindFileLayer('subscription', 'runtime/handler')).toBe('handler');
    expect(kindFileLayer('subscription', 'runtime/validation')).toBe('handler');
    expect(kindFileLayer('subscription', 'tools/orphans')).toBe('cli');
    expect(layerOf(join(SRC, 'kinds', 'subscription', 'runtime', 'validation.ts'))).toBe('handler');
    // The rule fails on anything else, and says where the file belongs.
    expect(kindFileLayer('subscription', 'handler')).toMatch(/^unknown part kinds\/subscription\/handler\.ts: .*runtime\//);
    expect(kindFileLayer('subscription', 'validation')).toMatch(/^unknown part .*only wire\.ts .* and construct\*\.ts/);
    expect(kindFileLayer('subscription', 'wires')).toMatch(/^unknown part/);
    expect(kindFileLayer('subscription', 'lib/util')).toBe('unknown folder kinds/subscription/lib/ (of lib/util.ts): a kind\'s folders are runtime/ (the Lambda) and tools/ (the command line)');
    expect(layerOf(join(SRC, 'kinds', 'subscription', 'orphans.ts'))).toMatch(/^unknown part/);
  });

  test('every kind folder has its layers (the layer rule reads real files)', () => {
    const kinds = readdirSync(join(SRC, 'kinds')).filter((n) => n !== 'registry' && statSync(join(SRC, 'kinds', n)).isDirectory());
    expect(kinds.length).toBeGreaterThan(0);
    for (const kind of kinds) {
      const layers = new Set(ALL.filter((f) => relative(SRC, f).startsWith(`kinds/${kind}/`)).map(layerOf));
      expect([kind, [...layers].sort()]).toEqual([kind, ['cli', 'constructs', 'handler', 'kinds']]);
    }
  });

  test.each(['handler', 'local', 'client', 'emulator', 'monitoring', 'notifications', 'constructs', 'kinds'])('the %s layer imports nothing from the command line', (layer) => {
    expect(violations(layer, (t) => t === 'cli')).toEqual([]);
  });

  test('the handler and the client import nothing from src/local', () => {
    expect([...violations('handler', (t) => t === 'local'), ...violations('client', (t) => t === 'local')]).toEqual([]);
  });

  test('the handler (the Lambda, with each kind\'s handler, drift, plan and repair) loads no aws-cdk-lib, however indirectly', () => {
    const handlerFiles = ALL.filter((f) => layerOf(f) === 'handler');
    expect(handlerFiles.map((f) => relative(SRC, f))).toEqual(expect.arrayContaining(['kinds/subscription/runtime/handler.ts', 'kinds/subscription/runtime/plan.ts', 'kinds/registry/lambda.ts']));
    const loaded = handlerFiles.flatMap((f) => [...closure(f)].flatMap((g) => packages(g, true)
      .filter((p) => /^(aws-cdk-lib|constructs)(\/|$)/.test(p)).map((p) => `${relative(SRC, f)} loads ${relative(SRC, g)}, which imports ${p}`)));
    expect(loaded).toEqual([]);
    // The check sees a construct's imports.
    expect([...closure(join(SRC, 'kinds', 'subscription', 'construct.ts'))].flatMap((g) => packages(g, true))).toContain('aws-cdk-lib');
  });

  test('the pure kinds (bundled into the Lambda) import nothing but the contract and each other, and no package', () => {
    expect(importedLayers(join(SRC, 'kinds', 'types.ts')).map((i) => i.layer)).toEqual(['contract']);
    expect(violations('kinds', (t) => t !== 'contract')).toEqual([]);
    const pure = ALL.filter((f) => layerOf(f) === 'kinds');
    expect(pure.map((f) => relative(SRC, f))).toEqual(expect.arrayContaining(['kinds/subscription/wire.ts', 'kinds/registry/kinds.ts']));
    expect(pure.flatMap((f) => packages(f).map((p) => `${relative(SRC, f)} imports ${p}`))).toEqual([]);
  });

  test('src/emulator imports nothing from the rest of src/', () => {
    expect(violations('emulator', () => true)).toEqual([]);
  });

  test('src/notifications imports nothing from src/monitoring (monitoring sits on notifications, not beside it)', () => {
    expect(violations('notifications', (t) => t === 'monitoring')).toEqual([]);
    expect(violations('constructs', (t) => t === 'monitoring')).toEqual([]);
  });

  test('the notifications rule sees imports (the monitor imports notifications, the shared alarm helper is below both)', () => {
    const monitor = importedLayers(join(SRC, 'monitoring', 'subscription-monitor.ts')).map((i) => i.layer);
    expect(monitor).toEqual(expect.arrayContaining(['constructs', 'alarm-actions']));
    const pipeline = importedLayers(join(SRC, 'kinds', 'notification-pipeline', 'construct.ts')).map((i) => i.layer);
    expect(pipeline).toContain('alarm-actions');
  });

  test('the check sees imports (a file of the command line imports the layers below it; a kind\'s tools/ is of the command line)', () => {
    const layers = importedLayers(join(SRC, 'cli', 'commands', 'local-deploy.ts')).map((i) => i.layer);
    expect(layers).toEqual(expect.arrayContaining(['local', 'emulator']));
    expect(layerOf(join(SRC, 'kinds', 'subscription', 'tools', 'orphans.ts'))).toBe('cli');
    expect(importedLayers(join(SRC, 'kinds', 'registry', 'cli.ts')).map((i) => i.layer)).toEqual(expect.arrayContaining(['cli', 'kinds']));
  });
});

/** The files of src/ a file imports (relative imports, `import type` and re-exports included). */
function importedFiles(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  const out: string[] = [];
  for (const m of text.matchAll(/(?:from\s+|import\(|require\()\s*'(\.[^']*)'/g)) {
    const target = resolve(dirname(file), m[1]);
    const asFile = statSafe(target) ? join(target, 'index.ts') : `${target}.ts`;
    if (!relative(SRC, asFile).startsWith('..')) out.push(asFile);
  }
  return out;
}

/** The import cycles of src/ (strongly connected groups of more than one file, or a file importing itself). */
function importCycles(nodes: readonly string[], edges: (f: string) => string[]): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const on = new Set<string>();
  const out: string[][] = [];
  const visit = (v: string): void => {
    index.set(v, next);
    low.set(v, next++);
    stack.push(v);
    on.add(v);
    for (const w of edges(v)) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (on.has(w)) {
        low.set(v, Math.min(low.get(v)!, index.get(w)!));
      }
    }
    if (low.get(v) === index.get(v)) {
      const group: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        on.delete(w);
        group.push(relative(SRC, w));
      } while (w !== v);
      if (group.length > 1 || edges(v).includes(v)) out.push(group.sort());
    }
  };
  for (const f of nodes) if (!index.has(f)) visit(f);
  return out;
}

describe('no import cycles', () => {
  test('no file of src/ reaches itself through its imports (type-only imports and re-exports count)', () => {
    expect(importCycles(ALL, importedFiles)).toEqual([]);
  });

  test('the check finds a cycle', () => {
    const graph: Record<string, string[]> = { a: ['b'], b: ['c'], c: ['a'], d: ['a'] };
    expect(importCycles(Object.keys(graph), (f) => graph[f]).map((g) => g.length)).toEqual([3]);
  });
});
