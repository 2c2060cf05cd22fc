/** Which stack's provider serves a construct, and the provider's fixed names (internal). */
import { Stack } from 'aws-cdk-lib';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { IConstruct } from 'constructs';
import { ConnectionProperties } from '../contract';

/**
 * What a resource construct needs from its connection (internal).
 */
export interface ConnectionBinding {
  /** Service token of the stack's provider. */
  readonly serviceToken: string;
  /** The `Connection` custom resource property. */
  readonly connection: ConnectionProperties;
}

/** Fixed construct ID of the provider singleton, directly under the stack. */
export const PROVIDER_ID = 'DpiProvider';

/** Handler environment: its log group's name (kept in step with `HANDLER_LOG_GROUP_ENV` of src/handler/errors.ts). */
export const HANDLER_LOG_GROUP_ENV = 'DPI_HANDLER_LOG_GROUP';
/** Handler environment: the journal tables supplied by connections (in step with src/handler/journal-provided.ts). */
export const PROVIDED_JOURNAL_TABLES_ENV = 'DPI_PROVIDED_JOURNAL_TABLES';

/** Stacks (nested stacks of a fleet) whose resources use the provider of their parent stack. */
const parentProviderStacks = new WeakSet<Stack>();

/**
 * Let the resources of the nested stack `nested` use the provider of its parent stack (one provider per deployed
 * stack tree instead of one per nested stack): their service token is the parent's, passed in as a nested stack
 * parameter by aws-cdk-lib (internal).
 */
export function useParentProvider(nested: Stack): void {
  if (!nested.nestedStackParent) {
    throw new Error(`${nested.node.path}: only a nested stack can use its parent's provider`);
  }
  parentProviderStacks.add(nested);
}

/** Whether `stack` is a nested stack that uses its parent's provider (internal). */
export function usesParentProvider(stack: Stack): boolean {
  return parentProviderStacks.has(stack);
}

/** The stack whose provider serves `scope`: its own stack, or the nearest parent for nested stacks of a fleet. */
export function providerStackOf(scope: IConstruct): Stack {
  let stack = Stack.of(scope);
  while (parentProviderStacks.has(stack) && stack.nestedStackParent) stack = stack.nestedStackParent;
  return stack;
}

/** Runtime of every function running the bundled handler (docs/handler.md, "Lambda runtime"); in the oldest supported aws-cdk-lib. */
export const HANDLER_RUNTIME = lambda.Runtime.NODEJS_24_X;
