import { awscdk, javascript, JsonFile } from 'projen';
import { OTHER_NODE_ROOTS, Tier, tierPaths, VENDOR_READS_ROOTS } from './projenrc/test-tiers';

const project = new awscdk.AwsCdkConstructLibrary({
  name: 'data-pipeline-integration-cdk',
  packageName: 'data-pipeline-integration-cdk',
  description:
    'AWS CDK constructs for the Data Pipeline Integration Service: marketplace notification pipelines, subscriptions, history backfills and order-level product jobs as code.',
  keywords: ['cdk', 'awscdk', 'data-pipeline', 'selling-partner', 'notifications', 'custom-resource'],
  author: 'Data Pipeline Integration CDK contributors',
  authorAddress: 'maintainers@example.com',
  repositoryUrl: 'https://github.com/example/data-pipeline-integration-cdk.git',
  defaultReleaseBranch: 'main',
  packageManager: javascript.NodePackageManager.NPM,
  projenrcTs: true,
  // engines: node >= 20. Node.js 22 and 24 are supported and tested in CI (test:node); 20 (end of life) still works and
  // is tested (the build machine's), but is deprecated (README, "Supported Node.js versions").
  minNodeVersion: '20.0.0',

  // The peer range keeps the oldest supported aws-cdk-lib (test:min-cdk runs the construct tests against it); the
  // package builds and tests with the newest (devDeps below).
  cdkVersion: '2.257.0',
  constructsVersion: '10.5.1',
  peerDependencyOptions: { pinnedDevDependency: false },
  jsiiVersion: '~6.0.0',

  // Python is declared so the public API stays usable from other languages;
  // CI packages JavaScript only (no other toolchains on the build machines).
  publishToPypi: {
    distName: 'data-pipeline-integration-cdk',
    module: 'data_pipeline_integration_cdk',
  },

  // The handler, client, emulator and CLI are bundled with esbuild and are not
  // part of the jsii public API; nor are the handler and command-line folders of each kind's folder
  // (src/kinds/<kind>/runtime/, src/kinds/<kind>/tools/) and the registry's lists of them.
  excludeTypescript: [
    'src/client/**', 'src/handler/**', 'src/emulator/**', 'src/cli/**', 'src/local/**',
    'src/kinds/*/runtime/**', 'src/kinds/*/tools/**',
    'src/kinds/registry/lambda.ts', 'src/kinds/registry/tools.ts', 'src/kinds/registry/cli.ts',
  ],
  lambdaAutoDiscover: false,

  // No runtime dependencies (peers only). The AWS SDK clients of the command line and of the handler that
  // `dpi local-deploy` loads in process (DynamoDB: the lifecycle journal; CloudFormation: `dpi drift`, `orphans`,
  // `plan`) and dynalite (the local DynamoDB-compatible journal server) are bundled into the vendor bundle
  // (assets/local/vendor, below); the handler's Lambda bundle keeps `@aws-sdk/*` external (the runtime provides it).
  devDeps: [
    '@aws-sdk/client-dynamodb@^3',
    '@aws-sdk/client-cloudformation@^3',
    'dynalite@^4',
    'yaml@^2',
    'aws-cdk-lib@2.276.0',
    'constructs@10.5.1',
    'cdk-nag@^3.0.2',
    'aws-cdk@^2',
    'esbuild@^0.25',
    'fastify@^5',
    'commander@^14',
    '@aws-sdk/client-sts@^3',
    '@aws-sdk/client-secrets-manager@^3',
    '@types/aws-lambda@^8',
    '@types/node@^20',
    'jest-environment-node@^29', // test/jest-environment.ts
  ],

  jestOptions: {
    // jest 30 resolves through native bindings that are not all available from the registry
    // (the lock file then fails `npm ci`); jest 29 is pure JS.
    jestVersion: '^29',
    updateSnapshot: javascript.UpdateSnapshot.NEVER,
    jestConfig: {
      testTimeout: 30_000,
      collectCoverage: false,
      // The tiers' projects and their options: below (TEST_PROJECT_OPTIONS).
    },
  },

  eslintOptions: {
    dirs: ['src'],
    devdirs: ['test', 'examples', 'bench', 'scripts', 'projenrc', '.projenrc.ts'],
    tsconfigPath: './tsconfig.typecheck.json',
  },
  githubOptions: { mergify: false },
  buildWorkflow: false,
  // Releases like cdklabs projects: conventional commits decide the next version (commit-and-tag-version), the
  // release task bumps, builds and writes CHANGELOG.md; experimental until 1.0.
  release: true,
  stability: 'experimental',
  depsUpgrade: false,
  pullRequestTemplate: false,
});

// The test tiers (projenrc/test-tiers.ts): one jest project each. ts-jest transpiles only (fast on 2 cores); the
// `typecheck` task below checks types of src, test, examples and bench in one pass. Project options live in each
// project (jest ignores them at the root when `projects` is set).
const TEST_PROJECT_OPTIONS = {
  transform: { '^.+\\.[t]sx?$': ['ts-jest', { tsconfig: 'test/tsconfig.json', diagnostics: false }] },
  // The AWS SDK's version warning on Node.js 20 and aws-cdk-lib's synth-time validation are off (the file says why).
  globalSetup: '<rootDir>/test/jest-global-setup.ts',
  // A temporary directory per test file, removed when it ends (no `cdk.out*` left behind in the machine's /tmp).
  testEnvironment: '<rootDir>/test/jest-environment.ts',
  // The examples import the package by name, as a customer's app does: its sources here.
  moduleNameMapper: {
    '^data-pipeline-integration-cdk$': '<rootDir>/src/index.ts',
    '^data-pipeline-integration-cdk/testing$': '<rootDir>/src/testing.ts',
  },
  clearMocks: true,
};
const jestConfig = project.tryFindObjectFile('package.json')!;
for (const key of ['testMatch', 'testPathIgnorePatterns', 'globalSetup', 'moduleNameMapper', 'clearMocks', 'transform']) jestConfig.addDeletionOverride(`jest.${key}`);
jestConfig.addOverride('jest.projects', (['unit', 'integration', 'e2e'] as Tier[]).map((tier) => ({ displayName: tier, ...TEST_PROJECT_OPTIONS, ...tierPaths(tier) })));
// Every core (jest's default leaves one idle: a single worker on the 2-core build machine). Most suites wait on servers
// and processes they start, so two workers on two cores finish sooner without starving them.
jestConfig.addOverride('jest.maxWorkers', '100%');
new JsonFile(project, 'tsconfig.typecheck.json', {
  obj: {
    extends: './tsconfig.json',
    compilerOptions: {
      noEmit: true,
      rootDir: '.',
      // The examples import the package by name, as a customer's app does: its sources here.
      paths: {
        'data-pipeline-integration-cdk': ['./src/index.ts'],
        'data-pipeline-integration-cdk/testing': ['./src/testing.ts'],
      },
    },
    include: ['.projenrc.ts', 'projenrc/**/*.ts', 'src/**/*.ts', 'test/**/*.ts', 'examples/**/*.ts', 'bench/**/*.ts', 'scripts/**/*.ts'],
    exclude: ['node_modules', '**/cdk.out/**', 'lib', 'assets'],
  },
});

// Bundles: the custom-resource handler (the Lambda code) and the `dpi` command line.
// Each bundle's inputs go to .bundles/<bundle>.meta.json (esbuild's metafile, outside the shipped assets): the notices
// step below names the third-party code each bundle holds (scripts/third-party-notices.js).
const metafile = (bundle: string): Record<string, string> => ({ '--metafile': `.bundles/${bundle.replace('/', '-')}.meta.json` });
project.bundler.addBundle('./src/handler/index.ts', {
  platform: 'node',
  // The Lambda runtime's Node.js (HANDLER_RUNTIME, src/connection/provider.ts; test/constructs/lambda-runtime.test.ts).
  target: 'node24',
  externals: ['@aws-sdk/*'],
  minify: true,
  sourcemap: false,
  esbuildArgs: metafile('handler/index'),
});
// The third-party modules of the command line and the runner (the SDK clients, dynalite) are bundled once, into the
// vendor bundle (src/local/vendor.ts); in the other parts each is a shim that loads it from there when first required
// (src/local/vendor-load.ts), so `dpi --version` parses none of it and the package ships the SDK once. dynalite's
// LevelDB backend (native bindings, unused: the journal server runs dynalite in memory) is a stub that throws.
const VENDOR_SHIMS: Record<string, string> = {
  '@aws-sdk/client-dynamodb': 'client-dynamodb',
  '@aws-sdk/client-cloudformation': 'client-cloudformation',
  'dynalite': 'dynalite',
};
const vendorAliases = Object.fromEntries(Object.entries(VENDOR_SHIMS).map(([id, shim]) => [`--alias:${id}`, `./src/local/vendor-shims/${shim}.ts`]));
// Built by projenrc/vendor-bundle.ts (esbuild's API: a plugin fixes dynalite's computed requires) into assets/local/vendor.
project.bundler.bundleTask.spawn(project.addTask('bundle:local/vendor', {
  description: 'Create the vendor bundle (the AWS SDK clients and dynalite) from ./src/local/vendor.ts',
  exec: 'ts-node --transpile-only projenrc/vendor-bundle.ts',
}));
project.bundler.addBundle('./src/cli/dpi.ts', {
  platform: 'node',
  target: 'node20',
  banner: '#!/usr/bin/env node',
  executable: true,
  // Any other SDK client stays a require (test/packaging fails on it: the package has no dependencies).
  externals: ['@aws-sdk/*'],
  minify: true,
  esbuildArgs: { ...vendorAliases, ...metafile('cli/dpi') },
});
project.addBins({ dpi: 'assets/cli/dpi/index.js' });

// Entry points: the construct library (jsii) and `data-pipeline-integration-cdk/testing` (TypeScript/JavaScript only,
// not part of the jsii API: src/testing.ts, not exported from src/index.ts), which exports the emulator and the local
// runner for tests (docs/local-deploy.md). typesVersions gives the testing types to TypeScript projects whose module
// resolution ignores `exports` (`node10`, the default of `module: commonjs`).
project.package.addField('exports', {
  '.': { types: './lib/index.d.ts', default: './lib/index.js' },
  './testing': { types: './lib/testing.d.ts', default: './lib/testing.js' },
  './package.json': './package.json',
});
project.package.addField('typesVersions', { '*': { testing: ['lib/testing.d.ts'] } });

// The heavy parts of the command line, each its own bundle, loaded only by the commands that run them
// (src/cli/lazy.ts): dpi tx, status and the lookups start without parsing them; cli/ops holds dpi drift and dpi orphans.
// The runner loads the emulator's bundle (src/local/emulator-part.ts) and the vendor bundle: each is shipped once.
for (const part of ['./src/local/runner.ts', './src/emulator/server.ts', './src/cli/ops.ts']) {
  project.bundler.addBundle(part, {
    platform: 'node',
    target: 'node20',
    externals: ['@aws-sdk/*'],
    minify: true,
    sourcemap: false,
    esbuildArgs: { ...vendorAliases, ...metafile(part.replace(/^\.\/src\//, '').replace(/\.ts$/, '')) },
  });
}
// The licences of the bundled third-party code (THIRD-PARTY-NOTICES.txt beside each bundle) and a CycloneDX SBOM.
project.bundler.bundleTask.spawn(project.addTask('bundle:notices', {
  description: 'Write assets/*/*/THIRD-PARTY-NOTICES.txt and assets/sbom.cdx.json from the bundles\' metafiles',
  exec: 'node scripts/third-party-notices.js',
}));
project.gitignore.exclude('/.bundles/');
project.npmignore?.exclude('/.bundles/');

// Lint every file (including the bundled, non-jsii parts) against the type-check project.
project.tryFindObjectFile('.eslintrc.json')?.addDeletionOverride('parserOptions.projectService');
project.tryFindObjectFile('.eslintrc.json')?.addOverride('parserOptions.project', './tsconfig.typecheck.json');

// eslint-import-resolver-typescript 4.x pulls native platform bindings that are not all
// available from the registry, which leaves a lock file that `npm ci` rejects; 3.6 is pure JS.
project.deps.removeDependency('eslint-import-resolver-typescript');
project.addDevDeps('eslint-import-resolver-typescript@3.6.3');

const typecheck = project.addTask('typecheck', {
  description: 'Type-check src, test, examples and bench (jest only transpiles)',
});

// The bundles are built once per build (pre-compile); the test tiers and the demo build them again only when a source
// is newer (scripts/bundles-stale.js), so `npm test` after an edit still tests the edit.
const IF_BUNDLES_STALE = { condition: 'node scripts/bundles-stale.js' };
/** A step's command, timed (scripts/timed.js prints the seconds; .ci/run collects them in its table). */
const timed = (label: string, command: string): string => `node scripts/timed.js "${label}" ${command}`;
typecheck.exec(timed('typecheck', 'tsc -p tsconfig.typecheck.json'));

// npm test: the unit tier (CONTRIBUTING.md, "Test tiers"); `npx projen test` (the build's step): every tier.
const unit = project.addTask('test:unit', {
  description: 'The unit tier: constructs, kinds, client, emulator routes, decision functions, docs (no servers, no waits)',
});
unit.spawn(project.bundler.bundleTask, IF_BUNDLES_STALE);
unit.exec(timed('unit', 'jest --passWithNoTests --ci --selectProjects unit'), { receiveArgs: true });
project.package.setScript('test', 'projen test:unit');

// Python: the build generates the Python bindings' source (`--code-only`), which checks that the public API is
// valid for Python, without the Python packaging toolchain (setuptools from PyPI), which a machine without PyPI
// access cannot install. `package:python:dist` builds the wheel where that toolchain is available.
const pythonTask = project.tasks.tryFind('package:python');
pythonTask?.reset('jsii-pacmak -v --target python --code-only');
project.addTask('package:python:dist', {
  description: 'Build the Python distribution (wheel and sdist); needs Python with setuptools from PyPI',
  exec: 'jsii-pacmak -v --target python',
});

// The integration and end-to-end suites spend much of their time waiting for the servers and processes they start: one
// worker and a half per core keeps both cores busy (measured on the 2-core build machine: the integration tier in 154 s
// with 3 workers, 190 s with 2). Computed by the shell: jest reads a percentage over 100 as a number of workers.
const WAITING_WORKERS = '$(node -p "Math.ceil(require(\\"os\\").availableParallelism() * 1.5)")';

// The integration tier: the handler, the runner and the CLI against the emulator and the local journal server; then
// the handler and runner suites again with the emulator answering reads as the service vendor documents them (the
// first run uses the default `minimal` mode: only what the spec shows).
const vendorReads = project.addTask('test:vendor-reads', {
  description: 'The handler and local-deploy suites of the integration tier against the emulator in --reads vendor mode',
  env: { DPI_EMULATOR_READS: 'vendor' },
  exec: timed('integration (vendor reads)', `jest --ci --maxWorkers=${WAITING_WORKERS} ${VENDOR_READS_ROOTS.join(' ')} --selectProjects integration`),
});
const integration = project.addTask('test:integration', {
  description: 'The integration tier: handler, local runner and CLI against the emulator and the local DynamoDB, in both read modes',
});
integration.spawn(project.bundler.bundleTask, IF_BUNDLES_STALE);
integration.exec(timed('integration', `jest --passWithNoTests --ci --maxWorkers=${WAITING_WORKERS} --selectProjects integration`), { receiveArgs: true });
integration.spawn(vendorReads);

// The construct tests against the oldest aws-cdk-lib of the peer range (the package builds with the newest). The
// template snapshot and the documented cdk-nag registration (which needs a newer aws-cdk-lib) are newest-only.
const minCdk = project.addTask('test:min-cdk', {
  description: 'Construct tests against the oldest aws-cdk-lib the peer range allows',
});
minCdk.exec('npm install --no-save --no-package-lock --no-audit --no-fund --prefix .min-cdk aws-cdk-lib@2.257.0 constructs@10.5.1');
minCdk.exec('node -e "const v=require(\'./.min-cdk/node_modules/aws-cdk-lib/package.json\').version; console.log(\'aws-cdk-lib \'+v+\' (oldest supported)\')"');
minCdk.exec(timed('constructs on the oldest aws-cdk-lib', "jest --ci --config test/min-cdk/jest.config.js test/constructs --testNamePattern '^(?!.*(snapshot|the documented way)).*$'"), {
  env: { DPI_EXPECT_CDK: '2.257.0' },
});
project.gitignore.exclude('/.min-cdk/');
// (npm packs git-ignored files unless .npmignore excludes them too: the package must not ship a second aws-cdk-lib.)
project.npmignore?.exclude('/.min-cdk/');

// The jest suites on another Node.js (`npm run test:node -- 24 [jest args]`): node-<platform>-<arch>@<version> from the
// npm registry into .node/<version>/ (git-ignored; installed once), first on PATH, so jest, its workers and every
// `node` the tests spawn run on it. CI (.ci/run) runs it for each supported version after the build (which runs on the
// machine's Node.js). Without jest arguments it runs OTHER_NODE_ROOTS (projenrc/test-tiers.ts): the suites whose code meets
// Node.js's own runtime.
project.addTask('test:node', {
  description: 'The Node.js-sensitive suites (client, emulator, integration tier) on Node.js <version> (npm run test:node -- 22 [jest args]), installed from the npm registry into .node/<version>',
  receiveArgs: true,
  exec: 'bash -c \'set -euo pipefail; v="${1:?usage: npm run test:node -- <version> [jest args]}"; shift; '
    + 'pkg="node-$(node -p process.platform)-$(node -p process.arch)"; bin="$PWD/.node/$v/node_modules/$pkg/bin"; '
    + '[ -x "$bin/node" ] || npm install --no-save --no-package-lock --no-audit --no-fund --prefix ".node/$v" "$pkg@$v"; '
    + `[ $# -gt 0 ] || set -- ${OTHER_NODE_ROOTS.join(' ')} --selectProjects unit integration; `
    + 'export PATH="$bin:$PATH"; echo "jest on Node.js $(node -v) ($bin/node)"; '
    + `exec node node_modules/.bin/jest --ci --maxWorkers=${WAITING_WORKERS} --passWithNoTests "\${@}"' test:node`, // not $@: projen would put the arguments there
});
project.gitignore.exclude('/.node/');
project.npmignore?.exclude('/.node/');

// jsii, jsii-rosetta and jsii-pacmak print a ten-line box on Node.js 20 (end of life) at every start; the build still
// runs on 20 on purpose (deprecated, still tested: see test:node), so the box is silenced for the build.
project.tasks.addEnvironment('JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION', '20');

// The package builds with the newest aws-cdk-lib on purpose (the peer range keeps the oldest; test:min-cdk tests it):
// jsii's warning that the devDependency should equal the peer floor is silenced.
project.compileTask.reset('jsii --silence-warnings=reserved-word --silence-warnings=metadata/missing-dev-dependency');

// Every @example and the README's TypeScript compile (jsii-rosetta, strict: a snippet that does not compile fails
// the build); fixtures in rosetta/.
const rosetta = project.addTask('rosetta', {
  description: 'Compile every @example and README snippet with jsii-rosetta (strict)',
  exec: 'jsii-rosetta extract --compile --fail --strict',
});
project.postCompileTask.spawn(rosetta);
project.gitignore.exclude('/.jsii.tabl.json');
project.npmignore?.exclude('/rosetta/');

// The README's main command: the example app through its whole lifecycle against the embedded emulator.
const demo = project.addTask('demo', {
  description: 'Synthesize the example app and run it through create, update and destroy against the embedded emulator',
});
demo.spawn(project.bundler.bundleTask, IF_BUNDLES_STALE);
// src/cli/node-version.ts: on Node.js 20 one line of dpi's instead of the AWS SDK's nine-line version warning, as in `dpi`.
demo.exec('ts-node --transpile-only -r ./src/cli/node-version.ts scripts/demo.ts');

// The end-to-end tier: the fault-matrix sample, packaging and install (needs the compiled lib/), the cdk CLI, large
// fleets; then the demo.
const e2e = project.addTask('test:e2e', {
  description: 'The end-to-end tier: fault-matrix sample, packaging and install, the cdk CLI, large fleets, then the demo',
});
e2e.spawn(project.bundler.bundleTask, IF_BUNDLES_STALE);
e2e.exec(timed('e2e', `jest --passWithNoTests --ci --maxWorkers=${WAITING_WORKERS} --selectProjects e2e`), { receiveArgs: true });
e2e.exec(timed('e2e: demo', 'npx projen demo'));

// `npx projen test`, the build's test step: static checks first (they fail fastest), then the tiers from the fastest,
// then the oldest aws-cdk-lib. Each tier runs once; the bundles are built once (pre-compile).
project.testTask.reset();
project.testTask.description = 'Every test: type-check, eslint, the unit, integration and end-to-end tiers, the construct tests on the oldest aws-cdk-lib';
// tsc and eslint each use one core: side by side (scripts/together.js).
project.testTask.exec('node scripts/together.js "typecheck=tsc -p tsconfig.typecheck.json" "eslint=npx projen eslint"');
for (const t of [unit, integration, e2e, minCdk]) project.testTask.spawn(t);

const fleetOps = project.addTask('bench:fleet-ops', {
  description: 'Fleet operations scenario: a 300-seller app deployed, drift-checked twice, drift-fixed and destroyed through dpi at the service\'s default rate limit (several minutes; FLEET=N, RATE_LIMIT=N/SECONDS or off)',
});
fleetOps.spawn(project.bundler.bundleTask, IF_BUNDLES_STALE);
fleetOps.exec('ts-node --transpile-only bench/fleet-ops.ts');

project.addTask('bench:status-calls', {
  description: 'Service calls per run of dpi status and of the subscription monitor, with and without the healthchecks listing (BENCH_SUBSCRIPTIONS=N)',
  exec: 'ts-node --transpile-only bench/status-calls.ts',
});

project.addTask('bench', {
  description: 'Benchmarks against the embedded emulator; prints ratios measured side by side in one run',
  exec: 'ts-node --transpile-only bench/run.ts',
  receiveArgs: true,
});

project.addTask('bench:growth', {
  description: 'Synth growth of a NotificationPipelineFleet for N = 10, 100, 1,000, 2,000 identities (or the sizes given): synth time, peak memory, stacks, resources per stack, Lambda functions, template bytes',
  exec: 'ts-node --transpile-only bench/growth.ts',
  receiveArgs: true,
});

project.addTask('faults', {
  description: 'The fault matrix: every fault kind at every service call of the example app\'s lifecycle, and the kill test; prints the table',
  // scripts/package-alias.ts: the example app's import of the package resolves to src/.
  exec: 'ts-node --transpile-only -r ./src/cli/node-version.ts -r ./scripts/package-alias.ts scripts/faults.ts',
  receiveArgs: true,
}).prependSpawn(project.bundler.bundleTask, IF_BUNDLES_STALE);

// Upgrade safety (CONTRIBUTING.md, "Releasing"): a release keeps the templates of the example app and a fleet app in
// test/upgrade/releases/<version>/; the unit tier plans from each kept release to the current code (test/upgrade/).
project.addTask('keep-release-templates', {
  description: 'Keep the example and fleet apps\' templates of a release for the upgrade test: test/upgrade/releases/<version>/ (version: the argument, else the newest release tag, else package.json)',
  exec: 'ts-node --transpile-only -r ./src/cli/node-version.ts -r ./scripts/package-alias.ts scripts/keep-release-templates.ts',
  receiveArgs: true,
}).prependSpawn(project.bundler.bundleTask, IF_BUNDLES_STALE);

project.addTask('dpi', {
  description: 'Run the bundled dpi command line (npm run dpi -- <command>)',
  exec: 'node assets/cli/dpi/index.js',
  receiveArgs: true,
});

project.gitignore.exclude('cdk.out', '.dpi/', 'examples/cdk.out', '/.bench-adoption-*/');
project.npmignore?.exclude('examples', 'bench', 'scripts', '.ci', 'tsconfig.typecheck.json', '.dpi');
// lib/local and lib/emulator hold only what the types of the testing entry point refer to (src/testing.ts imports their
// types; its functions load the bundles in assets/): their declarations ship, their JavaScript (never required) does not.
project.npmignore?.exclude('/lib/local/*.js', '/lib/emulator/*.js');

project.synth();
