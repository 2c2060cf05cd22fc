import { HandlerHarness } from './helpers';
import { planResource, PlanEntry } from '../../src/handler/plan';

/** What a test deploys: the deployed and the declared properties of one resource (no Connection: the harness adds it). */
export interface Step {
  readonly oldProps?: Record<string, unknown>;
  readonly newProps?: Record<string, unknown>;
}

/** The outcome of running the handler for a step: the plan made before it, the changing requests and the new ID. */
export interface Ran {
  readonly plan: PlanEntry;
  /** `METHOD path` of every changing request the handler sent (GETs and the token exchange left out), in order. */
  readonly sent: string[];
  readonly physicalId?: string;
  readonly result?: Record<string, string>;
  readonly failure?: string;
}

/**
 * Plans the step, then runs it through the handler as CloudFormation would: Create, Update (and, when the physical
 * ID changes, the cleanup Delete of the old resource with the deployed properties), or Delete; returns the plan and
 * what the handler sent.
 */
export async function planAndRun(h: HandlerHarness, type: string, physicalId: string | undefined, step: Step,
  attributes?: Record<string, string>): Promise<Ran> {
  const plan = planResource({
    type,
    stack: 'HandlerTest',
    logicalId: 'Resource',
    physicalId,
    oldProps: step.oldProps,
    newProps: step.newProps,
    ...(attributes ? { attributes } : {}),
  });
  await h.clearRequests();
  const withConn = (p: Record<string, unknown>): Record<string, unknown> => ({ Connection: h.connection, ...p });
  let out: { PhysicalResourceId: string; Data?: Record<string, string> } | undefined;
  let failure: string | undefined;
  try {
    if (step.oldProps === undefined) {
      out = await h.onEvent(h.event(type, 'Create', step.newProps!));
    } else if (step.newProps === undefined) {
      out = await h.onEvent(h.event(type, 'Delete', step.oldProps, { PhysicalResourceId: physicalId }));
    } else {
      out = await h.onEvent(h.event(type, 'Update', step.newProps, { PhysicalResourceId: physicalId, OldResourceProperties: withConn(step.oldProps) }));
      if (out.PhysicalResourceId !== physicalId) {
        await h.onEvent(h.event(type, 'Delete', step.oldProps, { PhysicalResourceId: physicalId }));
      }
    }
  } catch (e) {
    failure = (e as Error).message;
  }
  const sent = (await h.requests()).filter((r) => r.method !== 'GET' && r.path !== '/auth/api/ref').map((r) => `${r.method} ${r.path}`);
  return { plan, sent, physicalId: out?.PhysicalResourceId, result: out?.Data, failure };
}

/** The plan's calls as `METHOD path`, with the placeholders filled in (`{new}` and others from `fill`). */
export function planned(plan: PlanEntry, fill: Record<string, string | undefined> = {}): string[] {
  return plan.calls.map((c) => `${c.method} ${c.path.replace(/\{([a-z]+)\}/g, (m, k: string) => fill[k] ?? m)}`);
}

/** Asserts that the plan's calls are exactly the handler's changing requests, and that a planned failure is the handler's. */
export function expectAgreement(ran: Ran, fill: Record<string, string | undefined> = {}): void {
  // A conditional call (`when`) is expected when the handler sent it at that point, and skipped otherwise.
  const all = planned(ran.plan, { new: ran.physicalId, ...fill });
  const expected: string[] = [];
  let j = 0;
  all.forEach((c, i) => {
    if (ran.plan.calls[i].when === undefined || ran.sent[j] === c) {
      expected.push(c);
      j++;
    }
  });
  expect({ calls: expected, failure: ran.plan.failure !== undefined })
    .toEqual({ calls: ran.sent, failure: ran.failure !== undefined });
  if (ran.plan.failure !== undefined) expect(ran.failure).toContain(ran.plan.failure.slice(0, 80));
}
