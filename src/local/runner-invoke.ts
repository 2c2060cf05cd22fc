/**
 * The runner's handler invocations, the way the CDK provider framework makes them: the event, the function it goes to
 * (timeout and memory from the template), the Lambda container or the in-process module, isComplete polling, Deletes.
 */
import { randomUUID } from 'node:crypto';
import { CONTINUATION_ENV, HandlerExports, REQUEST_BUDGET_ENV } from '../contract';
import type { CfnEvent } from '../handler';
import { CustomResourceEvent, invokeWithContext, IsCompleteResponse, OnEventResponse } from './handler';
import { partitionOf } from './intrinsics';
import { LocalFunction, providerFunctions, recordedEnvironment } from './provider-env';
import { RunnerBase } from './runner-base';
import { CREATE_FAILED_MARKER, EMBEDDED_EMULATOR_RATE_LIMIT, MAX_DATA_BYTES, serviceTimedOut, serviceTimeoutSeconds, WaiterError, withEmulatorUrl } from './runner-helpers';
import { resourceKey, ResourceState, StackState } from './state';
import { LIBRARY_WAITER, WAITER_TIMED_OUT, waiterDelayMs } from './waiter';

/** The runner's handler invocations (the plan, deploy and destroy parts extend it). */
export abstract class RunnerInvoke extends RunnerBase {
  /**
   * Runs one handler invocation, then checkpoints the journal: every journal write is in its write-ahead log before
   * the handler sees the answer (a killed run loses nothing it stored), and the whole journal is saved when the log
   * has grown past a megabyte (and at the end of the run). A failed save fails the invocation, unless the invocation
   * itself failed (its error wins).
   */
  protected async invokeHandler<T>(fn: () => Promise<T>): Promise<T> {
    let result: T;
    try {
      result = await fn();
    } catch (e) {
      await this.journal?.checkpoint().catch(() => undefined);
      throw e;
    }
    if (this.journal) {
      try {
        await this.journal.checkpoint();
      } catch (e) {
        throw new Error(`could not save the journal after the invocation: ${(e as Error).message}`);
      }
    }
    return result;
  }

  /** Points the handler's local runtime at the stack's account (clears its caches only when the account changes). */
  protected configureFor(account: string): void {
    if (this.configuredAccount === account) return;
    this.configuredAccount = account;
    const token = this.token;
    this.handler!.configureLocalRuntime!({
      readSecret: async () => token,
      callerAccountId: async () => account,
      journalEndpoint: this.journal?.endpoint,
      // Never IAM: a local run touches no AWS account (a role's age is unknown locally).
      roleCreatedAt: async () => undefined,
      // The provider function's environment: what it serves (src/handler/binding.ts).
      environment: (event) => this.containerEnvironment(event),
      // The runner answers for CloudFormation: a stack's parent and root from its state.
      describeStack: async (id) => {
        const l = this.lineageOf(id);
        return { ParentId: l.parentId, RootId: l.rootId };
      },
      ...(this.options.waits === 'emulator-clock' ? { sleep: (ms: number) => this.waitOnEmulatorClock(ms), now: () => Date.now() + this.waitedMs } : {}),
    });
  }

  /** A stack's parent and root stack IDs as CloudFormation gives them (none for a top-level stack), from the state. */
  protected lineageOf(stackId: string): { parentId?: string; rootId?: string } {
    let s = this.state.stacks.find((x) => x.stackId === stackId);
    const parent = s?.parentStack !== undefined ? this.stackState(s.parentStack) : undefined;
    if (!parent) return {};
    for (let i = 0; s?.parentStack !== undefined && i < 20; i++) s = this.stackState(s.parentStack);
    return { parentId: parent.stackId, rootId: s?.stackId };
  }

  /**
   * The environment a container of the provider function runs with: the function's, with the request budget of the
   * embedded emulator's rate limit (the service's documented one unless the run sets another), since the budget the
   * template sets is the real service's (one the app turned off stays off).
   */
  protected containerEnvironment(event: CfnEvent): Record<string, string> {
    const env = this.environmentFor(event);
    // A scheduled function (a monitor: no CloudFormation event) has no budget in the cloud: its role cannot write the journal.
    if (event.RequestType === undefined) return env;
    // An event bound from what the state recorded (the app no longer resolves its function) has the app's setting.
    const set = env[REQUEST_BUDGET_ENV] ?? this.recordedBudget(event);
    // A running emulator's limit is its own (the template's stands); a budget the app turned off stays off.
    if (this.options.emulatorUrl || set === 'off') return set === undefined ? env : { ...env, [REQUEST_BUDGET_ENV]: set };
    const limit = this.options.rateLimit ?? EMBEDDED_EMULATOR_RATE_LIMIT;
    return { ...env, [REQUEST_BUDGET_ENV]: limit === 'off' ? 'off' : `${limit.requests}/${limit.seconds}` };
  }

  /** The request budget the provider of an event's stack (or of the stack it is nested in) was deployed with. */
  private recordedBudget(event: CfnEvent): string | undefined {
    let s = this.state.stacks.find((x) => x.stackId === event.StackId);
    for (let i = 0; s && i < 20; i++) {
      if (s.requestBudget !== undefined) return s.requestBudget;
      s = s.parentStack !== undefined ? this.stackState(s.parentStack) : undefined;
    }
    return undefined;
  }

  /**
   * The environment of the provider function an event goes to: here the binding of what the event's recorded
   * properties name (runner-plan.ts resolves the function's environment from the app's template where it has one).
   */
  protected environmentFor(event: CfnEvent): Record<string, string> {
    const name = this.state.stacks.find((s) => s.stackId === event.StackId)?.stackName ?? /:stack\/([^/]+)\//.exec(event.StackId)?.[1] ?? '';
    const parents: string[] = [];
    for (let p = this.stackState(name)?.parentStack; p !== undefined && !parents.includes(p); p = this.stackState(p)?.parentStack) parents.push(p);
    const provider = parents.length > 0 ? this.stackState(parents[parents.length - 1])?.stackId : event.StackId;
    const env = recordedEnvironment(event.ResourceProperties?.Connection, [name], parents, provider, true);
    // A resource recorded with a waiter was deployed by a provider whose functions may continue in isComplete.
    return this.state.resources[resourceKey(name, event.LogicalResourceId)]?.waiter === true ? { ...env, [CONTINUATION_ENV]: '1' } : env;
  }

  protected async invoke(
    requestType: CustomResourceEvent['RequestType'],
    stack: StackState,
    r: { logicalId: string; type: string; waiter: boolean; properties: Record<string, unknown> },
    physicalId?: string,
    oldProperties?: Record<string, unknown>,
  ): Promise<{ physicalId: string; data: Record<string, unknown> }> {
    const url = this.url!;
    const props = withEmulatorUrl(r.properties, url);
    const serviceToken = typeof props.ServiceToken === 'string' ? props.ServiceToken : `arn:aws:lambda:${stack.region}:${stack.account}:function:local-provider`;
    const requestId = randomUUID();
    const event: CustomResourceEvent = {
      RequestType: requestType,
      ServiceToken: serviceToken,
      ResponseURL: 'local',
      StackId: stack.stackId,
      RequestId: requestId,
      LogicalResourceId: r.logicalId,
      ResourceType: r.type,
      ResourceProperties: props,
    };
    if (oldProperties) event.OldResourceProperties = withEmulatorUrl(oldProperties, url);
    if (physicalId !== undefined) event.PhysicalResourceId = physicalId;
    // Each invocation gets its function's timeout and memory from the template (as Lambda runs it); 10 minutes for a
    // resource the app no longer declares (a Delete from the state), or `invocationBudgetMs` when given.
    const app = this.stacks.find((s) => s.stackName === stack.stackName);
    const fns = app && app.template.Resources?.[r.logicalId] ? providerFunctions(app, r.logicalId) : {};
    const onEvent = this.functionOf(stack, 'OnEvent', fns.onEvent);
    const response = (await this.deliver(() => this.call<OnEventResponse | undefined>(onEvent, 'onEvent', event, stack))) ?? {};
    let newPhysical: string = response.PhysicalResourceId || (requestType === 'Create' ? requestId : physicalId!);
    let data: Record<string, unknown> = { ...(response.Data ?? {}) };
    if (r.waiter) {
      if (typeof this.handler!.isComplete !== 'function') throw new Error(`the handler bundle does not export ${HandlerExports.IS_COMPLETE}`);
      // The waiter state machine: isComplete at once, then after each wait of its retry policy, up to its attempts.
      const waiter = fns.waiter ?? LIBRARY_WAITER;
      const isComplete = this.functionOf(stack, 'IsComplete', fns.isComplete);
      const physical = newPhysical;
      try {
        for (let retry = 0; ; retry++) {
          // The framework's isComplete event: the onEvent event with what onEvent answered.
          const completeEvent = { ...event, ...response, PhysicalResourceId: physical, Data: data };
          const done = await this.call<IsCompleteResponse | null>(isComplete, 'isComplete', completeEvent, stack) ?? null;
          // Lambda answers null for no result; the framework then fails reading it.
          if (done === null || typeof done !== 'object') throw new Error(`Cannot read properties of ${String(done)} (reading 'IsComplete')`);
          if (done.IsComplete) {
            // The framework answers CloudFormation with the isComplete event and this answer merged (its Data too).
            data = { ...data, ...(done.Data ?? {}) };
            if (typeof done.PhysicalResourceId === 'string' && done.PhysicalResourceId !== '') newPhysical = done.PhysicalResourceId;
            break;
          }
          if (done.Data && Object.keys(done.Data).length > 0) throw new Error('"Data" is not allowed if "IsComplete" is "False"');
          if (retry >= waiter.maxAttempts) throw new Error(WAITER_TIMED_OUT);
          await this.clock.sleep(this.options.pollIntervalMs ?? waiterDelayMs(waiter, retry));
        }
      } catch (e) {
        throw new WaiterError((e as Error).message, physical, data);
      }
    }
    // CloudFormation checks the final answer (with a waiter, the isComplete one).
    if (requestType === 'Delete' && newPhysical !== physicalId) {
      throw new Error(`DELETE: cannot change the physical resource ID from "${physicalId}" to "${newPhysical}" during deletion`);
    }
    if (JSON.stringify({ PhysicalResourceId: newPhysical, Data: data }).length > MAX_DATA_BYTES) {
      throw new Error('Response object is too long.');
    }
    return { physicalId: newPhysical, data };
  }

  /** Delivers an event once, or twice as `redeliver` says (at least once, as Lambda does). */
  private async deliver<T>(send: () => Promise<T>): Promise<T> {
    const mode = this.options.redeliver ?? 'never';
    if (mode === 'never') return send();
    if (mode === 'after-answer') {
      // The first delivery's answer is lost: whatever it did stands, CloudFormation hears the second.
      await send().catch(() => undefined);
      return send();
    }
    // At once: the first answer to arrive is CloudFormation's; the other delivery runs on to its end.
    const both = [send(), send()];
    for (const p of both) this.runsOn(p);
    return Promise.race(both);
  }

  /** An invocation CloudFormation may no longer listen to: it runs on in its container, and the run ends after it. */
  /**
   * The answer to an event as CloudFormation hears it: the invocation's, unless `stop` comes first (a cancelled
   * operation) or the resource's ServiceTimeout passes (on the cloud's clock). Then the invocation runs on, unheard.
   */
  protected async answerWithin<T>(call: Promise<T>, properties: Record<string, unknown>, stop?: Promise<void>): Promise<{ value: T } | 'cancelled' | 'timeout'> {
    let timer: NodeJS.Timeout | undefined;
    const expired = new Promise<'timeout'>((resolve) => {
      timer = setTimeout(() => resolve('timeout'), this.clock.realMs(serviceTimeoutSeconds(properties) * 1000));
    });
    const stopped = stop ? stop.then(() => 'cancelled' as const) : new Promise<never>(() => undefined);
    const answer = await Promise.race([call.then((value) => ({ value })), stopped, expired]).finally(() => clearTimeout(timer));
    if (answer === 'cancelled' || answer === 'timeout') this.runsOn(call);
    return answer;
  }

  protected runsOn(invocation: Promise<unknown>): void {
    const t = invocation.then(() => undefined, () => undefined);
    this.stragglers.add(t);
    void t.then(() => this.stragglers.delete(t));
  }

  /** The function an event goes to, as the template declares it (timeout, memory; `invocationBudgetMs` overrides). */
  private functionOf(stack: StackState, role: 'OnEvent' | 'IsComplete', declared: LocalFunction | undefined): InvokedFunction {
    const name = `${stack.stackName}-DpiProvider${role}`;
    return {
      name,
      arn: `arn:${partitionOf(stack.region)}:lambda:${stack.region}:${stack.account}:function:${name}`,
      key: declared?.key ?? name,
      timeoutMs: this.options.invocationBudgetMs ?? declared?.timeoutMs ?? 600_000,
      memoryMb: declared?.memoryMb,
    };
  }

  /** One invocation of the handler: in a container of its function, or in-process (`containers: 'shared'`). */
  private call<T>(fn: InvokedFunction, method: 'onEvent' | 'isComplete', event: CustomResourceEvent, stack: StackState): Promise<T> {
    const containers = this.containers;
    if (containers) {
      const lineage = { stackId: event.StackId, ...this.lineageOf(event.StackId) };
      const runtime = { account: stack.account, environment: this.containerEnvironment(event), journalEndpoint: this.journal?.endpoint, lineage };
      return this.invokeHandler(async () => await containers.invoke({
        functionKey: fn.key, functionName: fn.name, functionArn: fn.arn, memoryMb: fn.memoryMb, timeoutMs: fn.timeoutMs, method, event, runtime,
      }) as T);
    }
    this.configureFor(stack.account);
    const handler = this.handler!;
    return this.invokeHandler(() => invokeWithContext(fn.name, fn.arn, fn.timeoutMs, this.sink, async (c) => {
      const out = method === 'onEvent' ? await handler.onEvent(event, c) : await handler.isComplete!(event, c);
      return out as T;
    }));
  }

  /** Sends a Delete (or skips it for Retain). Returns false when it failed. */
  protected async deleteResource(stack: StackState, r: ResourceState, mode: 'delete' | 'rollback-create' | 'replace'): Promise<boolean> {
    const policy = mode === 'replace' ? r.updateReplacePolicy : r.deletionPolicy;
    const retained = policy === 'Retain' || (policy === 'RetainExceptOnCreate' && mode !== 'rollback-create');
    if (retained) {
      this.emit(stack.stackName, 'DELETE_SKIPPED', r.type, r.logicalId, `${mode === 'replace' ? 'UpdateReplacePolicy' : 'DeletionPolicy'}: ${policy} (physical ID ${r.physicalId} kept)`, r.physicalId);
      return true;
    }
    this.emit(stack.stackName, 'DELETE_IN_PROGRESS', r.type, r.logicalId, undefined, r.physicalId);
    if (r.physicalId === CREATE_FAILED_MARKER) {
      this.emit(stack.stackName, 'DELETE_COMPLETE', r.type, r.logicalId, undefined, r.physicalId);
      return true;
    }
    try {
      // CloudFormation waits for a Delete up to the resource's ServiceTimeout too.
      if ((await this.answerWithin(this.invoke('Delete', stack, r, r.physicalId), r.properties)) === 'timeout') throw new Error(serviceTimedOut(r.properties));
      this.emit(stack.stackName, 'DELETE_COMPLETE', r.type, r.logicalId, undefined, r.physicalId);
      return true;
    } catch (e) {
      this.emit(stack.stackName, 'DELETE_FAILED', r.type, r.logicalId, (e as Error).message, r.physicalId);
      return false;
    }
  }
}

/** A handler function as an invocation runs it. */
interface InvokedFunction {
  readonly name: string;
  readonly arn: string;
  readonly key: string;
  readonly timeoutMs: number;
  readonly memoryMb?: number;
}
