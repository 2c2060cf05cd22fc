import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';

/**
 * docs/troubleshooting.md quotes the library's messages in ```text blocks, one message a line, with the parts that
 * vary written `<like this>` and `…` where the page shortens a message. Every fixed part of every quoted message must
 * still occur in src/: a message renamed or reworded in the code fails here until the page follows.
 *
 * A message is split into fragments at its `<...>` parts, at `…` and at `; ` (the messages join their clauses with
 * `; `, often from separate strings); `dpi: `, the prefix the CLI puts before its errors (src/cli/program.ts), is
 * dropped. A fragment (its surrounding spaces, quotes and punctuation trimmed) of 4 characters or more must occur in
 * the source text of src/, where strings joined with `+` are read as one and escaped quotes unescaped.
 */
const root = join(__dirname, '..', '..');
const PAGE = 'docs/troubleshooting.md';

/** The messages a page quotes: each non-empty line of its ```text blocks, with its Markdown line. */
export function quotedMessages(markdown: string): Array<{ line: number; message: string }> {
  const lines = markdown.split(/\r?\n/);
  const out: Array<{ line: number; message: string }> = [];
  let inText = false;
  lines.forEach((l, i) => {
    if (/^\s*```/.test(l)) {
      inText = !inText && /^\s*```text\s*$/.test(l);
      return;
    }
    if (inText && l.trim() !== '') out.push({ line: i + 1, message: l.trim() });
  });
  return out;
}

/** The fixed parts of a quoted message that the source must contain. */
export function messageFragments(message: string): string[] {
  return message.replace(/^dpi: /, '')
    .split(/<[^<>]*>|…|; /)
    .map((f) => f.replace(/^[\s'"`:;,.()[\]]+|[\s'"`:;,.()[\]]+$/g, ''))
    .filter((f) => f.length >= 4);
}

/** The source text of a folder's .ts files, strings joined with `+` read as one, escaped quotes unescaped. */
export function sourceText(dir: string): string {
  const files: string[] = [];
  const walk = (d: string): void => {
    for (const name of readdirSync(d)) {
      const p = join(d, name);
      if (statSync(p).isDirectory()) walk(p);
      else if (name.endsWith('.ts')) files.push(p);
    }
  };
  walk(dir);
  return normalizeSource(files.sort().map((f) => readFileSync(f, 'utf8')).join('\n\u0000\n'));
}

/** `'a ' + 'b'` (also across lines, any quotes) reads `a b`; `\'` reads `'`. */
export function normalizeSource(text: string): string {
  return text.replace(/(['"`])\s*\+\s*(['"`])/g, '').replace(/\\(['"`\\])/g, '$1');
}

/** The quoted fragments the source does not contain, each named by its Markdown line. */
export function missingFragments(markdown: string, source: string): string[] {
  return quotedMessages(markdown).flatMap(({ line, message }) =>
    messageFragments(message).filter((f) => !source.includes(f)).map((f) => `${PAGE}:${line}: '${f}' is not in src/ (message: ${message})`));
}

const page = readFileSync(join(root, PAGE), 'utf8');
const source = sourceText(join(root, 'src'));

describe('docs/troubleshooting.md', () => {
  test('quotes many messages, every one with fixed parts to check', () => {
    const messages = quotedMessages(page);
    expect(messages.length).toBeGreaterThanOrEqual(30);
    expect(messages.filter((m) => messageFragments(m.message).length === 0)).toEqual([]);
  });

  test('every fixed part of every quoted message still occurs in src/', () => {
    expect(missingFragments(page, source)).toEqual([]);
  });

  test('every ### entry has a message block or says there is none, and its cause and fix', () => {
    const entries = page.split(/^### /m).slice(1);
    expect(entries.length).toBeGreaterThanOrEqual(25);
    for (const e of entries) {
      const title = e.split('\n')[0];
      expect({ title, block: /```text\n/.test(e) || /^No message/m.test(e) }).toEqual({ title, block: true });
      expect({ title, cause: e.includes('**Cause.**'), fix: e.includes('**Fix.**') }).toEqual({ title, cause: true, fix: true });
    }
  });
});

describe('the check', () => {
  test('splits a message at its variable parts, at … and at "; ", without the dpi: prefix', () => {
    expect(messageFragments('dpi: no refresh token: set DPI_REFRESH_TOKEN; see <file> (mode <mode>) …')).toEqual(
      ['no refresh token: set DPI_REFRESH_TOKEN', 'mode']);
  });

  test('reads joined and escaped strings as the message they make', () => {
    expect(normalizeSource('throw new Error(`${p}: the journal is the only proof of `\n    + \'what this connection\\\'s resources made\');'))
      .toContain('the journal is the only proof of what this connection\'s resources made');
  });

  test('a message renamed in the source fails, naming the page line and the fragment', () => {
    const renamed = source.split('no lifecycle journal (journal, journalTable or journalTableName)').join('no journal (journal)');
    const missing = missingFragments(page, renamed);
    expect(missing).toHaveLength(1);
    expect(missing[0]).toMatch(/^docs\/troubleshooting\.md:\d+: 'no lifecycle journal \(journal, journalTable or journalTableName\): the journal is/);
  });

  test('a message the source never had fails', () => {
    expect(missingFragments('```text\n<path>: the pipeline exploded; nothing was changed\n```\n', source))
      .toEqual([`${PAGE}:2: 'the pipeline exploded' is not in src/ (message: <path>: the pipeline exploded; nothing was changed)`]);
  });
});
