/**
 * The local runner's deploy: every stack with its nested stacks as one operation, each resource as CloudFormation
 * would handle it; a failure anywhere in the tree cancels what is in flight and rolls back the whole tree.
 */
import { AssemblyStack, NESTED_STACK_TYPE, readAssembly } from './assembly';
import { Cancellation, Slots } from './cancellation';
import { dependencyOrder } from './graph';
import { templateBudget } from './provider-env';
import { declaredResource, deepEqual, PlannedResource, Change, Failure, RunFailure, serviceTimedOut, WaiterError } from './runner-helpers';
import { AppliedStack, RunnerRollback } from './runner-rollback';
import { runScheduled } from './scheduler';
import { StackProgress } from './stack-gate';
import { checkNoCircle, depthOf, isBelow, nestedStacksRead, parentNeeds, rootOf, stackDependencies, TreeOperation } from './stack-tree';
import { newStackId, resourceKey, ResourceState, StackState } from './state';

/** Deploys the stacks of a run. */
export abstract class RunnerDeploy extends RunnerRollback {
  /** Resource operations in flight at once across the stacks of an operation (nested stacks run in parallel). */
  private slots?: Slots;
  /** The cancellation of the operation in progress. */
  private operation?: Cancellation;

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
    // CloudFormation refuses a template whose resources (nested stacks included) depend on each other in a circle.
    for (const root of stacks.filter((s) => !s.nested)) {
      const tree = stacks.filter((s) => rootOf(s).stackName === root.stackName);
      const byName = new Map(tree.map((s) => [s.stackName, s]));
      dependencyOrder(tree.map((s) => s.stackName), new Map(tree.map((s) => [s.stackName, stackDependencies(s, byName)])));
      for (const s of tree) checkNoCircle(s, plans.get(s.artifactId)!, tree);
    }
    const known = new Set(stacks.map((s) => s.stackName));
    const removedNested = this.removedNestedStacks(known);
    for (const s of this.state.stacks) {
      if (!known.has(s.stackName) && !removedNested.includes(s.stackName)) this.progress(`${s.stackName} | not in the app: left as is (use --destroy to delete it)`);
    }
    this.slots = new Slots(this.concurrency);
    void this.options.cancelWhen?.then(() => {
      if (!this.operation) return;
      this.progress('⚠️  the operation is cancelled (cancelWhen), as a failure of another resource would cancel it');
      this.operation.cancel();
    }, () => undefined);
    // One operation per top-level stack: the stack and its nested stacks (the order of the app's stacks holds).
    for (const root of stacks.filter((s) => !s.nested)) {
      const tree = stacks.filter((s) => rootOf(s).stackName === root.stackName);
      await this.makeDeclaredJournals(tree);
      if (!(await this.deployTree(tree, plans))) {
        this.failed = true;
        throw new RunFailure('deployment failed');
      }
    }
    // Nested stacks that their parent no longer has are deleted after every stack is updated (the parent's clean-up).
    if (removedNested.length > 0) await this.connect();
    for (const name of removedNested) await this.deleteStack(name);
    if (this.failed) throw new RunFailure('deployment failed');
  }

  /**
   * The declared lifecycle journals (`LifecycleJournal`) of a tree's templates, made in the local journal server as
   * CloudFormation makes the table, before the tree's resources deploy; an existing one is kept as it is (RETAIN).
   */
  private async makeDeclaredJournals(tree: AssemblyStack[]): Promise<void> {
    for (const stack of tree) {
      const tables = this.declaredJournals(stack);
      if (tables.length === 0) continue;
      await this.connect();
      for (const t of tables) {
        if (await this.journal!.declareTable(t)) {
          this.progress(`${stack.stackName} | lifecycle journal ${t.tableName} made in the local journal server (tags, resource policy; kept by --destroy)`);
        }
      }
    }
  }

  /**
   * One operation: the top-level stack and its nested stacks at once, each nested stack once the parent's resources and
   * the sibling trees it depends on are complete (stack-tree.ts). The first failure cancels every in-flight Create and Update of the tree and starts nothing new; then every stack
   * that took part rolls back, nested stacks before their parents. Clean-ups run only once the whole tree succeeded.
   */
  private async deployTree(tree: AssemblyStack[], plans: Map<string, PlannedResource[]>): Promise<boolean> {
    const cancellation = new Cancellation();
    this.operation = cancellation;
    const known = new Set(Object.keys(this.state.resources));
    const applied: AppliedStack[] = [];
    const byName = new Map(tree.map((s) => [s.stackName, s]));
    const failedIn = new Map<string, string[]>();
    let thrown: { error: unknown; stack: string } | undefined;
    const progress = new Map(tree.map((s) => [s.stackName, new StackProgress()]));
    const op: TreeOperation = { tree, plans, progress, cancellation };
    // CloudFormation continues a rollback of the whole tree before it updates any stack of it.
    for (const s of tree) {
      const state = this.stackState(s.stackName);
      if (!state || !this.state.orphans.some((o) => o.stack === s.stackName && o.rollbackPending)) continue;
      await this.connect();
      if (!(await this.continueRollback(state))) {
        throw new Error(`${s.stackName}: a Delete of an earlier run's rollback failed again; CloudFormation refuses to update a stack `
          + 'whose rollback did not finish (continue the rollback): fix its cause, then run again');
      }
    }
    // Every stack of the tree runs at once (`tree.length`: a stack waiting at its parent's gate holds a place).
    const result = await runScheduled(tree.map((s) => s.stackName), (n) => stackDependencies(byName.get(n)!, byName), tree.length, async (n) => {
      const stack = byName.get(n)!;
      try {
        if (cancellation.cancelled) return false;
        let a: AppliedStack;
        try {
          // A nested stack starts when the parent's resources it depends on are complete, beside the others.
          const origin = stack.nested;
          if (origin && !(await progress.get(origin.parent.stackName)!.ready(parentNeeds(origin.parent, origin.logicalId, plans), cancellation))) {
            return false;
          }
          a = await this.applyStack(stack, plans.get(stack.artifactId)!, op);
        } catch (e) {
          // Not a resource's failure (the emulator unreachable, a value that cannot be resolved): before any change it
          // stops the run; once the operation changed something, it fails this stack and the tree rolls back.
          thrown ??= { error: e, stack: n };
          cancellation.cancel();
          return false;
        }
        applied.push(a);
        const failed = a.failures.filter((f) => !f.cancelled).map((f) => f.p.logicalId);
        if (failed.length === 0 && !cancellation.cancelled) return true;
        failedIn.set(n, failed);
        cancellation.cancel();
        return false;
      } finally {
        progress.get(n)!.end();
      }
    });
    this.operation = undefined;
    if (thrown && applied.every((a) => a.unchanged)) throw thrown.error;
    if (thrown) {
      const message = `${thrown.stack}: ${(thrown.error as Error).message}`;
      this.progress(`❌  ${message}`);
      failedIn.set(thrown.stack, [`(${(thrown.error as Error).message})`]);
      const origin = byName.get(thrown.stack)!.nested;
      if (origin) {
        this.emit(origin.parent.stackName, this.stackState(thrown.stack) ? 'UPDATE_FAILED' : 'CREATE_FAILED', NESTED_STACK_TYPE, origin.logicalId, message);
        failedIn.set(origin.parent.stackName, [...(failedIn.get(origin.parent.stackName) ?? []), origin.logicalId]);
      }
    }
    this.keepPlanOrder(tree.map((s) => [s.stackName, plans.get(s.artifactId)!]), known);
    // Children before parents (siblings in the reverse of their order): the clean-ups, or the rollbacks.
    const childrenFirst = [...applied].reverse().sort((x, y) => depthOf(y.stack) - depthOf(x.stack));
    if (!cancellation.cancelled && result.failed.length === 0) {
      for (const a of childrenFirst) if (!a.unchanged) await this.cleanUp(a);
      for (const a of applied) this.collectExports(a.stack, a.ctx);
      return true;
    }
    // A nested stack that failed fails its resource in the parent (deepest first, so a grandparent hears of it too),
    // and the whole tree rolls back, children first.
    for (const a of childrenFirst) {
      const origin = a.stack.nested;
      if (!origin || !(failedIn.get(a.stack.stackName)?.length)) continue;
      const parent = failedIn.get(origin.parent.stackName) ?? [];
      failedIn.set(origin.parent.stackName, [...parent, origin.logicalId]);
      this.emit(origin.parent.stackName, a.isNew ? 'CREATE_FAILED' : 'UPDATE_FAILED', NESTED_STACK_TYPE, origin.logicalId,
        `Embedded stack ${a.stackState.stackId} was not successfully ${a.isNew ? 'created' : 'updated'}: `
        + `The following resource(s) failed: [${failedIn.get(a.stack.stackName)!.join(', ')}]`);
    }
    const everyFailure = [...failedIn.entries()].filter(([, ids]) => ids.length > 0).map(([n, ids]) => ids.map((id) => `${n}/${id}`)).flat();
    const rollbackFailed = new Set<string>();
    for (const a of childrenFirst) {
      const own = failedIn.get(a.stack.stackName) ?? [];
      if (a.unchanged && own.length === 0) continue;
      const reason = own.length > 0
        ? `The following resource(s) failed: [${own.join(', ')}]`
        : everyFailure.length > 0 ? `rolled back with its operation, which failed: [${everyFailure.join(', ')}]` : 'the operation was cancelled';
      const childFailed = applied.some((c) => c.stack.nested?.parent.stackName === a.stack.stackName && rollbackFailed.has(c.stack.stackName));
      if (!(await this.rollback(a, reason, childFailed))) rollbackFailed.add(a.stack.stackName);
    }
    return false;
  }

  /** The stacks of a tree with a nested stack (at any depth) that has something to do: they are updated too. */
  private touchedStacks(tree: readonly AssemblyStack[], plans: ReadonlyMap<string, PlannedResource[]>): Set<string> {
    const touched = new Set<string>();
    for (const s of tree) {
      if (!s.nested) continue;
      const state = this.stackState(s.stackName);
      let works = true;
      try {
        works = !state || this.needsWork(s, plans.get(s.artifactId)!, this.resolveContext(s, state.stackId, true));
      } catch {
        // Not resolvable before its parent's changes: it has something to do.
      }
      for (let p = works ? s.nested : undefined; p; p = p.parent.nested) touched.add(p.parent.stackName);
    }
    return touched;
  }

  /** Applies the changes of one stack of an operation (no clean-up, no rollback: the tree decides). */
  private async applyStack(stack: AssemblyStack, plan: PlannedResource[], op: TreeOperation): Promise<AppliedStack> {
    const { cancellation } = op;
    const progress = op.progress.get(stack.stackName)!;
    // A stack whose nested stack (at any depth) changes is updated too (its template names the nested template), even
    // when none of its own resources changes: decided now, on the state its parent's changes made.
    const below = op.tree.filter((s) => isBelow(s, stack));
    const nestedChange = below.length > 0 && this.touchedStacks(below, op.plans).size > 0;
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
    const changes: Change[] = [];
    const failures: Failure[] = [];
    const applied = { stack, stackState, ctx, plan, isNew, changes, failures };
    if (!isNew && !nestedChange && !this.needsWork(stack, plan, ctx)) {
      this.waits.done += plan.length;
      this.progress(`✅  ${stack.stackName} (no changes)`);
      return { ...applied, unchanged: true };
    }
    await this.connect();
    await this.registerRoles(stack, ctx);
    if (isNew) this.state.stacks.push(stackState);
    const stackIndex = this.state.stacks.findIndex((s) => s.stackName === stack.stackName);
    this.state.stacks[stackIndex] = {
      ...stackState,
      dependencies: stack.dependencyStackNames,
      ...(stack.nested ? { parentStack: stack.nested.parent.stackName } : {}),
      ...(templateBudget(stack) !== undefined ? { requestBudget: templateBudget(stack) } : {}),
    };
    this.emit(stack.stackName, isNew ? 'CREATE_IN_PROGRESS' : 'UPDATE_IN_PROGRESS', NESTED_STACK_TYPE, stack.stackName);
    progress.start();

    const byId = new Map(plan.map((p) => [p.logicalId, p]));
    const stepOne = async (p: PlannedResource): Promise<boolean> => {
      const key = resourceKey(stack.stackName, p.logicalId);
      const before = this.state.resources[key];
      let props: Record<string, unknown>;
      try {
        props = this.resolveProps(ctx, p);
      } catch (e) {
        this.emit(stack.stackName, before ? 'UPDATE_FAILED' : 'CREATE_FAILED', p.resource.Type, p.logicalId, (e as Error).message);
        failures.push({ p, before });
        cancellation.cancel();
        return false;
      }
      const base = declaredResource(stack.stackName, p, props);
      if (before && deepEqual(before.properties, props)) {
        // Unchanged: no event. Keep template-level settings current.
        this.state.resources[key] = { ...before, ...base, properties: before.properties };
        return true;
      }
      return this.slots!.run(() => this.changeOne(stackState, p, base, before, cancellation, changes, failures));
    };
    // Independent resources run concurrently (dependencies first); a failure in the tree starts no more and cancels the rest.
    // A resource that reads a nested stack (its outputs) waits at a gate for that nested stack's whole tree.
    const readsNested = nestedStacksRead(stack, plan, op.tree);
    const gate = (id: string): Promise<boolean> | undefined => {
      const subtrees = readsNested.get(id);
      if (!subtrees || subtrees.length === 0) return undefined;
      return Promise.all(subtrees.map((n) => op.progress.get(n)!.whenEnded(cancellation))).then((ends) => ends.every((e) => e));
    };
    await runScheduled(plan.map((p) => p.logicalId), (id) => byId.get(id)!.dependsOn, this.concurrency, async (id) => {
      try {
        const ok = cancellation.cancelled ? false : await stepOne(byId.get(id)!);
        if (ok) progress.complete(id);
        return ok;
      } finally {
        this.waits.done++;
      }
    }, true, undefined, gate);
    return { ...applied, unchanged: false };
  }

  /** Creates or updates one resource, unless the operation is cancelled first (then its invocation runs on, unheard). */
  private async changeOne(
    stackState: StackState, p: PlannedResource, base: Omit<ResourceState, 'physicalId' | 'attributes'>, before: ResourceState | undefined,
    cancellation: Cancellation, changes: Change[], failures: Failure[],
  ): Promise<boolean> {
    if (cancellation.cancelled) return false;
    const name = stackState.stackName;
    const key = resourceKey(name, p.logicalId);
    const kind = before ? 'UPDATE' : 'CREATE';
    this.emit(name, `${kind}_IN_PROGRESS`, p.resource.Type, p.logicalId);
    try {
      const call = before
        ? this.invoke('Update', stackState, base, before.physicalId, before.properties)
        : this.invoke('Create', stackState, base);
      // CloudFormation stops waiting when the operation is cancelled, or at the resource's ServiceTimeout (one hour by
      // default and at most); the invocation runs on either way.
      const answer = await this.answerWithin(call, base.properties, cancellation.signal);
      if (answer === 'cancelled' || answer === 'timeout') {
        this.emit(name, `${kind}_FAILED`, p.resource.Type, p.logicalId, answer === 'timeout'
          ? serviceTimedOut(base.properties)
          : `Resource ${before ? 'update' : 'creation'} cancelled`);
        failures.push({ p, before, props: base.properties, cancelled: true });
        cancellation.cancel();
        return false;
      }
      const res = answer.value;
      const after: ResourceState = { ...base, physicalId: res.physicalId, attributes: res.data };
      this.state.resources[key] = after;
      changes.push({ kind: before ? 'update' : 'create', before, after });
      if (before && before.physicalId !== res.physicalId) {
        // Persisted at once (CloudFormation remembers it too): a run killed before the clean-up deletes it next time.
        this.state.orphans.push({ ...before, replaced: true });
        this.saveNow();
        this.emit(name, `${kind}_COMPLETE`, p.resource.Type, p.logicalId, `replaced: new physical ID ${res.physicalId} (the old ${before.physicalId} gets its Delete after the update: ended or released as its removal policy says)`, res.physicalId);
      } else {
        this.save();
        this.emit(name, `${kind}_COMPLETE`, p.resource.Type, p.logicalId, undefined, res.physicalId);
      }
      return true;
    } catch (e) {
      this.emit(name, `${kind}_FAILED`, p.resource.Type, p.logicalId, (e as Error).message);
      if (e instanceof WaiterError && (!before || before.physicalId !== e.physicalId)) {
        // onEvent made a resource whose waiter failed: the rollback deletes it (CloudFormation got its physical ID).
        const after: ResourceState = { ...base, physicalId: e.physicalId, attributes: e.data };
        this.state.resources[key] = after;
        changes.push({ kind: before ? 'update' : 'create', before, after });
        this.save();
        failures.push({ p });
      } else {
        failures.push({ p, before, props: base.properties });
      }
      cancellation.cancel();
      return false;
    }
  }
}
