// The construct tests against the oldest aws-cdk-lib the peer range allows (`npm run test:min-cdk`): the package's
// jest configuration (its unit tier's project options), every test/constructs suite whatever its tier (the 2,000-identity
// alarm counts are end-to-end), with aws-cdk-lib and constructs resolved from .min-cdk/ (installed there by the task).
const path = require('path');
const { projects, ...base } = require('../../package.json').jest;

const root = path.resolve(__dirname, '..', '..');
const min = path.join(root, '.min-cdk', 'node_modules');
const unit = projects.find((p) => p.displayName === 'unit');

module.exports = {
  ...base,
  ...unit,
  displayName: 'constructs (oldest aws-cdk-lib)',
  rootDir: root,
  testMatch: ['<rootDir>/test/constructs/**/*.test.ts'],
  testPathIgnorePatterns: ['/node_modules/', '/cdk.out/', '/lib/'],
  moduleNameMapper: {
    ...unit.moduleNameMapper,
    '^aws-cdk-lib$': path.join(min, 'aws-cdk-lib'),
    '^aws-cdk-lib/(.*)$': path.join(min, 'aws-cdk-lib', '$1'),
    '^constructs$': path.join(min, 'constructs'),
  },
};
