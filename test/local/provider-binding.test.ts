/**
 * `dpi local-deploy` gives the in-process handler its provider function's environment from the template (what the
 * provider serves, src/handler/binding.ts): the REAL bundled handler refuses a resource whose connection differs from
 * the one bound in the template, and serves the app as synthesized.
 */
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { synthTinyApp } from './apps';
import { tempDir } from './helpers';
import { BOUND_CONNECTIONS_ENV, BOUND_STACKS_ENV, CREATED_JOURNAL_TABLES_ENV } from '../../src/contract';
import { DEFAULT_REFRESH_TOKEN, RunningEmulator, startEmulator } from '../../src/emulator';
import { defaultHandlerPath, LocalDeployOptions, readAssembly, runLocalDeploy } from '../../src/local';
import { providerEnvironment, providerFunctionOf, recordedEnvironment } from '../../src/local/provider-env';

if (!existsSync(defaultHandlerPath())) throw new Error('the handler bundle is missing: run \'npx projen bundle\' first');

let emulator: RunningEmulator;
let tmp: { dir: string; cleanup: () => void };
const output: string[] = [];

beforeAll(async () => {
  emulator = await startEmulator({ port: 0 });
});
afterAll(async () => {
  await emulator.stop();
});
beforeEach(() => {
  tmp = tempDir();
  output.length = 0;
});
afterEach(() => tmp.cleanup());

function opts(app: string): LocalDeployOptions {
  return {
    app,
    emulatorUrl: emulator.url,
    stateFile: join(tmp.dir, 'state', 'local-state.json'),
    refreshToken: DEFAULT_REFRESH_TOKEN,
    progress: (l) => output.push(l),
    output: (l) => output.push(l),
  };
}

test('the provider function\'s environment is found through the service token and resolved like the properties', () => {
  const app = synthTinyApp(join(tmp.dir, 'cdk.out'), { subscriptionName: 'orders' });
  const [stack] = readAssembly(app);
  const orders = Object.keys(stack.template.Resources!).find((id) => id.startsWith('Orders'))!;
  const fn = providerFunctionOf(stack, orders);
  expect(fn?.logicalId).toMatch(/^DpiProviderOnEvent/);
  const ctx = {
    env: { stackName: stack.stackName, stackId: 'arn:aws:cloudformation:us-east-1:123456789012:stack/Tiny/x', account: stack.account, region: stack.region },
    template: stack.template,
    placeholders: false,
    deployed: () => undefined,
  };
  const env = providerEnvironment(stack, orders, () => ctx, emulator.url)!;
  const [conn] = JSON.parse(env[BOUND_CONNECTIONS_ENV]) as string[][];
  // The addresses go to the emulator (as the events'), the secret ARN is resolved from its Fn::Join of pseudo parameters.
  expect(conn).toEqual([...Array(6).fill(emulator.url), 'arn:aws:secretsmanager:us-east-1:123456789012:secret:dpi/refresh-token', 'dpi-lifecycle-journal']);
  expect(JSON.parse(env[BOUND_STACKS_ENV])).toEqual(['Tiny']);
});

test('a resource whose connection differs from the template\'s binding is refused; the app as synthesized deploys', async () => {
  const app = synthTinyApp(join(tmp.dir, 'cdk.out'), { subscriptionName: 'orders' });
  const file = join(app, readdirSync(app).find((f) => f.startsWith('Tiny') && f.endsWith('.template.json'))!);
  const template = JSON.parse(readFileSync(file, 'utf8'));
  const orders = Object.keys(template.Resources).find((id) => id.startsWith('Orders'))!;
  template.Resources[orders].Properties.Connection.JournalTableName = 'planted-journal';
  writeFileSync(file, JSON.stringify(template));
  const refused = await runLocalDeploy(opts(app));
  expect(refused.success).toBe(false);
  expect(output.join('\n')).toContain('Connection.JournalTableName \'planted-journal\' (the provider serves \'dpi-lifecycle-journal\')');
  output.length = 0;
  const ok = await runLocalDeploy(opts(synthTinyApp(join(tmp.dir, 'cdk.out.2'), { subscriptionName: 'orders' })));
  expect([ok.success, ok.error]).toEqual([true, undefined]);
  const destroyed = await runLocalDeploy({ ...opts(''), app: undefined, destroy: true });
  expect(destroyed.success).toBe(true);
});

test('a recorded binding (what the app no longer has): the runner\'s own Deletes may make the recorded journal table, dpi orphans --fix may not', () => {
  const connection = { JournalTableName: 'team-journal', RefreshTokenSecretArn: 'arn:aws:secretsmanager:us-east-1:123456789012:secret:t' };
  expect(recordedEnvironment(connection, ['Orders'], [], undefined, true)[CREATED_JOURNAL_TABLES_ENV]).toBe('team-journal');
  expect(recordedEnvironment({}, ['Orders'], [], undefined, true)[CREATED_JOURNAL_TABLES_ENV]).toBe('dpi-lifecycle-journal');
  expect(Object.keys(recordedEnvironment(connection, ['Orders']))).not.toContain(CREATED_JOURNAL_TABLES_ENV);
});
