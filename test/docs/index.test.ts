import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * docs/README.md is the index of the docs: its first table has one row per page of docs/ (docs/github/ included),
 * plus CHANGELOG.md and CONTRIBUTING.md, each linked as the row's first cell. A page added without its row fails here.
 */
const root = join(__dirname, '..', '..');

/** The link targets of the first cells of the first table of a Markdown text. */
export function indexedPages(markdown: string): string[] {
  const lines = markdown.split(/\r?\n/);
  const start = lines.findIndex((l) => /^\|.*\|\s*$/.test(l));
  if (start < 0) return [];
  const rows: string[] = [];
  for (let i = start + 2; i < lines.length && lines[i].startsWith('|'); i++) {
    const first = lines[i].split('|')[1] ?? '';
    const link = /\]\(([^)#\s]+)[^)]*\)/.exec(first)?.[1];
    if (link) rows.push(link);
  }
  return rows;
}

function docsPages(): string[] {
  const top = readdirSync(join(root, 'docs')).filter((f) => f.endsWith('.md') && f !== 'README.md');
  const github = readdirSync(join(root, 'docs', 'github')).map((f) => `github/${f}`);
  return [...top, ...github, '../CHANGELOG.md', '../CONTRIBUTING.md'].sort();
}

describe('docs/README.md, the index', () => {
  test('its first table has one row per docs page, CHANGELOG.md and CONTRIBUTING.md', () => {
    const rows = indexedPages(readFileSync(join(root, 'docs', 'README.md'), 'utf8'));
    const expected = docsPages();
    expect(expected).toContain('tutorial.md');
    expect(expected).toContain('troubleshooting.md');
    expect(rows.filter((r) => expected.includes(r)).sort()).toEqual(expected);
    expect(rows.length).toBe(new Set(rows).size);
  });

  test('the check reads the first table only, by its rows\' first links', () => {
    const md = '# Docs\n\n| Page | What |\n|---|---|\n| [a.md](a.md) | A, see [b.md](b.md) |\n| [c.md](c.md#x) | C |\n\n| Old | New |\n|---|---|\n| [d.md](d.md) | x |\n';
    expect(indexedPages(md)).toEqual(['a.md', 'c.md']);
  });
});
