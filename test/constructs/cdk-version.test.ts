/**
 * Which aws-cdk-lib the construct tests run against: the newest (the devDependency) in `npm test`, the oldest of the
 * peer range in `npm run test:min-cdk` (which sets DPI_EXPECT_CDK).
 */
// eslint-disable-next-line @typescript-eslint/no-require-imports
const inUse = (require('aws-cdk-lib/package.json') as { version: string }).version;
// eslint-disable-next-line @typescript-eslint/no-require-imports
const pkg = require('../../package.json') as { devDependencies: Record<string, string>; peerDependencies: Record<string, string> };

test('the construct tests run against the expected aws-cdk-lib', () => {
  expect(inUse).toBe(process.env.DPI_EXPECT_CDK ?? pkg.devDependencies['aws-cdk-lib']);
  // The oldest supported version is the floor of the peer range.
  expect(pkg.peerDependencies['aws-cdk-lib']).toBe('^2.257.0');
});
