/**
 * The Lambda runtime of the handler is one constant (`HANDLER_RUNTIME`, src/connection/provider-stacks.ts), stated once in
 * the docs (docs/handler.md, "Lambda runtime"): every function that runs the bundled handler gets it, the handler
 * bundle is built for its Node.js, and no doc names another. Also runs in `npm run test:min-cdk`, where the runtime
 * must exist in the oldest supported aws-cdk-lib.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Duration } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { fixture, roles, sellerPipeline } from './helpers';
import { DriftMonitor, HistoryRequest, Subscription, SubscriptionMonitor } from '../../src';
import { HANDLER_RUNTIME } from '../../src/connection/provider';

const ROOT = join(__dirname, '..', '..');
const major = Number(/^nodejs(\d+)\.x$/.exec(HANDLER_RUNTIME.name)?.[1]);

test('the runtime is a Node.js runtime of the installed aws-cdk-lib', () => {
  expect(HANDLER_RUNTIME.name).toMatch(/^nodejs\d+\.x$/);
  expect(major).toBeGreaterThanOrEqual(22);
});

test('every function running the bundled handler (provider, waiter, monitors) has the runtime of the constant', () => {
  const f = fixture();
  const r = roles(f.stack);
  sellerPipeline(f, r, 'Seller');
  const orders = new Subscription(f.stack, 'Orders', {
    connection: f.connection, productId: 3001, remoteIdentityId: 362, productParameters: { marketplace_id: 'A1' },
  });
  new HistoryRequest(f.stack, 'Backfill', { connection: f.connection, subscription: orders, startDate: '2026-11-15', endDate: '2026-11-17', stageId: 1001 });
  new SubscriptionMonitor(f.stack, 'Monitor', { connection: f.connection, interval: Duration.minutes(15) }).addSubscription(orders);
  new DriftMonitor(f.stack, 'Drift', { connection: f.connection });
  type Fn = { Properties: { Handler: string; Runtime: string } };
  const functions = Object.values(Template.fromStack(f.stack).findResources('AWS::Lambda::Function')) as Fn[];
  const ours = functions.filter((fn) => fn.Properties.Handler.startsWith('index.'));
  expect(ours.map((fn) => fn.Properties.Handler).sort()).toEqual(['index.drift', 'index.isComplete', 'index.monitor', 'index.onEvent']);
  expect(ours.map((fn) => `${fn.Properties.Handler} ${fn.Properties.Runtime}`).sort())
    .toEqual(['drift', 'isComplete', 'monitor', 'onEvent'].map((h) => `index.${h} ${HANDLER_RUNTIME.name}`));
  // The framework functions (aws-cdk-lib chooses their runtime) are there too, and not counted as ours.
  expect(functions.length).toBeGreaterThan(ours.length);
});

test('the handler bundle is built for the runtime\'s Node.js', () => {
  const tasks = JSON.parse(readFileSync(join(ROOT, '.projen', 'tasks.json'), 'utf8')) as { tasks: Record<string, { steps: Array<{ execArgs?: string[]; exec?: string }> }> };
  const step = tasks.tasks['bundle:handler/index'].steps[0];
  const args = step.execArgs ?? (step.exec ?? '').split(' ');
  expect(args.filter((a) => a.startsWith('--target='))).toEqual([`--target=node${major}`]);
});

/** The sentences of a Markdown file (table rows and paragraphs split first). */
function sentences(text: string): string[] {
  return text.split(/\n\s*\n|\n(?=\|)|(?<=[.;:])\s+(?=[A-Z`[(])/).map((s) => s.replace(/\s+/g, ' ').trim());
}

test('the docs state the runtime once (docs/handler.md) and name no other', () => {
  const files = ['README.md', 'CONTRIBUTING.md', ...readdirSync(join(ROOT, 'docs')).filter((n) => n.endsWith('.md')).map((n) => `docs/${n}`)];
  const stated: string[] = [];
  const other: string[] = [];
  for (const file of files) {
    for (const s of sentences(readFileSync(join(ROOT, file), 'utf8'))) {
      const runtimes = [...s.matchAll(/nodejs(\d+)\.x/gi)].map((m) => Number(m[1]));
      // "Node 22", "Node.js 24" in a sentence about the Lambda, its handler or its runtime.
      const versions = /\b(lambda|runtime|handler|functions?)\b/i.test(s) ? [...s.matchAll(/\bnode(?:\.js)?\s+(\d+)\b/gi)].map((m) => Number(m[1])) : [];
      if (runtimes.length + versions.length === 0) continue;
      if (file === 'docs/handler.md' && [...runtimes, ...versions].every((v) => v === major)) stated.push(s);
      else other.push(`${file}: ${s}`);
    }
  }
  expect(other).toEqual([]);
  const section = readFileSync(join(ROOT, 'docs', 'handler.md'), 'utf8').split(/^## /m).find((p) => p.startsWith('Lambda runtime\n'));
  expect(section).toContain(`**\`${HANDLER_RUNTIME.name}\`** (Node.js ${major})`);
  expect(section).toContain(`\`--target=node${major}\``);
  expect(stated.length).toBeGreaterThanOrEqual(2);
});
