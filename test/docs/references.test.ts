import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';

/**
 * README.md and docs/*.md ship in the npm package; src/, test/, examples/, bench/ and scripts/ do not (.npmignore).
 * A link must reach a file the package contains, and a page that names a repository path says that such paths are
 * in the source repository.
 */
const root = join(__dirname, '..', '..');
const REPOSITORY_ONLY = ['src', 'test', 'examples', 'bench', 'scripts', 'rosetta', 'projenrc'];
const pages = ['README.md', ...readdirSync(join(root, 'docs')).filter((f) => f.endsWith('.md')).sort().map((f) => `docs/${f}`)];

function shippedDirsAreIgnored(): void {
  const npmignore = readFileSync(join(root, '.npmignore'), 'utf8').split('\n').map((l) => l.trim().replace(/^\//, '').replace(/\/$/, ''));
  for (const dir of ['src', 'test', 'examples', 'bench', 'scripts', 'rosetta']) expect(npmignore).toContain(dir);
}

describe('references of the docs', () => {
  test('the repository-only folders are not in the package (.npmignore)', () => {
    shippedDirsAreIgnored();
  });

  test.each(pages)('%s: every relative link reaches a file the package contains', (page) => {
    const text = readFileSync(join(root, page), 'utf8');
    const bad: string[] = [];
    for (const m of text.matchAll(/\]\(([^)\s]+)\)/g)) {
      const target = m[1].split('#')[0];
      if (target === '' || /^[a-z]+:/i.test(target)) continue;
      const path = normalize(join(dirname(join(root, page)), target));
      const top = relative(root, path).split(/[\\/]/)[0];
      if (!existsSync(path)) bad.push(`${m[1]}: no such file`);
      else if (REPOSITORY_ONLY.includes(top)) bad.push(`${m[1]}: not in the package (link the source repository instead)`);
    }
    expect(bad).toEqual([]);
  });

  test.each(pages)('%s: a page that names repository paths says they are in the source repository', (page) => {
    const text = readFileSync(join(root, page), 'utf8');
    const named = text.match(/`(\.\/)?(src|test|examples|bench|scripts)\/[^`]*`/g) ?? [];
    if (named.length > 0) expect({ page, marked: /source\s+(>\s*)?repository/.test(text) }).toEqual({ page, marked: true });
  });
});
