/**
 * The local runner's state file: what it deployed (never a secret).
 */
import { randomUUID } from 'node:crypto';
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { readJsonFile } from './assembly';
import { PRIVATE_DIR_MODE, writePrivateFile } from './private-files';

/** A deployed resource. */
export interface ResourceState {
  readonly stack: string;
  readonly logicalId: string;
  readonly type: string;
  readonly physicalId: string;
  /** Resolved, stringified properties as synthesized (connection URLs before the rewrite to the emulator). */
  readonly properties: Record<string, unknown>;
  /** `Data` returned by the handler. */
  readonly attributes: Record<string, unknown>;
  /** Logical IDs (same stack) this resource depends on. */
  readonly dependsOn: string[];
  readonly deletionPolicy?: string;
  readonly updateReplacePolicy?: string;
  /** Whether the resource's provider has an isComplete waiter. */
  readonly waiter: boolean;
  /** Construct path (`aws:cdk:path` metadata) when known. */
  readonly path?: string;
  /**
   * In the orphans list: the old physical resource of a replacement, deleted in the clean-up after the update (its
   * `UpdateReplacePolicy` applies). Recorded when the replacement succeeds, so a run killed before the clean-up
   * still deletes it the next time.
   */
  readonly replaced?: boolean;
  /**
   * In the orphans list: a Delete of a rollback that failed (a cancelled Create's, with its invented physical ID, or a
   * replacement's new physical resource). CloudFormation sends it again before the stack's next operation (continue
   * rollback), so the runner does too, before it changes anything else in the stack.
   */
  readonly rollbackPending?: boolean;
}

/** A deployed stack. */
export interface StackState {
  readonly stackName: string;
  readonly stackId: string;
  readonly account: string;
  readonly region: string;
  /** Stack names this stack depends on. */
  readonly dependencies: string[];
  /** For a nested stack: the stack name of its parent (an update of the parent that no longer has it deletes it). */
  readonly parentStack?: string;
  /**
   * The request budget (`DPI_REQUEST_BUDGET`) its provider functions were deployed with: a destroy, which binds events
   * from what the state recorded, runs them with it, as the deployed functions would in the cloud.
   */
  readonly requestBudget?: string;
}

/** The whole state file. */
export interface LocalState {
  version: 1;
  /** Stacks in deployment order. */
  stacks: StackState[];
  /** Key: `<stack>/<logicalId>`. */
  resources: Record<string, ResourceState>;
  /** Physical resources replaced or removed whose deletion failed (retried on the next run). */
  orphans: ResourceState[];
}

/** Key of a resource in the state. */
export function resourceKey(stack: string, logicalId: string): string {
  return `${stack}/${logicalId}`;
}

/** An empty state. */
export function emptyState(): LocalState {
  return { version: 1, stacks: [], resources: {}, orphans: [] };
}

/** Reads the state file (an empty state when it does not exist). */
export function readState(file: string): LocalState {
  if (!existsSync(file)) return emptyState();
  const parsed = readJsonFile(file, 'local-deploy state file', 'restore it from a copy, or delete it together with the emulator state '
    + 'beside it to start over (resources it recorded are then unknown to local-deploy)') as Partial<LocalState>;
  if (!parsed || typeof parsed !== 'object') throw new Error(`the local-deploy state file ${file} is not a JSON object`);
  if (parsed.version !== 1) throw new Error(`${file}: unsupported state version ${String(parsed.version)}`);
  return { version: 1, stacks: parsed.stacks ?? [], resources: parsed.resources ?? {}, orphans: parsed.orphans ?? [] };
}

/**
 * Writes the state file atomically. `forbidden` values (secrets) must not appear in it:
 * the write is refused if one does.
 */
export function writeState(file: string, state: LocalState, forbidden: readonly string[] = []): void {
  const text = `${JSON.stringify(state, undefined, 2)}\n`;
  for (const f of forbidden) {
    if (f.length > 0 && text.includes(f)) throw new Error(`refusing to write a secret into the state file ${file}`);
  }
  writePrivateFile(file, text);
}

/** Removes the state file. */
export function removeState(file: string): void {
  rmSync(file, { force: true });
}

/** A stack ID as CloudFormation makes them, stable for the life of the stack in this state. */
export function newStackId(stackName: string, account: string, region: string): string {
  return `arn:aws:cloudformation:${region}:${account}:stack/${stackName}/${randomUUID()}`;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Takes the lock of a state file (`<file>.lock`, holding the owner's PID) so that two runs
 * cannot change the same local state at once. A lock left by a process that no longer
 * exists is taken over. Returns the release function.
 */
/**
 * Creates the state directory. A directory the runner creates gets a `.gitignore` that ignores everything in it
 * (state, emulator state, journal, handler log: nothing to commit), like `cdk.out`; an existing directory is left
 * as it is.
 */
export function ensureStateDir(dir: string): void {
  if (existsSync(dir)) return;
  mkdirSync(dir, { recursive: true, mode: PRIVATE_DIR_MODE });
  writeFileSync(join(dir, '.gitignore'), '# Created by dpi local-deploy: local state, emulator state, journal and handler log.\n*\n');
}

export function lockState(file: string): () => void {
  const lock = `${file}.lock`;
  ensureStateDir(dirname(lock));
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = openSync(lock, 'wx');
      writeFileSync(fd, String(process.pid));
      closeSync(fd);
      return () => rmSync(lock, { force: true });
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
      const owner = Number(readFileSync(lock, 'utf8').trim());
      if (Number.isInteger(owner) && owner > 0 && owner !== process.pid && alive(owner)) {
        throw new Error(`another local-deploy (pid ${owner}) is using ${file}; wait for it to finish (or remove ${lock} if it is gone)`);
      }
      if (owner === process.pid) {
        throw new Error(`${file} is already in use by a local-deploy run of this process`);
      }
      rmSync(lock, { force: true });
    }
  }
  throw new Error(`cannot lock ${file}`);
}
