import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { checkSnippets, describeFailures, extractSnippets, Snippet, SnippetFailure } from './snippets';

/**
 * Every TypeScript block of docs/*.md compiles against the package (its sources), checked in one program together
 * with the checker's own cases (a program costs most of the time). The README's blocks are compiled by jsii-rosetta
 * (`npx projen rosetta`).
 */
const root = join(__dirname, '..', '..');
const fixtures = join(root, 'rosetta');

function docSnippets(): Snippet[] {
  const docs = readdirSync(join(root, 'docs')).filter((f) => f.endsWith('.md')).sort();
  return docs.flatMap((f) => extractSnippets(readFileSync(join(root, 'docs', f), 'utf8'), `docs/${f}`));
}

/** The checker's cases: a Markdown file with a fragment and a complete file that compile, and two blocks that do not. */
const CASES = 'checker-cases.md';
const md = [
  '# Doc',
  '',
  '```sh',
  'npx cdk synth',
  '```',
  '',
  '<!-- fixture: stack -->',
  '```ts',
  'new Subscription(this, \'Orders\', { connection, productId: 3001, storageGroupId: 501 });',
  '```',
  '',
  '```ts',
  'import { NotificationType } from \'data-pipeline-integration-cdk\';',
  'const t: NotificationType = NotificationType.of(\'ORDER_CHANGE\');',
  'export const name: string = t.name;',
  '```',
  '',
  '```typescript',
  'import { ServiceConnection } from \'data-pipeline-integration-cdk\';',
  'const n: number = ServiceConnection;',
  '```',
  '',
  '```ts fixture=stack',
  'new Subscription(this, \'Orders\', { connection, productId: \'3001\', storageGroupId: 501 });',
  '```',
  '',
  '<!-- file: bin/app.ts -->',
  '```ts',
  'import { limit } from \'../lib/limits\';',
  'export const n: number = limit;',
  '```',
  '',
  '<!-- file: lib/limits.ts -->',
  '```ts',
  'export const limit: number = 3;',
  '```',
  '',
  '<!-- file: lib/limits.ts -->',
  '```ts',
  'export const limit: string = \'3\';',
  '```',
  '',
  '<!-- file: bin/app.ts -->',
  '```ts',
  'import { limit } from \'../lib/limits\';',
  'export const n: number = limit;',
  '```',
].join('\n');

const docs = docSnippets();
let failures: SnippetFailure[] = [];
beforeAll(() => {
  failures = checkSnippets([...docs, ...extractSnippets(md, CASES)], root, fixtures);
}, 120_000);

describe('TypeScript blocks of docs/*.md', () => {
  test('every block compiles (failures name the file and line)', () => {
    // The docs have TypeScript blocks in several files: an extraction that finds none would check nothing.
    expect(docs.length).toBeGreaterThanOrEqual(15);
    expect(new Set(docs.map((s) => s.file)).size).toBeGreaterThanOrEqual(4);
    // The tutorial's project files (lib/ and bin/, each version of the stack) are among them.
    expect(docs.filter((s) => s.file === 'docs/tutorial.md').map((s) => s.path)).toEqual(
      ['lib/dpi-tutorial-stack.ts', 'bin/dpi-tutorial.ts', 'lib/dpi-tutorial-stack.ts', 'lib/dpi-tutorial-stack.ts']);
    const inDocs = failures.filter((f) => f.snippet.file !== CASES);
    if (inDocs.length > 0) throw new Error(`${inDocs.length} of ${docs.length} blocks do not compile:\n\n${describeFailures(inDocs)}`);
  });
});

describe('the checker', () => {
  test('extracts ts/typescript blocks with their line and fixture, and skips other languages', () => {
    const snippets = extractSnippets(md, CASES);
    expect(snippets.map((s) => [s.line, s.fixture ?? null, s.path ?? null])).toEqual([[9, 'stack', null], [13, null, null], [19, null, null],
      [24, 'stack', null], [29, null, 'bin/app.ts'], [35, null, 'lib/limits.ts'], [40, null, 'lib/limits.ts'], [45, null, 'bin/app.ts']]);
    expect(snippets[0].code).toBe('new Subscription(this, \'Orders\', { connection, productId: 3001, storageGroupId: 501 });');
  });

  test('a block that does not compile fails, named by file and line; fragments and complete files that compile pass', () => {
    const cases = failures.filter((f) => f.snippet.file === CASES);
    // The first bin/app.ts imports the first lib/limits.ts (a number: compiles); the last one the second (a string).
    expect(cases.map((f) => f.snippet.line)).toEqual([19, 24, 45]);
    expect(cases[2].messages.join('\n')).toMatch(/^checker-cases\.md:46: TS2322 Type 'string' is not assignable to type 'number'/);
    expect(describeFailures(cases)).toMatch(/checker-cases\.md:45 \(block, file bin\/app\.ts\) does not compile:/);
    expect(cases[0].messages.join('\n')).toMatch(/^checker-cases\.md:20: TS2322 /);
    expect(cases[1].messages.join('\n')).toMatch(/^checker-cases\.md:24: TS2322 Type 'string' is not assignable to type 'number'/);
    expect(describeFailures(cases)).toMatch(/^checker-cases\.md:19 \(block\) does not compile:/);
  });

  test('a file block names a relative .ts path inside the project, and not a fixture too', () => {
    expect(() => extractSnippets('<!-- file: ../x.ts -->\n```ts\nx;\n```', 'doc.md')).toThrow(/^doc\.md:3: the block names file '\.\.\/x\.ts'/);
    expect(() => extractSnippets('<!-- file: lib/x.ts -->\n```ts fixture=stack\nx;\n```', 'doc.md')).toThrow(/^doc\.md:3: a block names either/);
  });

  test('a fixture that does not exist is an error naming the block', () => {
    expect(() => checkSnippets([{ file: 'doc.md', line: 3, code: 'x;', fixture: 'nope' }], root, fixtures)).toThrow(/^doc\.md:3: the block names fixture 'nope'/);
  });
});
