import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
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
          },
        },
      },
    },
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
