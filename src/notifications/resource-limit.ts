/**
 * CloudFormation's resource limit per stack, checked at synth time before aws-cdk-lib's own check, with a message
 * that says how many notification pipelines fit and points to `NotificationPipelineFleet` (internal).
 */
import { CfnResource, Stack } from 'aws-cdk-lib';
import { IConstruct } from 'constructs';
import { usesParentProvider } from '../connection/provider';

/** CloudFormation's limit on the resources of one stack. */
export const CLOUDFORMATION_RESOURCE_LIMIT = 500;

/** The resource limit aws-cdk-lib enforces for `stack` (context `@aws-cdk/core:stackResourceLimit`; 0 = none). */
export function stackResourceLimit(stack: Stack): number {
  const v = stack.node.tryGetContext('@aws-cdk/core:stackResourceLimit');
  const n = v === undefined ? CLOUDFORMATION_RESOURCE_LIMIT : Number(v);
  return Number.isFinite(n) ? n : CLOUDFORMATION_RESOURCE_LIMIT;
}

const checked = new WeakSet<Stack>();

/**
 * Check the stack of `pipeline` (once per stack) against the resource limit when it is synthesized: over the limit,
 * the error names the stack, its resource count, how many pipelines would fit, and the fleet. `isPipeline` tells
 * the pipeline constructs apart.
 */
export function checkPipelineResourceLimit(pipeline: IConstruct, isPipeline: (c: IConstruct) => boolean): void {
  const stack = Stack.of(pipeline);
  // A fleet checks its own nested stacks (with a message about its nested stack count).
  if (checked.has(stack) || usesParentProvider(stack)) return;
  checked.add(stack);
  stack.node.addValidation({
    validate: () => {
      const limit = stackResourceLimit(stack);
      if (limit <= 0) return [];
      const inStack = (c: IConstruct): boolean => CfnResource.isCfnResource(c) && Stack.of(c) === stack;
      const all = stack.node.findAll();
      const total = all.filter(inStack).length;
      if (total <= limit) return [];
      const pipelines = all.filter((c) => isPipeline(c) && Stack.of(c) === stack);
      const pipelineResources = pipelines.reduce((n, p) => n + p.node.findAll().filter(inStack).length, 0);
      const others = total - pipelineResources;
      const perPipeline = pipelines.length > 0 ? pipelineResources / pipelines.length : 1;
      const fit = Math.max(0, Math.floor((limit - others) / perPipeline));
      return [`${stack.node.path}: the stack has ${total} resources, more than CloudFormation's limit of ${limit}, with `
        + `${pipelines.length} NotificationPipelines (${pipelineResources} resources) and ${others} other resources: at most ${fit} `
        + 'pipelines fit in this stack; declare the pipelines with a NotificationPipelineFleet, which spreads them over nested stacks '
        + 'below the limit (see docs/fleets.md)'];
    },
  });
}
