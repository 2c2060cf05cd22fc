/**
 * Type-checks the TypeScript blocks of the docs (```ts / ```typescript) against the package's sources, in one
 * TypeScript program (test/docs/snippets.test.ts).
 *
 * A block is a complete file unless it names a fixture, either in its fence (```ts fixture=NAME, as jsii-rosetta
 * reads the README) or in an HTML comment on the line before it (`<!-- fixture: NAME -->`). A fragment is wrapped
 * the way jsii-rosetta wraps it: `rosetta/NAME.ts-fixture` with the block at its `/// here` line, the block's
 * imports and `declare` statements hoisted above the fixture. A block that names a file of the reader's project instead
 * (`<!-- file: lib/my-stack.ts -->` on the line before it, or ```ts file=PATH) is that file of a small project per
 * Markdown file: it is compiled at that path, beside the other files the page names, so `../lib/my-stack` imports the
 * page's `lib/my-stack.ts` (the version of the latest block before it, else the first one after it); a later block of
 * the same path is a new version of the file (a tutorial's change). `data-pipeline-integration-cdk` and
 * `data-pipeline-integration-cdk/testing` resolve to src/index.ts and src/testing.ts; a block is compiled as a file
 * at the repository root (a relative import such as `./src/client` names a repository path). Other languages
 * (sh, json, text, console, ...) are not checked.
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import * as ts from 'typescript';

/** A TypeScript block of a Markdown file. */
export interface Snippet {
  /** The Markdown file, as given to `extractSnippets`. */
  readonly file: string;
  /** 1-based line of the block's first code line. */
  readonly line: number;
  /** The block's code. */
  readonly code: string;
  /** The fixture it names, if any. */
  readonly fixture?: string;
  /** The project file it is, if it names one (`<!-- file: PATH -->`): a relative path such as `lib/my-stack.ts`. */
  readonly path?: string;
}

/** A block that does not compile. */
export interface SnippetFailure {
  readonly snippet: Snippet;
  /** `file:line: message` per diagnostic, with the line in the Markdown file where it falls inside the block. */
  readonly messages: string[];
}

const FENCE = /^\s*(`{3,}|~{3,})\s*([\w+-]*)(.*)$/;
const FIXTURE_COMMENT = /^\s*<!--\s*fixture\s*[:=]\s*([\w.-]+)\s*-->\s*$/;
const FILE_COMMENT = /^\s*<!--\s*file\s*[:=]\s*([\w./-]+)\s*-->\s*$/;
const TS_LANGS = new Set(['ts', 'typescript']);

/** The TypeScript blocks of one Markdown text. */
export function extractSnippets(markdown: string, file: string): Snippet[] {
  const lines = markdown.split(/\r?\n/);
  const out: Snippet[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = FENCE.exec(lines[i]);
    if (!open) continue;
    const fence = open[1];
    const lang = open[2].toLowerCase();
    let end = i + 1;
    while (end < lines.length && !lines[end].trim().startsWith(fence)) end++;
    if (TS_LANGS.has(lang)) {
      let previous = i - 1;
      while (previous >= 0 && lines[previous].trim() === '') previous--;
      const fromComment = previous >= 0 ? FIXTURE_COMMENT.exec(lines[previous])?.[1] : undefined;
      const fromFence = /\bfixture=([\w.-]+)/.exec(open[3])?.[1];
      const fixture = fromFence ?? fromComment;
      const path = /\bfile=([\w./-]+)/.exec(open[3])?.[1] ?? (previous >= 0 ? FILE_COMMENT.exec(lines[previous])?.[1] : undefined);
      if (path !== undefined && (path.startsWith('/') || path.split('/').includes('..') || !/\.tsx?$/.test(path))) {
        throw new Error(`${file}:${i + 2}: the block names file '${path}': give a relative .ts path inside the project (e.g. lib/my-stack.ts)`);
      }
      if (path !== undefined && fixture !== undefined) throw new Error(`${file}:${i + 2}: a block names either a fixture or a file, not both`);
      out.push({ file, line: i + 2, code: lines.slice(i + 1, end).join('\n'), ...(fixture ? { fixture } : {}), ...(path ? { path } : {}) });
    }
    i = end;
  }
  return out;
}

/** Imports and `declare` statements of a fragment go above the fixture (jsii-rosetta's rule); the rest at `/// here`. */
function sideline(code: string): { hoisted: string; body: string } {
  const sf = ts.createSourceFile('snippet.ts', code, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  let hoisted = '';
  let body = '';
  for (const st of sf.statements) {
    const isDeclare = ts.canHaveModifiers(st) && (ts.getModifiers(st) ?? []).some((m) => m.kind === ts.SyntaxKind.DeclareKeyword);
    if (ts.isImportDeclaration(st) || ts.isImportEqualsDeclaration(st) || isDeclare) hoisted += `${st.getFullText(sf)}\n`;
    else body += st.getFullText(sf);
  }
  return { hoisted, body };
}

interface Unit {
  readonly snippet: Snippet;
  readonly path: string;
  readonly text: string;
  /** Maps a 0-based line of `text` to the Markdown line, or undefined for fixture lines. */
  readonly mdLine: (line: number) => number | undefined;
}

function wrap(snippet: Snippet, index: number, root: string, fixturesDir: string): Unit {
  const path = snippet.path ? join(root, `__doc_project_${index}`, snippet.path) : join(root, `__doc_snippet_${index}.ts`);
  const codeLines = snippet.code.split('\n').length;
  if (snippet.path) return { snippet, path, text: `${snippet.code}\n`, mdLine: (l) => (l < codeLines ? snippet.line + l : undefined) };
  if (!snippet.fixture) {
    // `export {}` keeps each block a module of its own (no clash of top-level names between blocks).
    const text = `${snippet.code}\nexport {};\n`;
    return { snippet, path, text, mdLine: (l) => (l < codeLines ? snippet.line + l : undefined) };
  }
  const fixturePath = join(fixturesDir, `${snippet.fixture}.ts-fixture`);
  if (!existsSync(fixturePath)) {
    throw new Error(`${snippet.file}:${snippet.line}: the block names fixture '${snippet.fixture}', but ${fixturePath} does not exist`);
  }
  const fixture = readFileSync(fixturePath, 'utf8');
  const here = /^[ \t]*\/{3}[ \t]*here[ \t]*$/m;
  if (!here.test(fixture)) throw new Error(`${fixturePath} has no '/// here' line`);
  const { hoisted, body } = sideline(snippet.code);
  // Line numbers: map back through a search of each output line in the block (fixtures are small).
  const text = `${hoisted}${fixture.replace(here, () => body)}\nexport {};\n`;
  const blockLines = snippet.code.split('\n');
  const outLines = text.split('\n');
  const fixtureLines = new Set(fixture.split('\n').map((l) => l.trim()).filter((l) => l.length > 0));
  return {
    snippet,
    path,
    text,
    mdLine: (l) => {
      const content = outLines[l]?.trim();
      if (!content || fixtureLines.has(content)) return undefined;
      const at = blockLines.findIndex((b) => b.trim() === content);
      return at >= 0 ? snippet.line + at : undefined;
    },
  };
}

/** Compiler options of the check: the project's (strict, node16), with the package name mapped to src/. */
export function snippetCompilerOptions(root: string): ts.CompilerOptions {
  return {
    strict: true,
    noImplicitAny: true,
    noImplicitReturns: true,
    noFallthroughCasesInSwitch: true,
    esModuleInterop: true,
    experimentalDecorators: true,
    resolveJsonModule: true,
    target: ts.ScriptTarget.ES2022,
    lib: ['lib.es2022.d.ts'],
    module: ts.ModuleKind.Node16,
    moduleResolution: ts.ModuleResolutionKind.Node16,
    types: ['node', 'jest'],
    typeRoots: [join(root, 'node_modules', '@types')],
    skipLibCheck: true,
    noEmit: true,
    paths: {
      'data-pipeline-integration-cdk': [join(root, 'src', 'index.ts')],
      'data-pipeline-integration-cdk/testing': [join(root, 'src', 'testing.ts')],
    },
  };
}

/**
 * The other files of a file block's project (same Markdown file, another path), placed beside it: for each path, the
 * latest block before it, else the first one after it.
 */
function projectFiles(snippets: readonly Snippet[], index: number, root: string): Array<{ path: string; text: string }> {
  const own = snippets[index];
  const others = new Map<string, Snippet>();
  snippets.forEach((s, i) => {
    if (i === index || !s.path || s.file !== own.file || s.path === own.path) return;
    if (i < index || !others.has(s.path)) others.set(s.path, s);
  });
  return [...others.values()].map((s) => ({ path: join(root, `__doc_project_${index}`, s.path ?? ''), text: `${s.code}\n` }));
}

/**
 * Type-checks the blocks in one program; returns the ones that do not compile (an empty list when all do).
 * `root` is the repository root, `fixturesDir` the folder of the `NAME.ts-fixture` files.
 */
export function checkSnippets(snippets: readonly Snippet[], root: string, fixturesDir: string): SnippetFailure[] {
  const units = snippets.map((s, i) => wrap(s, i, root, fixturesDir));
  const byPath = new Map(units.map((u) => [u.path, u]));
  // The project files beside each file block: in the program only as what its imports name, never checked there.
  const support = new Map(snippets.flatMap((s, i) => (s.path ? projectFiles(snippets, i, root) : [])).map((f) => [f.path, f.text]));
  const virtualDirs = new Set([...byPath.keys(), ...support.keys()].flatMap((p) => {
    const dirs: string[] = [];
    for (let d = dirname(p); d.length > root.length; d = dirname(d)) dirs.push(d);
    return dirs;
  }));
  const options = snippetCompilerOptions(root);
  const host = ts.createCompilerHost(options, true);
  const { getSourceFile, fileExists, readFile, directoryExists } = host;
  const textOf = (fileName: string): string | undefined => byPath.get(fileName)?.text ?? support.get(fileName);
  host.getSourceFile = (fileName, languageVersion, onError, shouldCreate) => {
    const text = textOf(fileName);
    if (text !== undefined) return ts.createSourceFile(fileName, text, languageVersion, true, ts.ScriptKind.TS);
    return getSourceFile.call(host, fileName, languageVersion, onError, shouldCreate);
  };
  host.fileExists = (fileName) => textOf(fileName) !== undefined || fileExists.call(host, fileName);
  host.readFile = (fileName) => textOf(fileName) ?? readFile.call(host, fileName);
  host.directoryExists = (dir) => virtualDirs.has(dir) || (directoryExists ? directoryExists.call(host, dir) : ts.sys.directoryExists(dir));
  const program = ts.createProgram({ rootNames: units.map((u) => u.path), options, host });

  const global = [...program.getOptionsDiagnostics(), ...program.getGlobalDiagnostics()];
  if (global.length > 0) {
    throw new Error(`the snippet program cannot be checked: ${global.map((d) => ts.flattenDiagnosticMessageText(d.messageText, ' ')).join('; ')}`);
  }
  const failures: SnippetFailure[] = [];
  for (const unit of units) {
    const sf = program.getSourceFile(unit.path);
    if (!sf) throw new Error(`${unit.snippet.file}:${unit.snippet.line}: not in the program`);
    const diagnostics = [...program.getSyntacticDiagnostics(sf), ...program.getSemanticDiagnostics(sf)];
    if (diagnostics.length === 0) continue;
    failures.push({
      snippet: unit.snippet,
      messages: diagnostics.map((d) => {
        const text = ts.flattenDiagnosticMessageText(d.messageText, ' ');
        const at = d.start === undefined ? undefined : sf.getLineAndCharacterOfPosition(d.start).line;
        const md = at === undefined ? undefined : unit.mdLine(at);
        return `${unit.snippet.file}:${md ?? unit.snippet.line}: TS${d.code} ${text}${md === undefined ? ' (in the fixture or the wrapping)' : ''}`;
      }),
    });
  }
  return failures;
}

/** One message for a test failure: each failing block by file and line, with its diagnostics. */
export function describeFailures(failures: readonly SnippetFailure[]): string {
  return failures.map((f) => [`${f.snippet.file}:${f.snippet.line} (block${f.snippet.fixture ? `, fixture ${f.snippet.fixture}` : ''}${f.snippet.path ? `, file ${f.snippet.path}` : ''}) does not compile:`,
    ...f.messages.map((m) => `  ${m}`)].join('\n')).join('\n\n');
}
