/**
 * No warning a user cannot act on from `dpi` (README, "Supported Node.js versions"; src/cli/node-version.ts): the
 * bundled `dpi` runs the commands that load the AWS SDK (DynamoDB for the journal, CloudFormation for the deployed
 * stacks) with the Node.js that runs the tests (`process.execPath`): the build machine's in the main jest run, 22 and
 * 24 in `npm run test:node -- 22|24` (CI runs both). On a supported version stderr holds no warning at all; on a
 * deprecated one the SDK's nine-line warning is replaced by one line of dpi's own, once per run.
 * Needs `npx projen bundle`.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  BUNDLED_DEPRECATIONS, DEPRECATED_NODE_MAJORS, SUPPORTED_NODE_MAJORS, nodeMajor, nodeVersionNotice, replaceUnactionableWarnings, tellOldNodeFirst,
} from '../../src/cli/node-version';
import { synthTinyApp } from '../local/apps';

const DPI = join(__dirname, '..', '..', 'assets', 'cli', 'dpi', 'index.js');
if (!existsSync(DPI)) throw new Error(`${DPI} is missing: run 'npx projen bundle' first`);

const major = nodeMajor(process.version);
const supported = SUPPORTED_NODE_MAJORS.includes(major) || major > Math.max(...SUPPORTED_NODE_MAJORS);

/** The environment of a user who silenced nothing (the jest setup silences the SDK on Node 20: undone here). */
function userEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, DPI_REFRESH_TOKEN: '', NO_COLOR: '1', ...extra };
  for (const k of ['AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED', 'NODE_NO_WARNINGS', 'NODE_OPTIONS']) delete env[k];
  return env;
}

function dpi(args: string[], cwd: string, extra?: Record<string, string>): { code: number | null; stderr: string; stdout: string } {
  const r = spawnSync(process.execPath, [DPI, ...args], { cwd, encoding: 'utf8', timeout: 120_000, env: userEnv(extra) });
  return { code: r.status, stderr: r.stderr, stdout: r.stdout };
}

/** What stderr must (not) hold on this Node.js; `sdk` says whether the run created an AWS SDK client. */
function expectOnlyActionableWarnings(stderr: string, sdk: boolean): void {
  expect(stderr).not.toContain('NodeVersionSupportWarning');
  const notices = stderr.split('\n').filter((l) => l.startsWith('dpi: Node.js '));
  if (supported) {
    expect(stderr).not.toMatch(/warning/i);
    expect(notices).toEqual([]);
  } else {
    // At most one line, which says what to do; only when the SDK would have warned.
    expect(notices).toEqual(sdk ? [nodeVersionNotice(process.version, 'node >=22')] : []);
    // Before anything else the command prints: never between its progress lines.
    if (sdk) expect(stderr.startsWith(`${notices[0]}\n`)).toBe(true);
    expect(stderr.replace(notices[0] ?? '\u0000', '')).not.toMatch(/warning/i);
  }
}

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'dpi-node-version-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

test(`dpi local-deploy, drift --local, orphans --local and destroy print no warning a user cannot act on (Node.js ${process.version})`, () => {
  const app = synthTinyApp(join(dir, 'cdk.out'));
  const state = join(dir, 'state', 'local-state.json');
  const runs = [
    { args: ['local-deploy', '--app', app, '--state', state], code: 0 },
    { args: ['drift', '--local', '--state', state], code: 0 },
    { args: ['orphans', '--local', '--state', state], code: 0 },
    { args: ['local-deploy', '--destroy', '--state', state], code: 0 },
  ];
  for (const { args, code } of runs) {
    const r = dpi(args, dir);
    expect({ args, code: r.code, stderr: r.code === code ? '' : r.stderr }).toEqual({ args, code, stderr: '' });
    expectOnlyActionableWarnings(r.stderr, true);
  }
});

test('dpi drift against CloudFormation (the SDK client is created, the call fails) prints its error and no warning', async () => {
  // A closed port on 127.0.0.1: the CloudFormation call is refused at once, after the client (and its version check) loaded.
  const server = createServer();
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  const port = (server.address() as { port: number }).port;
  await new Promise<void>((ok) => server.close(() => ok()));
  const r = dpi(['drift', '--stack', 'Tiny', '--region', 'us-east-1'], dir, {
    AWS_ENDPOINT_URL_CLOUDFORMATION: `http://127.0.0.1:${port}`,
    AWS_ACCESS_KEY_ID: 'AKIDEXAMPLE',
    AWS_SECRET_ACCESS_KEY: 'example',
    AWS_MAX_ATTEMPTS: '1',
    AWS_CONFIG_FILE: join(dir, 'none'),
    AWS_SHARED_CREDENTIALS_FILE: join(dir, 'none'),
  });
  expect(r.code).not.toBe(0);
  expect(r.stderr).toMatch(/^dpi: /m);
  expectOnlyActionableWarnings(r.stderr, true);
});

test('dpi --version loads no SDK and prints nothing on stderr', () => {
  const r = dpi(['--version'], dir);
  expect(r.code).toBe(0);
  expect(r.stderr).toBe('');
});

test('tellOldNodeFirst: once, only for the commands that load the SDK, only on an old Node.js, silenced as the SDK\'s warning is', () => {
  const fake = (version: string, env: Record<string, string> = {}): { proc: NodeJS.Process; written: string[] } => {
    const written: string[] = [];
    return { proc: { version, env, execArgv: [], stderr: { write: (t: string) => written.push(t) } } as unknown as NodeJS.Process, written };
  };
  const old = fake('v20.20.2');
  expect(tellOldNodeFirst('products', old.proc)).toBe(false);
  expect(tellOldNodeFirst('local-deploy', old.proc)).toBe(true);
  expect(tellOldNodeFirst('local-deploy', old.proc)).toBe(false);
  expect(old.written).toEqual([`${nodeVersionNotice('v20.20.2', 'node >=22')}\n`]);
  expect(tellOldNodeFirst('drift', fake('v22.1.0').proc)).toBe(false);
  expect(tellOldNodeFirst('drift', fake('v20.20.2', { NODE_NO_WARNINGS: '1' }).proc)).toBe(false);
});

describe('replaceUnactionableWarnings', () => {
  const SDK_TEXT = 'NodeVersionSupportWarning: The AWS SDK for JavaScript (v3)\nversions published after the first week of January 2027\nwill require node >=22. You are running node v20.20.2.\n\nTo continue receiving updates...';
  function fakeProcess(version: string, env: Record<string, string> = {}) {
    const written: string[] = [];
    const passed: unknown[][] = [];
    const proc = {
      version,
      env,
      execArgv: [] as string[],
      stderr: { write: (s: string) => written.push(s) },
      emitWarning: (...args: unknown[]) => { passed.push(args); },
    };
    replaceUnactionableWarnings(proc as unknown as NodeJS.Process);
    return { proc: proc as unknown as NodeJS.Process, written, passed };
  }

  test('on a deprecated Node.js: the SDK warning becomes one line, once; other warnings pass through', () => {
    const { proc, written, passed } = fakeProcess('v20.20.2');
    proc.emitWarning(SDK_TEXT);
    proc.emitWarning(SDK_TEXT);
    proc.emitWarning('something else', 'DeprecationWarning');
    expect(written).toEqual(['dpi: Node.js v20.20.2 is deprecated (end of life); new AWS SDK releases require Node.js >=22: run dpi on Node.js 22 or 24.\n']);
    expect(passed).toEqual([['something else', 'DeprecationWarning']]);
  });

  test('NODE_NO_WARNINGS=1 silences the line too', () => {
    const { proc, written } = fakeProcess('v20.20.2', { NODE_NO_WARNINGS: '1' });
    proc.emitWarning(SDK_TEXT);
    expect(written).toEqual([]);
  });

  test('on a supported Node.js the SDK\'s warning (if a newer SDK raised one) is not replaced', () => {
    for (const v of SUPPORTED_NODE_MAJORS) {
      const { proc, written, passed } = fakeProcess(`v${v}.1.0`);
      proc.emitWarning(SDK_TEXT);
      expect(written).toEqual([]);
      expect(passed).toEqual([[SDK_TEXT]]);
    }
  });

  test('deprecations of bundled dependencies (dynalite\'s url.parse, DEP0169) are dropped on every version; others pass', () => {
    for (const v of ['v20.20.2', 'v24.1.0']) {
      const { proc, written, passed } = fakeProcess(v);
      proc.emitWarning('`url.parse()` behavior is not standardized', 'DeprecationWarning', 'DEP0169');
      proc.emitWarning('`url.parse()` behavior is not standardized', { type: 'DeprecationWarning', code: 'DEP0169' });
      proc.emitWarning('Buffer() is deprecated', 'DeprecationWarning', 'DEP0005');
      expect(written).toEqual([]);
      expect(passed).toEqual([['Buffer() is deprecated', 'DeprecationWarning', 'DEP0005']]);
    }
    expect(BUNDLED_DEPRECATIONS).toEqual(['DEP0169']);
  });

  test('the supported and deprecated versions', () => {
    expect(SUPPORTED_NODE_MAJORS).toEqual([22, 24]);
    expect(DEPRECATED_NODE_MAJORS).toEqual([20]);
    expect(nodeVersionNotice('v18.0.0')).toBe('dpi: Node.js v18.0.0 is not supported: run dpi on Node.js 22 or 24.');
  });
});
