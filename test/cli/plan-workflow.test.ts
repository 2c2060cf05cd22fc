/**
 * The documented pull request workflow (docs/github/plan-comment.yml): valid YAML of a `pull_request` workflow that
 * checks out base and head, synthesizes both, plans between them and posts one comment; every `dpi` option it uses
 * exists in `dpi plan --help`; its comment script is valid JavaScript; and its plan command, run as written on two
 * synthesized cloud assemblies, prints the markdown plan.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { dpi } from './helpers';
import { synthExample } from './plan-apps';
import { tempDir } from '../local/helpers';

jest.setTimeout(120_000);

const FILE = join(__dirname, '..', '..', 'docs', 'github', 'plan-comment.yml');
const text = readFileSync(FILE, 'utf8');

interface Step { name?: string; uses?: string; run?: string; with?: Record<string, unknown>; id?: string; ['working-directory']?: string }
interface Workflow {
  on: Record<string, unknown>;
  permissions: Record<string, string>;
  env: Record<string, string>;
  jobs: Record<string, { steps: Step[] }>;
}

// A YAML parser of the dev dependencies' tree (not a dependency of the package).
// eslint-disable-next-line @typescript-eslint/no-require-imports, import/no-extraneous-dependencies
const workflow = (require('yaml') as { parse(s: string): unknown }).parse(text) as Workflow;
const steps = workflow.jobs.plan.steps;

test('a pull_request workflow that checks out base and head, synthesizes both and may comment', () => {
  expect(Object.keys(workflow.on)).toEqual(['pull_request']);
  expect(workflow.permissions).toEqual({ 'contents': 'read', 'pull-requests': 'write' });
  const checkouts = steps.filter((s) => s.uses?.startsWith('actions/checkout@'));
  expect(checkouts.map((s) => s.with?.path)).toEqual(['head', 'base']);
  expect(checkouts[1].with?.ref).toBe('${{ github.event.pull_request.base.sha }}');
  const synths = steps.filter((s) => /npx cdk synth/.test(s.run ?? ''));
  expect(synths.map((s) => s['working-directory'])).toEqual(['base/${{ env.APP_DIR }}', 'head/${{ env.APP_DIR }}']);
  const post = steps.find((s) => s.uses?.startsWith('actions/github-script@'))!;
  const script = String(post.with?.script);
  // Valid JavaScript (an async function body, as github-script runs it), which updates its one comment or makes it.
  expect(() => new Function('github', 'context', 'require', 'process', `return (async () => {\n${script}\n})`)).not.toThrow();
  expect(script).toContain('updateComment');
  expect(script).toContain('createComment');
});

test('every dpi option the workflow uses is in dpi plan --help, and its plan command prints the markdown plan', async () => {
  const run = steps.find((s) => s.id === 'plan')!.run!;
  const line = run.split('\n').find((l) => l.includes('npx dpi plan'))!;
  const options = [...line.matchAll(/\s(--[a-z-]+)/g)].map((m) => m[1]);
  expect(options).toEqual(['--app', '--from', '--format']);
  expect(run).toContain('gate=(--fail-on "$FAIL_ON")');
  const help = await dpi(['plan', '--help']);
  for (const o of [...options, '--fail-on']) expect(help.stdout).toContain(`${o} <`);
  expect(help.stdout).toMatch(/--format <format>[\s\S]*"markdown"/);

  // The command as the workflow runs it, on the example app before and after a rename of its Orders subscription.
  const work = tempDir('dpi-plan-workflow-');
  try {
    const base = synthExample(join(work.dir, 'base'));
    const head = synthExample(join(work.dir, 'head'), { ordersName: 'orders (renamed)' });
    const args = line.trim().replace(/\\$/, '').split(/\s+/).slice(2)
      .map((a) => ({ 'cdk.out': head, '"$GITHUB_WORKSPACE/base/$APP_DIR/cdk.out"': base, '"${gate[@]}"': '' } as Record<string, string>)[a] ?? a)
      .filter((a) => a !== '');
    expect(args).toEqual(['plan', '--app', head, '--from', base, '--format', 'markdown']);
    const r = await dpi([...args, '--fail-on', workflow.env.FAIL_ON]);
    expect(r.code).toBe(0);
    expect(r.stdout.split('\n')[0]).toMatch(/^## dpi plan: 1 update, \d+ no-change$/);
    expect(r.stdout).toContain('<details><summary><b>update</b> <code>MarketplaceData/Orders</code>');
    expect(r.stdout).toContain('**Live state:** not read (--from compares two cloud assemblies offline)');
  } finally {
    work.cleanup();
  }
});
