import { HandlerHarness } from './helpers';
import { DEFAULT_REFRESH_TOKEN } from '../../src/emulator';
import { failureReason, HANDLER_LOG_GROUP_ENV, HandlerError, handlerLogGroup, MAX_REASON_LENGTH, registerSecret } from '../../src/handler/errors';
import { ResourceTypes } from '../../src/kinds';

const SUBSCRIPTION = {
  ProductId: '3001',
  RemoteIdentityId: '362',
  StorageGroupId: '501',
  ProductParameters: { marketplace_id: 'ATVPDKIKX0DER' },
  Status: 'active',
  Name: 'Orders',
  OnDelete: 'invalid',
};

const WRONG_TOKEN = 'rt-not-known-to-the-service-7f3a9c';
const ENV_KEYS = [HANDLER_LOG_GROUP_ENV, 'AWS_LAMBDA_LOG_GROUP_NAME', 'AWS_LAMBDA_FUNCTION_NAME'];

/**
 * What aws-cdk-lib's provider framework makes of a failed handler invocation (custom-resources
 * provider-framework/runtime/framework.js, `invokeUserFunction`, with `includeStackTraces`): the Lambda runtime
 * sends the error's `stack` split into lines as `trace`, and the framework writes every line after the first into
 * the reason after its own `Logs:` line.
 */
function framedByProvider(err: Error): { traceLines: string[]; handlerPart: string } {
  const trace = (err.stack ?? '').split('\n');
  return { traceLines: trace.slice(1), handlerPart: err.message };
}

describe('the failure reason CloudFormation shows', () => {
  let h: HandlerHarness;
  const saved: Record<string, string | undefined> = {};

  beforeAll(async () => {
    h = await HandlerHarness.start({ secretString: JSON.stringify({ refreshToken: WRONG_TOKEN }) });
  });
  afterAll(async () => {
    h.assertNoSecrets();
    expect(h.failures.join('\n')).not.toContain(WRONG_TOKEN);
    expect(h.logs.join('\n')).not.toContain(WRONG_TOKEN);
    await h.stop();
  });
  beforeEach(async () => {
    for (const k of ENV_KEYS) {
      saved[k] = process.env[k];
      delete process.env[k];
    }
    await h.reset();
  });
  afterEach(() => {
    for (const k of ENV_KEYS) {
      if (saved[k] === undefined) delete process.env[k];
      else process.env[k] = saved[k];
    }
  });

  async function failure(): Promise<Error> {
    try {
      await h.onEvent(h.event(ResourceTypes.SUBSCRIPTION, 'Create', SUBSCRIPTION, { LogicalResourceId: 'OrdersSub' }));
    } catch (e) {
      return e as Error;
    }
    throw new Error('expected onEvent to fail');
  }

  test('in Lambda: one line, what failed and why, pointing at the log group the construct named; no stack frames, no token', async () => {
    process.env[HANDLER_LOG_GROUP_ENV] = 'MyStack-DpiProviderHandlerLogs1A2B3C-xyz';
    process.env.AWS_LAMBDA_FUNCTION_NAME = 'MyStack-DpiProviderOnEvent1234-abcd';
    const err = await failure();
    const reason = err.message;
    expect(reason).toMatch(/^Create of OrdersSub failed: the service rejected the credentials .*; see CloudWatch log group MyStack-DpiProviderHandlerLogs1A2B3C-xyz$/);
    expect(reason).not.toContain('\n');
    expect(reason).not.toMatch(/\s{2,}at /);
    expect(reason).not.toContain('/aws/lambda/');
    expect(reason).not.toContain(WRONG_TOKEN);
    expect(reason).not.toContain(DEFAULT_REFRESH_TOKEN);
    expect(reason.length).toBeLessThanOrEqual(MAX_REASON_LENGTH);
    // The provider framework would copy no frame of the handler into the reason.
    const framed = framedByProvider(err);
    expect(framed.traceLines).toEqual([]);
    expect(err.stack).not.toMatch(/\n\s+at /);
  });

  test('without the construct\'s variable: the function\'s configured log group, else /aws/lambda/<function name>', async () => {
    process.env.AWS_LAMBDA_FUNCTION_NAME = 'MyStack-DpiProviderOnEvent1234-abcd';
    expect((await failure()).message).toMatch(/; see CloudWatch log group \/aws\/lambda\/MyStack-DpiProviderOnEvent1234-abcd$/);
    process.env.AWS_LAMBDA_LOG_GROUP_NAME = '/custom/handler';
    expect((await failure()).message).toMatch(/; see CloudWatch log group \/custom\/handler$/);
  });

  test('outside Lambda (local runner): the reason alone, still without stack frames', async () => {
    const err = await failure();
    expect(err.message).toMatch(/^the service rejected the credentials /);
    expect(err.message).not.toContain('log group');
    expect(framedByProvider(err).traceLines).toEqual([]);
  });

  test('a long reason is cut before the log pointer, and a registered secret is removed', () => {
    registerSecret('secret-refresh-token-value-42');
    const err = failureReason('Update of Pipeline', new HandlerError(`line one\n    at Foo (x.js:1:2)\nsecret-refresh-token-value-42 ${'y'.repeat(2000)}`),
      '/aws/lambda/fn');
    expect(err.message.length).toBeLessThanOrEqual(MAX_REASON_LENGTH);
    expect(err.message).toMatch(/^Update of Pipeline failed: line one at Foo/);
    expect(err.message).toMatch(/\.\.\.; see CloudWatch log group \/aws\/lambda\/fn$/);
    expect(err.message).not.toContain('secret-refresh-token-value-42');
    expect(err.message).not.toContain('\n');
    expect(err.stack).toBe(`FailureReason: ${err.message}`);
  });

  test('handlerLogGroup reads the construct\'s variable first', () => {
    expect(handlerLogGroup({ [HANDLER_LOG_GROUP_ENV]: 'a', AWS_LAMBDA_LOG_GROUP_NAME: 'b', AWS_LAMBDA_FUNCTION_NAME: 'c' })).toBe('a');
    expect(handlerLogGroup({ AWS_LAMBDA_FUNCTION_NAME: 'c' })).toBe('/aws/lambda/c');
    expect(handlerLogGroup({})).toBeUndefined();
  });
});
