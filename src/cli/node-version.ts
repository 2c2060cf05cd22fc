/**
 * The Node.js versions of the `dpi` command line (README, "Supported Node.js versions").
 *
 * Imported first by the entry point (src/cli/dpi.ts), before any AWS SDK client loads. On a deprecated Node.js (20)
 * every command that creates an SDK client (`dpi local-deploy`, `drift`, `orphans`, `plan`) made the SDK print
 * its nine-line `NodeVersionSupportWarning`; dpi prints one line of its own instead, once per run, that says what to
 * do. On a supported version nothing is printed. The SDK's own switch (`AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED`
 * set to `true`) and Node's `--no-warnings` / `NODE_NO_WARNINGS=1` silence the line too. Deprecation warnings that
 * code bundled into dpi from its dependencies raises are not shown either (see {@link BUNDLED_DEPRECATIONS}).
 */

/** Node.js major versions dpi supports and tests in CI. */
export const SUPPORTED_NODE_MAJORS: readonly number[] = [22, 24];

/** Node.js major versions that still work and are tested, but are deprecated (end of life). */
export const DEPRECATED_NODE_MAJORS: readonly number[] = [20];

/** The type-and-message prefix of the AWS SDK's warning about an old Node.js. */
const SDK_WARNING = 'NodeVersionSupportWarning';

/**
 * Deprecations raised only by dependencies bundled into dpi, never by dpi's own code, which a user cannot act on: Node
 * stays silent about them when the caller lives under node_modules, which a bundle in assets/ does not. DEP0169:
 * dynalite's `url.parse` (the local journal server, in the vendor bundle), a runtime deprecation from Node.js 24.
 */
export const BUNDLED_DEPRECATIONS: readonly string[] = ['DEP0169'];

/** The major version of a `process.version` string (`v20.20.2` -> 20). */
export function nodeMajor(version: string): number {
  return Number(/^v?(\d+)\./.exec(version)?.[1] ?? NaN);
}

/** The one line dpi prints instead of the SDK's warning (`sdkWarning` is the SDK's text: its required version is kept). */
export function nodeVersionNotice(version: string, sdkWarning = ''): string {
  const needs = /node\s*>=\s*(\d+)/i.exec(sdkWarning)?.[1];
  const supported = SUPPORTED_NODE_MAJORS.join(' or ');
  const why = DEPRECATED_NODE_MAJORS.includes(nodeMajor(version)) ? 'is deprecated (end of life)' : 'is not supported';
  const sdk = needs ? `; new AWS SDK releases require Node.js >=${needs}` : '';
  return `dpi: Node.js ${version} ${why}${sdk}: run dpi on Node.js ${supported}.`;
}

/** The commands that create AWS SDK clients (DynamoDB for the journal, CloudFormation for deployed stacks). */
export const SDK_COMMANDS: readonly string[] = ['local-deploy', 'drift', 'orphans', 'plan', 'journal'];

/** The processes told already (the notice is printed once per run). */
const told = new WeakSet<object>();

/**
 * Prints the notice before the command's first line (on a deprecated Node.js, for a command in {@link SDK_COMMANDS}),
 * so that it never lands between a command's progress lines when the SDK loads later; the SDK's warning is then
 * dropped. Returns whether it printed.
 */
export function tellOldNodeFirst(command: string | undefined, proc: NodeJS.Process = process): boolean {
  const oldNode = nodeMajor(proc.version) < Math.min(...SUPPORTED_NODE_MAJORS);
  if (!oldNode || command === undefined || !SDK_COMMANDS.includes(command) || told.has(proc)) return false;
  told.add(proc);
  if (warningsOff(proc) || proc.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED === 'true') return false;
  proc.stderr.write(`${nodeVersionNotice(proc.version, 'node >=22')}\n`);
  return true;
}

/** Whether Node's own warnings are switched off for this process (`--no-warnings`, `NODE_NO_WARNINGS=1`). */
function warningsOff(proc: NodeJS.Process): boolean {
  const options = `${proc.execArgv.join(' ')} ${proc.env.NODE_OPTIONS ?? ''}`;
  return proc.env.NODE_NO_WARNINGS === '1' || /(^|\s)--no-warnings(\s|$)/.test(options);
}

/**
 * On a deprecated Node.js, replaces the AWS SDK's `NodeVersionSupportWarning` by {@link nodeVersionNotice} (one line on
 * stderr, at most once); on every version, drops {@link BUNDLED_DEPRECATIONS}. Every other warning passes through.
 */
export function replaceUnactionableWarnings(proc: NodeJS.Process = process): void {
  const oldNode = nodeMajor(proc.version) < Math.min(...SUPPORTED_NODE_MAJORS);
  const emitWarning = proc.emitWarning;
  const replaced = function (this: NodeJS.Process, warning: string | Error, ...rest: unknown[]): void {
    const text = typeof warning === 'string' ? warning : String(warning?.message ?? '');
    const options = typeof rest[0] === 'object' ? rest[0] as { type?: string; code?: string } | null : undefined;
    const type = typeof rest[0] === 'string' ? rest[0] : options?.type;
    const code = typeof rest[0] === 'string' ? rest[1] : options?.code;
    if (type === 'DeprecationWarning' && typeof code === 'string' && BUNDLED_DEPRECATIONS.includes(code)) return;
    if (oldNode && (text.startsWith(SDK_WARNING) || type === SDK_WARNING)) {
      if (!told.has(proc) && !warningsOff(proc)) proc.stderr.write(`${nodeVersionNotice(proc.version, text)}\n`);
      told.add(proc);
      return;
    }
    (emitWarning as (...args: unknown[]) => void).call(this, warning, ...rest);
  };
  proc.emitWarning = replaced as typeof proc.emitWarning;
}

replaceUnactionableWarnings();
