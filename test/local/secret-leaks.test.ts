/**
 * The runner shows a leak instead of hiding it: handler.log keeps what the handler wrote (as CloudWatch Logs would),
 * a failure reason that holds the refresh token fails the run, and the fault matrix's secret check (the same files
 * and results) fires. The handler here is a planted one that logs the token and puts it into a failure reason.
 */
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { synthTinyApp } from './apps';
import { tempDir } from './helpers';
import { DEFAULT_REFRESH_TOKEN } from '../../src/emulator';
import { runLocalDeploy } from '../../src/local';
import { secretsIn } from '../faults/summary';

const PLANTED = `
let readSecret;
exports.configureLocalRuntime = (runtime) => { readSecret = runtime.readSecret; };
exports.onEvent = async (event) => {
  const token = await readSecret('arn:aws:secretsmanager:us-east-1:123456789012:secret:dpi/refresh-token');
  if (event.RequestType === 'Delete') return { PhysicalResourceId: event.PhysicalResourceId };
  console.log('signing in with ' + token);
  if (event.LogicalResourceId.startsWith('Pipeline')) throw new Error('the service refused the token ' + token);
  return { PhysicalResourceId: 'planted-' + event.LogicalResourceId };
};
`;

/** The fault matrix's secret check, less the embedded emulator's own state (the service side: it holds its accounts' tokens). */
function leakedIn(stateDir: string, result: unknown): string[] {
  return secretsIn(stateDir, [result], [DEFAULT_REFRESH_TOKEN]).filter((where) => where !== 'emulator-state.json');
}

let tmp: { dir: string; cleanup: () => void };
beforeEach(() => {
  tmp = tempDir('dpi-leak-');
});
afterEach(() => tmp.cleanup());

test('a handler that logs the token and puts it into a failure reason fails the run, and every check sees it', async () => {
  const handlerPath = join(tmp.dir, 'planted-handler.js');
  writeFileSync(handlerPath, PLANTED);
  const app = synthTinyApp(join(tmp.dir, 'cdk.out'), { subscriptionName: 'orders' });
  const stateDir = join(tmp.dir, 'state');
  const printed: string[] = [];
  const collect = (l: string): void => {
    printed.push(l);
  };
  const result = await runLocalDeploy({ app, handlerPath, stateFile: join(stateDir, 'local-state.json'), concurrency: 1, progress: collect, output: collect });
  expect(result.success).toBe(false);
  // Where: the log, and the failing resource's reason.
  expect(result.secretLeaks).toEqual(expect.arrayContaining(['the handler log (handler.log)', expect.stringMatching(/^the reason of Tiny\/Pipeline\S* CREATE_FAILED$/)]));
  expect(result.error).toContain('the refresh token appears in');
  // handler.log keeps the line as written, as CloudWatch Logs would: the check of the file can fire.
  expect(readFileSync(join(stateDir, 'handler.log'), 'utf8')).toContain(`signing in with ${DEFAULT_REFRESH_TOKEN}`);
  // What the runner prints and returns has it replaced.
  expect(printed.join('\n')).not.toContain(DEFAULT_REFRESH_TOKEN);
  expect(printed.join('\n')).toContain('the refresh token appears in the handler log (handler.log)');
  expect(JSON.stringify(result)).not.toContain(DEFAULT_REFRESH_TOKEN);
  expect(result.events.find((e) => e.status === 'CREATE_FAILED')?.reason).toContain('refused the token ***');
  // The fault matrix's check (test/faults/matrix.ts) reads the same state folder and results.
  expect(leakedIn(stateDir, result)).toEqual(['handler.log']);
});

test('the real handler leaks nothing in the same run (the check is quiet when nothing leaked)', async () => {
  const app = synthTinyApp(join(tmp.dir, 'cdk.out'), { subscriptionName: 'orders' });
  const stateDir = join(tmp.dir, 'state');
  const opts = { app, stateFile: join(stateDir, 'local-state.json'), progress: () => undefined, output: () => undefined };
  const deployed = await runLocalDeploy(opts);
  expect(deployed.success).toBe(true);
  expect(deployed.secretLeaks).toBeUndefined();
  expect(readFileSync(join(stateDir, 'handler.log'), 'utf8').length).toBeGreaterThan(0);
  expect(leakedIn(stateDir, deployed)).toEqual([]);
  // The state folder is its owner's alone: the folder 0700, every file in it 0600.
  expect(statSync(stateDir).mode % 0o1000).toBe(0o700);
  for (const f of ['local-state.json', 'journal.json', 'handler.log', 'emulator-state.json']) expect([f, statSync(join(stateDir, f)).mode % 0o1000]).toEqual([f, 0o600]);
  expect((await runLocalDeploy({ ...opts, destroy: true })).success).toBe(true);
});
