import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A stack of a hand-written cloud assembly. */
export interface FixtureStack {
  readonly name: string;
  /** CloudFormation stack name, when it differs from the artifact ID (CDK stages). */
  readonly stackName?: string;
  readonly template: Record<string, unknown>;
  readonly account?: string;
  readonly region?: string;
  readonly dependencies?: string[];
}

/** Writes a minimal cloud assembly (manifest.json + templates) into `dir`. */
export function writeAssembly(dir: string, stacks: readonly FixtureStack[]): string {
  mkdirSync(dir, { recursive: true });
  const artifacts: Record<string, unknown> = {};
  for (const s of stacks) {
    const file = `${s.name}.template.json`;
    writeFileSync(join(dir, file), JSON.stringify(s.template, undefined, 1));
    artifacts[s.name] = {
      type: 'aws:cloudformation:stack',
      environment: `aws://${s.account ?? '123456789012'}/${s.region ?? 'us-east-1'}`,
      properties: { templateFile: file, ...(s.stackName ? { stackName: s.stackName } : {}) },
      dependencies: s.dependencies ?? [],
    };
  }
  writeFileSync(join(dir, 'manifest.json'), JSON.stringify({ version: '53.0.0', artifacts }));
  return dir;
}

/** A fresh temporary directory; `cleanup()` removes it. */
export function tempDir(prefix = 'dpi-local-'): { dir: string; cleanup: () => void } {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/** The `Connection` property as the constructs write it (placeholder URL, secret ARN via Fn::Join). */
export function connection(url = 'https://api.example-dpi.com'): Record<string, unknown> {
  return {
    BaseUrl: url,
    SubscriptionsUrl: url,
    AccountUrl: url,
    UserUrl: url,
    RemoteIdentityUrl: url,
    AuthUrl: url,
    RefreshTokenSecretArn: { 'Fn::Join': ['', ['arn:', { Ref: 'AWS::Partition' }, ':secretsmanager:us-east-1:123456789012:secret:dpi/refresh-token']] },
  };
}

/** Provider resources as the constructs synthesize them (framework Lambdas; the waiter one has USER_IS_COMPLETE_FUNCTION_ARN). */
export function providerResources(): Record<string, unknown> {
  return {
    // The timeouts the library's provider sets (10 minutes): the runner gives each invocation its function's.
    ProviderOnEvent: { Type: 'AWS::Lambda::Function', Properties: { Handler: 'index.onEvent', Timeout: 600 } },
    ProviderIsComplete: { Type: 'AWS::Lambda::Function', Properties: { Handler: 'index.isComplete', Timeout: 600 } },
    ProviderFramework: {
      Type: 'AWS::Lambda::Function',
      Properties: { Environment: { Variables: { USER_ON_EVENT_FUNCTION_ARN: { 'Fn::GetAtt': ['ProviderOnEvent', 'Arn'] } } } },
    },
    WaiterFramework: {
      Type: 'AWS::Lambda::Function',
      Properties: {
        Environment: {
          Variables: {
            USER_ON_EVENT_FUNCTION_ARN: { 'Fn::GetAtt': ['ProviderOnEvent', 'Arn'] },
            USER_IS_COMPLETE_FUNCTION_ARN: { 'Fn::GetAtt': ['ProviderIsComplete', 'Arn'] },
            WAITER_STATE_MACHINE_ARN: { Ref: 'WaiterStateMachine' },
          },
        },
      },
    },
    WaiterIsCompleteFramework: { Type: 'AWS::Lambda::Function', Properties: { Handler: 'framework.isComplete' } },
    WaiterStateMachine: waiterStateMachine(),
  };
}

/** A Step Functions retrier's numbers. */
export interface WaiterRetry {
  IntervalSeconds: number;
  MaxAttempts: number;
  BackoffRate: number;
}

/**
 * The provider framework's waiter state machine as aws-cdk-lib synthesizes it (a `DefinitionString` joined around the
 * framework's function ARNs), with this library's retry policy unless told otherwise.
 */
export function waiterStateMachine(retry: WaiterRetry = { IntervalSeconds: 30, MaxAttempts: 120, BackoffRate: 1 }): Record<string, unknown> {
  const task = { End: true, Retry: [{ ErrorEquals: ['States.ALL'], ...retry }], Catch: [{ ErrorEquals: ['States.ALL'], Next: 'framework-onTimeout-task' }], Type: 'Task', Resource: '@' };
  const [head, tail] = JSON.stringify({ StartAt: 'framework-isComplete-task', States: { 'framework-isComplete-task': task } }).split('@');
  return {
    Type: 'AWS::StepFunctions::StateMachine',
    Properties: { DefinitionString: { 'Fn::Join': ['', [head, { 'Fn::GetAtt': ['WaiterIsCompleteFramework', 'Arn'] }, tail]] } },
  };
}

/** A Custom::Dpi* resource served by the plain framework (or the waiter one). */
export function dpiResource(
  type: string, props: Record<string, unknown>, extra: Record<string, unknown> = {}, waiter = false,
): Record<string, unknown> {
  return {
    Type: type,
    Properties: {
      ServiceToken: { 'Fn::GetAtt': [waiter ? 'WaiterFramework' : 'ProviderFramework', 'Arn'] },
      Connection: connection(),
      ...props,
    },
    ...extra,
  };
}

/** One call the fake handler (fixtures/fake-handler.js) recorded. */
export interface FakeCall {
  fn: string;
  event: Record<string, unknown> & { ResourceProperties: Record<string, unknown>; OldResourceProperties?: Record<string, unknown> };
  /** The handler's clock (`Date.now()` in its container) at the call. */
  now?: number;
  account?: string;
  remaining?: number;
  threadId?: number;
  seen?: number;
}

// The fake handler runs in the runner's containers (worker threads of this process): a file is the shared medium.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const FAKE_CALLS_FILE = (require('./fixtures/fake-handler.js') as { callsFile(): string }).callsFile();

/** The fake handler's calls so far, in order. */
export function fakeCalls(): FakeCall[] {
  return existsSync(FAKE_CALLS_FILE) ? readFileSync(FAKE_CALLS_FILE, 'utf8').split('\n').filter((l) => l).map((l) => JSON.parse(l) as FakeCall) : [];
}

/** Forgets the fake handler's calls. */
export function resetFakeCalls(): void {
  rmSync(FAKE_CALLS_FILE, { force: true });
}
