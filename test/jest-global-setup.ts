/**
 * jest `globalSetup` (package.json `jest.globalSetup`, from .projenrc.ts): on a deprecated Node.js (20) the AWS SDK
 * prints its nine-line `NodeVersionSupportWarning` in every test process that creates a client (and in every `dpi` the
 * tests spawn); the SDK's own switch silences it, so the logs carry only the tests' output. Set before the workers
 * start, so they and the processes they spawn inherit it. test/cli/warnings.test.ts unsets it for the `dpi` it runs.
 */
export default function globalSetup(): void {
  const major = Number(process.versions.node.split('.')[0]);
  if (major < 22) process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
}
