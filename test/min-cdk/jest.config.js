// The construct tests against the oldest aws-cdk-lib the peer range allows (`npm run test:min-cdk`): the package's
// jest configuration, with aws-cdk-lib and constructs resolved from .min-cdk/ (installed there by the task).
const path = require('path');
const base = require('../../package.json').jest;

const root = path.resolve(__dirname, '..', '..');
const min = path.join(root, '.min-cdk', 'node_modules');

module.exports = {
  ...base,
  rootDir: root,
  moduleNameMapper: {
    '^aws-cdk-lib$': path.join(min, 'aws-cdk-lib'),
    '^aws-cdk-lib/(.*)$': path.join(min, 'aws-cdk-lib', '$1'),
    '^constructs$': path.join(min, 'constructs'),
  },
};
