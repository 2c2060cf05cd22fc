/**
 * The local runner's deploy: every stack in dependency order, each resource as CloudFormation would, rollback.
 */
import { AssemblyStack, readAssembly } from './assembly';
import { dependencyOrder } from './graph';
import { deepEqual, PlannedResource, Change, Failure, RunFailure, WaiterError } from './runner-helpers';
import { RunnerPlan } from './runner-plan';
import { runScheduled } from './scheduler';
import { newStackId, resourceKey, ResourceState, StackState } from './state';

/** Deploys the stacks of a run. */
export abstract class RunnerDeploy extends RunnerPlan {
  protected async deploy(): Promise<void> {
    const app = this.options.app ?? './cdk.out';
    const stacks = readAssembly(app);
    this.stacks = stacks;
    // Validate every stack before changing anything: references resolvable, no type change.
    const plans = new Map<string, PlannedResource[]>();
    for (const stack of stacks) {
      const ctx = this.resolveContext(stack, this.stackState(stack.stackName)?.stackId ?? `arn:aws:cloudformation:${stack.region}:${stack.account}:stack/${stack.stackName}/validation`, true);
      const plan = this.plan(stack, ctx);
      for (const p of plan) {
        this.resolveProps(ctx, p);
        const prev = this.state.resources[resourceKey(stack.stackName, p.logicalId)];
        if (prev && prev.type !== p.resource.Type) {
          throw new Error(`${stack.stackName}/${p.logicalId}: Update of resource type is not permitted (${prev.type} -> ${p.resource.Type}); rename the construct to replace it`);
        }
      }
      plans.set(stack.artifactId, plan);
      this.waits.total += plan.length;
    }
    const known = new Set(stacks.map((s) => s.stackName));
    const removedNested = this.removedNestedStacks(known);
    for (const s of this.state.stacks) {
      if (!known.has(s.stackName) && !removedNested.includes(s.stackName)) this.progress(`${s.stackName} | not in the app: left as is (use --destroy to delete it)`);
    }
    for (const stack of stacks) {
      const ok = await this.deployStack(stack, plans.get(stack.artifactId)!);
      if (!ok) {
        this.failed = true;
        throw new RunFailure('deployment failed');
      }
    }
    // Nested stacks that their parent no longer has are deleted after every stack is updated (the parent's clean-up).
    if (removedNested.length > 0) await this.connect();
    for (const name of removedNested) await this.deleteStack(name);
    if (this.failed) throw new RunFailure('deployment failed');
  }

  protected async deployStack(stack: AssemblyStack, plan: PlannedResource[]): Promise<boolean> {
    const existing = this.stackState(stack.stackName);
    const stackState: StackState = existing ?? {
      stackName: stack.stackName,
      stackId: newStackId(stack.stackName, stack.account, stack.region),
      account: stack.account,
      region: stack.region,
      dependencies: [],
    };
    const ctx = this.resolveContext(stack, stackState.stackId, false);
    const isNew = !existing;
    const stackType = 'AWS::CloudFormation::Stack';
    if (!isNew && !this.needsWork(stack, plan, ctx)) {
      this.progress(`✅  ${stack.stackName} (no changes)`);
      this.collectExports(stack, ctx);
      return true;
    }
    await this.connect();
    await this.registerRoles(stack, ctx);
    if (isNew) {
      this.state.stacks.push(stackState);
    }
    const stackIndex = this.state.stacks.findIndex((s) => s.stackName === stack.stackName);
    this.state.stacks[stackIndex] = {
      ...stackState,
      dependencies: stack.dependencyStackNames,
      ...(stack.nested ? { parentStack: stack.nested.parent.stackName } : {}),
    };
    this.emit(stack.stackName, isNew ? 'CREATE_IN_PROGRESS' : 'UPDATE_IN_PROGRESS', stackType, stack.stackName);

    const changes: Change[] = [];
    const failures: Failure[] = [];
    const known = new Set(Object.keys(this.state.resources));
    const byId = new Map(plan.map((p) => [p.logicalId, p]));
    // Every resource handled (unchanged, done or failed) counts towards the wait lines' "N of M resources done".
    const step = async (logicalId: string): Promise<boolean> => {
      try {
        return await stepOne(logicalId);
      } finally {
        this.waits.done++;
      }
    };
    const stepOne = async (logicalId: string): Promise<boolean> => {
      const p = byId.get(logicalId)!;
      const key = resourceKey(stack.stackName, p.logicalId);
      const before = this.state.resources[key];
      let props: Record<string, unknown> | undefined;
      try {
        props = this.resolveProps(ctx, p);
      } catch (e) {
        this.emit(stack.stackName, before ? 'UPDATE_FAILED' : 'CREATE_FAILED', p.resource.Type, p.logicalId, (e as Error).message);
        failures.push({ p, before });
        return false;
      }
      const base = {
        stack: stack.stackName,
        logicalId: p.logicalId,
        type: p.resource.Type,
        properties: props,
        dependsOn: p.dependsOn,
        deletionPolicy: p.resource.DeletionPolicy,
        updateReplacePolicy: p.resource.UpdateReplacePolicy,
        waiter: p.waiter,
        path: p.path,
      };
      if (before && deepEqual(before.properties, props)) {
        // Unchanged: no event. Keep template-level settings current.
        this.state.resources[key] = {
          ...before,
          dependsOn: base.dependsOn,
          deletionPolicy: base.deletionPolicy,
          updateReplacePolicy: base.updateReplacePolicy,
          waiter: base.waiter,
          path: base.path,
        };
        return true;
      }
      const kind = before ? 'UPDATE' : 'CREATE';
      this.emit(stack.stackName, `${kind}_IN_PROGRESS`, p.resource.Type, p.logicalId);
      try {
        const res = before
          ? await this.invoke('Update', stackState, base, before.physicalId, before.properties)
          : await this.invoke('Create', stackState, base);
        const after: ResourceState = { ...base, physicalId: res.physicalId, attributes: res.data };
        this.state.resources[key] = after;
        changes.push({ kind: before ? 'update' : 'create', before, after });
        if (before && before.physicalId !== res.physicalId) {
          // Persisted at once (CloudFormation remembers it too): a run killed before the clean-up deletes it next time.
          this.state.orphans.push({ ...before, replaced: true });
          this.saveNow();
          this.emit(stack.stackName, `${kind}_COMPLETE`, p.resource.Type, p.logicalId, `replaced: new physical ID ${res.physicalId} (the old ${before.physicalId} gets its Delete after the update: ended or released as its removal policy says)`, res.physicalId);
        } else {
          this.save();
          this.emit(stack.stackName, `${kind}_COMPLETE`, p.resource.Type, p.logicalId, undefined, res.physicalId);
        }
        return true;
      } catch (e) {
        this.emit(stack.stackName, `${kind}_FAILED`, p.resource.Type, p.logicalId, (e as Error).message);
        if (e instanceof WaiterError && (!before || before.physicalId !== e.physicalId)) {
          // onEvent made a resource whose waiter failed: the rollback deletes it (CloudFormation got its physical ID).
          const after: ResourceState = { ...base, physicalId: e.physicalId, attributes: e.data };
          this.state.resources[key] = after;
          changes.push({ kind: before ? 'update' : 'create', before, after });
          this.save();
          failures.push({ p });
        } else {
          failures.push({ p, before, props });
        }
        return false;
      }
    };
    // Independent resources run concurrently (dependencies first); a failure starts no more, in-flight ones finish.
    await runScheduled(plan.map((p) => p.logicalId), (id) => byId.get(id)!.dependsOn, this.concurrency, step);
    this.keepPlanOrder(stack.stackName, plan, known);

    if (failures.length > 0) {
      await this.rollback(stackState, isNew, changes, failures);
      return false;
    }

    // Cleanup: old physical resources of replacements, resources removed from the app, orphans of earlier runs.
    const planned = new Set(plan.map((p) => p.logicalId));
    const removed = this.resourcesOf(stack.stackName).filter((r) => !planned.has(r.logicalId));
    const orphans = this.state.orphans.filter((o) => o.stack === stack.stackName);
    if (removed.length + orphans.length > 0) {
      this.emit(stack.stackName, isNew ? 'CREATE_COMPLETE_CLEANUP_IN_PROGRESS' : 'UPDATE_COMPLETE_CLEANUP_IN_PROGRESS', stackType, stack.stackName);
      this.state.orphans = this.state.orphans.filter((o) => o.stack !== stack.stackName);
      // Orphans of earlier runs first, then this run's replaced resources, newest first.
      const ordered = [...orphans.filter((o) => !o.replaced), ...orphans.filter((o) => o.replaced).reverse()];
      for (const o of ordered) {
        const ok = await this.deleteResource(stackState, o, o.replaced ? 'replace' : 'delete');
        if (!ok) this.abandon(o);
        this.save();
      }
      const order = dependencyOrder(removed.map((r) => r.logicalId), new Map(removed.map((r) => [r.logicalId, r.dependsOn]))).reverse();
      const dependents = new Map<string, string[]>(order.map((id) => [id, []]));
      for (const r of removed) for (const d of r.dependsOn) dependents.get(d)?.push(r.logicalId);
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
    this.emit(stack.stackName, isNew ? 'CREATE_COMPLETE' : 'UPDATE_COMPLETE', stackType, stack.stackName);
    this.saveNow();
    this.collectExports(stack, ctx);
    return true;
  }

  protected async rollback(
    stackState: StackState,
    isNew: boolean,
    changes: Change[],
    failures: Failure[],
  ): Promise<void> {
    const stackType = 'AWS::CloudFormation::Stack';
    const name = stackState.stackName;
    let ok = true;
    this.emit(name, isNew ? 'ROLLBACK_IN_PROGRESS' : 'UPDATE_ROLLBACK_IN_PROGRESS', stackType, name, `The following resource(s) failed: [${failures.map((f) => f.p.logicalId).join(', ')}]`);
    // 1. In-place updates (including the ones that failed) get an Update with old and new properties swapped.
    const inPlace: Array<{ before: ResourceState; current: ResourceState }> = [];
    for (const failure of failures) {
      if (failure.before && failure.props) {
        inPlace.push({ before: failure.before, current: { ...failure.before, properties: failure.props } });
      }
    }
    for (const c of [...changes].reverse()) {
      if (c.kind === 'update' && c.before && c.before.physicalId === c.after.physicalId) inPlace.push({ before: c.before, current: c.after });
    }
    for (const { before, current } of inPlace) {
      const key = resourceKey(name, before.logicalId);
      this.emit(name, 'UPDATE_IN_PROGRESS', before.type, before.logicalId, 'rollback');
      try {
        const res = await this.invoke('Update', stackState, before, current.physicalId, current.properties);
        this.state.resources[key] = { ...before, attributes: Object.keys(res.data).length > 0 ? res.data : before.attributes };
        this.emit(name, 'UPDATE_COMPLETE', before.type, before.logicalId, undefined, current.physicalId);
      } catch (e) {
        ok = false;
        this.emit(name, 'UPDATE_FAILED', before.type, before.logicalId, (e as Error).message);
      }
      this.save();
    }
    // 2. Resources created in this run, and new physical resources of replacements, are deleted; replaced ones get their old state back.
    if (!isNew) this.emit(name, 'UPDATE_ROLLBACK_COMPLETE_CLEANUP_IN_PROGRESS', stackType, name);
    for (const c of [...changes].reverse()) {
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
          this.state.orphans.push(c.after);
        }
      }
      this.save();
    }
    if (isNew && this.resourcesOf(name).length === 0 && ok) {
      this.state.stacks = this.state.stacks.filter((s) => s.stackName !== name);
    }
    this.emit(name, isNew ? (ok ? 'ROLLBACK_COMPLETE' : 'ROLLBACK_FAILED') : (ok ? 'UPDATE_ROLLBACK_COMPLETE' : 'UPDATE_ROLLBACK_FAILED'), stackType, name);
    this.saveNow();
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

  /** Deletes the resources of one stack of the state (reverse dependency order) and, when all are gone, the stack. */
  protected async deleteStack(name: string): Promise<void> {
    {
      const stackState = this.stackState(name)!;
      const stackType = 'AWS::CloudFormation::Stack';
      this.emit(name, 'DELETE_IN_PROGRESS', stackType, name);
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
      const ids = dependencyOrder(resources.map((r) => r.logicalId), new Map(resources.map((r) => [r.logicalId, r.dependsOn]))).reverse();
      // A resource is deleted after every resource that depends on it; one whose dependent failed is skipped.
      const dependents = new Map<string, string[]>(ids.map((id) => [id, []]));
      for (const r of resources) for (const d of r.dependsOn) dependents.get(d)?.push(r.logicalId);
      const result = await runScheduled(ids, (id) => dependents.get(id) ?? [], this.concurrency, async (id) => {
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
      this.emit(name, ok ? 'DELETE_COMPLETE' : 'DELETE_FAILED', stackType, name);
      this.saveNow();
    }
  }
}
