/**
 * jest `globalSetup` (package.json `jest.globalSetup`, from .projenrc.ts). Set before the workers start, so they and
 * the processes they spawn inherit it:
 * - on a deprecated Node.js (20) the AWS SDK prints its nine-line `NodeVersionSupportWarning` in every test process
 *   that creates a client (and in every `dpi` the tests spawn); the SDK's own switch silences it, so the logs carry only
 *   the tests' output. test/cli/warnings.test.ts unsets it for the `dpi` it runs.
 * - aws-cdk-lib's built-in CloudFormation validation runs a WASM rule engine at every synth, about half of each
 *   construct test's time; `CDK_VALIDATION=false` turns it off. test/constructs/cfn-validation.test.ts runs it, with
 *   findings as errors, on the example app and a fleet. Set `CDK_VALIDATION=true` to run every suite with it.
 */
export default function globalSetup(): void {
  const major = Number(process.versions.node.split('.')[0]);
  if (major < 22) process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
  process.env.CDK_VALIDATION ??= 'false';
}
