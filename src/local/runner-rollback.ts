/**
 * The local runner's ends of a stack operation, as CloudFormation ends them: the clean-up after a successful update,
 * the rollback after a failed one (cancelled Creates get a Delete with an invented physical ID), the delete of a stack.
 */
import { AssemblyStack } from './assembly';
import { inventedPhysicalId } from './cancellation';
import { dependencyOrder } from './graph';
import { ResolveContext } from './intrinsics';
import { Change, declaredResource, Failure, PlannedResource } from './runner-helpers';
import { RunnerPlan } from './runner-plan';
import { runScheduled } from './scheduler';
import { resourceKey, ResourceState, StackState } from './state';

const STACK_TYPE = 'AWS::CloudFormation::Stack';

/** One stack's part of an operation: what its resources did, for the clean-up or the rollback of the whole tree. */
export interface AppliedStack {
  readonly stack: AssemblyStack;
  readonly stackState: StackState;
  readonly ctx: ResolveContext;
  readonly plan: PlannedResource[];
  readonly isNew: boolean;
  /** Nothing of the stack needed a change: no event was sent, nothing to clean up or roll back. */
  readonly unchanged: boolean;
  readonly changes: Change[];
  readonly failures: Failure[];
}

/** Clean-ups, rollbacks and stack deletes. */
export abstract class RunnerRollback extends RunnerPlan {
  /**
   * The clean-up of a successful operation: old physical resources of replacements, resources removed from the app,
   * orphans of earlier runs. A Delete that fails here is abandoned (out of the state, never retried).
   */
  protected async cleanUp(a: AppliedStack): Promise<void> {
    const { stack, stackState, plan, isNew } = a;
    const planned = new Set(plan.map((p) => p.logicalId));
    const removed = this.resourcesOf(stack.stackName).filter((r) => !planned.has(r.logicalId));
    const orphans = this.state.orphans.filter((o) => o.stack === stack.stackName);
    if (removed.length + orphans.length > 0) {
      this.emit(stack.stackName, isNew ? 'CREATE_COMPLETE_CLEANUP_IN_PROGRESS' : 'UPDATE_COMPLETE_CLEANUP_IN_PROGRESS', STACK_TYPE, stack.stackName);
      this.state.orphans = this.state.orphans.filter((o) => o.stack !== stack.stackName);
      // Orphans of earlier runs first, then this run's replaced resources, newest first.
      const ordered = [...orphans.filter((o) => !o.replaced), ...orphans.filter((o) => o.replaced).reverse()];
      for (const o of ordered) {
        const ok = await this.deleteResource(stackState, o, o.replaced ? 'replace' : 'delete');
        if (!ok) this.abandon(o);
        this.save();
      }
      const { order, dependents } = deleteOrder(removed);
      // Every removed resource is tried (as before): a failed one keeps its dependencies' order, not their delete.
      await runScheduled(order, (id) => dependents.get(id) ?? [], this.concurrency, async (id) => {
        const r = this.state.resources[resourceKey(stack.stackName, id)];
        // Deleted, or abandoned (CloudFormation removes it from the stack either way).
        if (!(await this.deleteResource(stackState, r, 'delete'))) this.abandon(r);
        delete this.state.resources[resourceKey(stack.stackName, id)];
        this.save();
        return true;
      }, false);
    }
    this.emit(stack.stackName, isNew ? 'CREATE_COMPLETE' : 'UPDATE_COMPLETE', STACK_TYPE, stack.stackName);
    this.saveNow();
  }

  /**
   * The rollback of one stack of a failed operation (`reason` names what failed, in this stack or another of the tree):
   * in-place updates (the failed and cancelled ones included) get the swapped Update, cancelled Creates a Delete with
   * an invented physical ID, resources created in the operation (and new physical resources of replacements) a Delete.
   */
  protected async rollback(a: AppliedStack, reason: string, childFailed = false): Promise<boolean> {
    const { stackState, isNew, changes, failures } = a;
    const name = stackState.stackName;
    // A nested stack whose rollback failed keeps what it uses of its parent: the parent's rollback fails too.
    let ok = !childFailed;
    this.emit(name, isNew ? 'ROLLBACK_IN_PROGRESS' : 'UPDATE_ROLLBACK_IN_PROGRESS', STACK_TYPE, name, reason);
    // 1. In-place updates (including the ones that failed or were cancelled) get an Update with old and new properties swapped.
    const inPlace: Array<{ before: ResourceState; current: ResourceState }> = [];
    for (const failure of failures) {
      if (failure.before && failure.props) {
        inPlace.push({ before: failure.before, current: { ...failure.before, properties: failure.props } });
      }
    }
    for (const c of [...changes].reverse()) {
      if (c.kind === 'update' && c.before && c.before.physicalId === c.after.physicalId) inPlace.push({ before: c.before, current: c.after });
    }
    const superseded: ResourceState[] = [];
    for (const { before, current } of inPlace) {
      const key = resourceKey(name, before.logicalId);
      this.emit(name, 'UPDATE_IN_PROGRESS', before.type, before.logicalId, 'rollback');
      try {
        const res = await this.invoke('Update', stackState, before, current.physicalId, current.properties);
        const attributes = Object.keys(res.data).length > 0 ? res.data : before.attributes;
        this.state.resources[key] = { ...before, physicalId: res.physicalId, attributes };
        // A rollback Update that answers another physical ID replaced the resource: the one it had gets its Delete.
        if (res.physicalId !== current.physicalId) superseded.push(current);
        this.emit(name, 'UPDATE_COMPLETE', before.type, before.logicalId, undefined, res.physicalId);
      } catch (e) {
        ok = false;
        this.emit(name, 'UPDATE_FAILED', before.type, before.logicalId, (e as Error).message);
      }
      this.save();
    }
    // 2. Creates CloudFormation stopped waiting for: a Delete with the physical ID it invents (it never heard the real one).
    if (!isNew) this.emit(name, 'UPDATE_ROLLBACK_COMPLETE_CLEANUP_IN_PROGRESS', STACK_TYPE, name);
    for (const r of superseded) {
      if (!(await this.deleteResource(stackState, r, 'replace'))) {
        ok = false;
        this.state.orphans.push({ ...r, rollbackPending: true });
      }
      this.save();
    }
    for (const f of failures) {
      if (!f.cancelled || f.before) continue;
      const invented = inventedPhysicalId(name, f.p.logicalId);
      const cancelled: ResourceState = { ...declaredResource(name, f.p, f.props ?? {}), physicalId: invented, attributes: {} };
      if (!(await this.deleteResource(stackState, cancelled, 'rollback-create'))) {
        // CloudFormation keeps it (ROLLBACK_FAILED) and sends the same Delete again before anything else: so does the next run.
        ok = false;
        this.state.orphans.push({ ...cancelled, rollbackPending: true });
      }
      this.save();
    }
    // 3. Resources created in this run, and new physical resources of replacements, are deleted; replaced ones get their old state back.
    // Not while a nested stack that failed to roll back may still use them: they stay, and the stack stays ROLLBACK_FAILED.
    for (const c of childFailed ? [] : [...changes].reverse()) {
      const key = resourceKey(name, c.after.logicalId);
      if (c.kind === 'create') {
        const deleted = await this.deleteResource(stackState, c.after, 'rollback-create');
        if (deleted) delete this.state.resources[key];
        else ok = false;
      } else if (c.before && c.before.physicalId !== c.after.physicalId) {
        const deleted = await this.deleteResource(stackState, c.after, 'rollback-create');
        this.state.resources[key] = c.before;
        // The old resource stays: it is no longer waiting for the clean-up.
        this.state.orphans = this.state.orphans.filter((o) => !(o.replaced && o.stack === c.before!.stack && o.logicalId === c.before!.logicalId
          && o.physicalId === c.before!.physicalId));
        if (!deleted) {
          ok = false;
          this.state.orphans.push({ ...c.after, rollbackPending: true });
        }
      }
      this.save();
    }
    const left = this.resourcesOf(name).length + this.state.orphans.filter((o) => o.stack === name).length;
    if (isNew && left === 0 && ok) {
      this.state.stacks = this.state.stacks.filter((s) => s.stackName !== name);
    }
    this.emit(name, isNew ? (ok ? 'ROLLBACK_COMPLETE' : 'ROLLBACK_FAILED') : (ok ? 'UPDATE_ROLLBACK_COMPLETE' : 'UPDATE_ROLLBACK_FAILED'), STACK_TYPE, name);
    this.saveNow();
    return ok;
  }

  /**
   * The Deletes of an earlier rollback that failed, sent again before the stack changes anything else (CloudFormation's
   * continue-rollback). False when one fails again: the stack's operation cannot start.
   */
  protected async continueRollback(stackState: StackState): Promise<boolean> {
    const pending = this.state.orphans.filter((o) => o.stack === stackState.stackName && o.rollbackPending);
    let ok = true;
    for (const o of pending) {
      if (await this.deleteResource(stackState, o, 'rollback-create')) {
        this.state.orphans = this.state.orphans.filter((x) => x !== o);
      } else {
        ok = false;
      }
      this.save();
    }
    return ok;
  }

  /**
   * A Delete failed in an update's clean-up: CloudFormation does not retry it (the stack update completes, the physical
   * resource is left behind), so neither does the runner. It is reported, the run fails, and `dpi orphans` finds it.
   */
  private abandon(r: ResourceState): void {
    this.failed = true;
    this.abandoned.push({ stack: r.stack, logicalId: r.logicalId, type: r.type, physicalId: r.physicalId });
    this.progress(`⚠️  ${r.stack}/${r.logicalId} ${r.type} ${r.physicalId}: abandoned. CloudFormation never retries a Delete that fails in an `
      + 'update\'s clean-up, so it is left in the service; \'dpi orphans --local\' lists it, \'dpi orphans --local --fix\' ends it');
  }

  /**
   * Deletes the resources of one stack of the state (reverse dependency order) and, when all are gone, the stack. A
   * stack whose nested stack is still there (its delete failed) is DELETE_FAILED and stays, as CloudFormation keeps it.
   */
  protected async deleteStack(name: string): Promise<void> {
    const stackState = this.stackState(name)!;
    this.emit(name, 'DELETE_IN_PROGRESS', STACK_TYPE, name);
    const children = this.state.stacks.filter((s) => s.parentStack === name).map((s) => s.stackName);
    if (children.length > 0) {
      // Its nested stack failed to delete and may use any of its resources: none is deleted (the retry deletes them).
      this.failed = true;
      this.emit(name, 'DELETE_FAILED', STACK_TYPE, name, `Embedded stack(s) not deleted: [${children.join(', ')}]; the stack's own resources are kept for them`);
      this.saveNow();
      return;
    }
    let ok = true;
    const orphans = this.state.orphans.filter((o) => o.stack === name);
    this.state.orphans = this.state.orphans.filter((o) => o.stack !== name);
    for (const o of orphans) {
      if (!(await this.deleteResource(stackState, o, o.replaced ? 'replace' : 'delete'))) {
        ok = false;
        this.state.orphans.push(o);
      }
      this.save();
    }
    const resources = this.resourcesOf(name);
    // A resource is deleted after every resource that depends on it; one whose dependent failed is skipped.
    const { order, dependents } = deleteOrder(resources);
    const result = await runScheduled(order, (id) => dependents.get(id) ?? [], this.concurrency, async (id) => {
      const key = resourceKey(name, id);
      const r = this.state.resources[key];
      const deleted = await this.deleteResource(stackState, r, 'delete');
      if (deleted) delete this.state.resources[key];
      this.waits.done++;
      this.save();
      return deleted;
    }, false, (id) => {
      const r = this.state.resources[resourceKey(name, id)];
      this.emit(name, 'DELETE_SKIPPED', r.type, id, 'a resource that depends on it failed to delete');
    });
    if (result.failed.length > 0) ok = false;
    if (ok) this.state.stacks = this.state.stacks.filter((s) => s.stackName !== name);
    else this.failed = true;
    this.emit(name, ok ? 'DELETE_COMPLETE' : 'DELETE_FAILED', STACK_TYPE, name);
    this.saveNow();
  }
}

/** Resources in deletion order (dependents first), and for each the resources that depend on it (deleted before it). */
function deleteOrder(resources: readonly ResourceState[]): { order: string[]; dependents: Map<string, string[]> } {
  const order = dependencyOrder(resources.map((r) => r.logicalId), new Map(resources.map((r) => [r.logicalId, r.dependsOn]))).reverse();
  const dependents = new Map<string, string[]>(order.map((id) => [id, []]));
  for (const r of resources) for (const d of r.dependsOn) dependents.get(d)?.push(r.logicalId);
  return { order, dependents };
}
