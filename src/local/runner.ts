/**
 * The local lifecycle runner: replays the custom resources of a synthesized app
 * through the real handler against the emulator, the way CloudFormation would.
 * The parts: runner-base.ts (plumbing), runner-invoke.ts (handler invocations), runner-plan.ts (resolution, plans), runner-deploy.ts
 * (deploy, rollback); this module runs a deploy or a destroy.
 */
import { dependencyOrder } from './graph';
import type { LocalDeployOptions, LocalDeployResult, ServiceRequestCount } from './options';
import { renderSummary, summaryRows } from './output';
import { RunnerDeploy } from './runner-deploy';
import { RunFailure } from './runner-helpers';
import { LocalState, lockState, readState, removeState } from './state';
import { tableWidth } from './width';

type LocalStateResources = LocalState['resources'];

export { DEFAULT_REFRESH_TOKEN_ENV, DEFAULT_STATE_FILE } from './defaults';
export type { LocalDeployOptions, LocalDeployResult, ServiceRequestCount } from './options';
export { readsOf, roleTrustsService, withEmulatorUrl } from './runner-helpers';
export { LocalPlanSource } from './plan-source';
export type { LocalDeclaredResource, LocalStackPlan } from './plan-source';

/** Runs a local deployment (or destroy). Never throws for resource failures: see `success`. */
export async function runLocalDeploy(options: LocalDeployOptions = {}): Promise<LocalDeployResult> {
  const run = new Runner(options);
  return run.run();
}

class Runner extends RunnerDeploy {
  async run(): Promise<LocalDeployResult> {
    let error: string | undefined;
    let unlock: (() => void) | undefined;
    let stateRead = false;
    let serviceRequests: ServiceRequestCount | undefined;
    try {
      this.checkOptions();
      unlock = lockState(this.stateFile);
      this.state = readState(this.stateFile);
      stateRead = true;
      if (this.fixturesToMerge) await this.connect();
      if (this.options.destroy) await this.destroy();
      else await this.deploy();
      // Events saved lazily (concurrency) are on disk before the run reports.
      if (this.saveTimer) this.saveNow();
    } catch (e) {
      this.failed = true;
      if (!(e instanceof RunFailure)) {
        error = this.scrubbed((e as Error).message, 'the run\'s error');
        this.progress(`❌  ${error}`);
      }
    } finally {
      if (this.saveTimer) {
        try {
          this.saveNow();
        } catch (e) {
          this.failed = true;
          error = error ?? this.scrubbed((e as Error).message, 'the run\'s error');
        }
      }
      // Second deliveries still running end before the run does (their journal writes are the run's).
      await Promise.all([...this.stragglers]);
      this.containers?.close();
      if (this.journal) {
        try {
          await this.journal.stop();
        } catch (e) {
          this.failed = true;
          const message = `could not save the journal: ${this.scrubbed((e as Error).message, 'the run\'s error')}`;
          error = error ?? message;
          this.progress(`❌  ${message}`);
        }
      }
      if (this.emulator) {
        serviceRequests = await this.serviceRequests();
        await this.emulator.stop();
      }
      unlock?.();
    }
    // A run refused before it read the state changed nothing: its summary is what the state file says is deployed.
    const untouched = stateRead ? undefined : this.savedResources();
    const rows = summaryRows(Object.values(untouched?.resources ?? this.state.resources));
    const elapsedMs = Date.now() - this.started;
    this.progress('');
    this.progress(`${this.failed ? '❌  local-deploy failed' : '✅  local-deploy complete'} (${this.options.destroy ? 'destroy' : 'deploy'}) in ${(elapsedMs / 1000).toFixed(2)}s`);
    if (!stateRead) {
      this.output(untouched?.error !== undefined
        ? `Nothing changed; what is deployed is not known: ${untouched.error}`
        : `Nothing changed; deployed per ${this.stateFile}: ${rows.length} resource${rows.length === 1 ? '' : 's'}`);
    }
    if (untouched?.error === undefined) {
      const width = tableWidth(this.options.output === undefined && process.stdout.isTTY ? process.stdout.columns : undefined, process.env);
      for (const line of renderSummary(rows, width)) this.output(line);
    }
    if (!error && this.secretLeaks.length > 0) error = `the refresh token appears in ${this.secretLeaks.join(', ')}`;
    const leaks = this.secretLeaks.length > 0 ? { secretLeaks: [...this.secretLeaks] } : {};
    const used = this.containers?.used ?? 0;
    const containers = used > 0 ? { containers: { used, coldStarts: this.containers!.coldStarts } } : {};
    const abandoned = this.abandoned.length > 0 ? { abandoned: [...this.abandoned] } : {};
    const { url: emulatorUrl, stateFile, events } = this;
    const extra = { ...leaks, ...containers, ...abandoned, ...(serviceRequests ? { serviceRequests } : {}) };
    return { success: !this.failed, emulatorUrl, stateFile, events, resources: rows, elapsedMs, error, ...extra };
  }

  /** The embedded emulator's count of the run's service requests (undefined when its log cannot be read). */
  private async serviceRequests(): Promise<ServiceRequestCount | undefined> {
    try {
      const res = await fetch(`${this.url}/_emulator/requests`, { signal: AbortSignal.timeout(10_000) });
      if (res.status !== 200) return undefined;
      const log = await res.json() as Array<{ status?: number }>;
      return { total: log.length, throttled: log.filter((r) => r.status === 429).length };
    } catch {
      return undefined;
    }
  }

  /** The resources of the state file as saved (for the summary of a run that stopped before reading it). */
  private savedResources(): { resources: LocalStateResources; error?: string } {
    try {
      return { resources: readState(this.stateFile).resources };
    } catch (e) {
      return { resources: {}, error: this.scrubbed((e as Error).message, 'the run\'s error') };
    }
  }

  protected async destroy(): Promise<void> {
    if (this.state.stacks.length === 0 && Object.keys(this.state.resources).length === 0 && this.state.orphans.length === 0) {
      this.progress(`Nothing to destroy (${this.stateFile} has no resources).`);
      removeState(this.stateFile);
      return;
    }
    await this.connect();
    this.waits.total = Object.keys(this.state.resources).length;
    const names = this.state.stacks.map((s) => s.stackName);
    const order = dependencyOrder(names, new Map(this.state.stacks.map((s) => [s.stackName, s.dependencies]))).reverse();
    for (const name of order) await this.deleteStack(name);
    if (!this.failed && this.state.stacks.length === 0) {
      removeState(this.stateFile);
      this.progress(`State cleared (${this.stateFile} removed).`);
    }
  }
}
