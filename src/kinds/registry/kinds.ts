/**
 * The registry of resource kinds, its pure part: the ONE list of kinds every part iterates (the handler's dispatch,
 * drift, plan and repair, the command line's orphans and drift, the local runner). Each kind's code is its folder
 * (src/kinds/<kind>/); the registry's other lists (this folder, one per layer) name each kind's hooks. Adding a kind:
 * see CONTRIBUTING.md ("Adding a resource kind"). Pure data, bundled into the Lambda: imports nothing but the kinds'
 * wire files.
 */
import { HistoryRequestKind } from '../history-request/wire';
import { LegacyNotificationPipelineKind } from '../legacy-notification-pipeline/wire';
import { NotificationPipelineKind } from '../notification-pipeline/wire';
import { ProductOrderJobsKind } from '../product-order-jobs/wire';
import { SubscriptionKind } from '../subscription/wire';
import type { KindDefinition } from '../types';

export * from '../subscription/wire';
export * from '../notification-pipeline/wire';
export * from '../legacy-notification-pipeline/wire';
export * from '../history-request/wire';
export * from '../product-order-jobs/wire';

/** Every kind the provider serves, in the order the tables list them. */
export const KINDS = [
  NotificationPipelineKind,
  LegacyNotificationPipelineKind,
  SubscriptionKind,
  HistoryRequestKind,
  ProductOrderJobsKind,
] as const;

/** The resource type of each kind, by constant name (`ResourceTypes.SUBSCRIPTION`, ...). */
export const ResourceTypes = {
  NOTIFICATION_PIPELINE: NotificationPipelineKind.type,
  LEGACY_NOTIFICATION_PIPELINE: LegacyNotificationPipelineKind.type,
  SUBSCRIPTION: SubscriptionKind.type,
  HISTORY_REQUEST: HistoryRequestKind.type,
  PRODUCT_ORDER_JOBS: ProductOrderJobsKind.type,
} as const;

/** A resource type the provider serves. */
export type KindType = (typeof KINDS)[number]['type'];

/** The resource types of every kind. */
export const KIND_TYPES: readonly KindType[] = KINDS.map((k) => k.type);

/** A table with one entry per kind (the compiler refuses one that misses a kind). */
export type PerKind<X> = { readonly [T in KindType]: X };

/** Whether `type` is a resource type of this library. */
export function isKindType(type: unknown): type is KindType {
  return typeof type === 'string' && (KIND_TYPES as readonly string[]).includes(type);
}

/** The definition of a resource type, or undefined when it is not one of this library. */
export function kindOf(type: string | undefined): KindDefinition | undefined {
  return KINDS.find((k) => k.type === type);
}

/** The kinds in `dpi orphans --fix` order (what hangs off a subscription first). */
export function kindsInFixOrder(): KindDefinition[] {
  return [...KINDS].sort((a, b) => a.fixOrder - b.fixOrder);
}

/** The journal document's tag: `kind` = the resource type (written by every handler since this version). */
export const DOC_KIND_FIELD = 'kind';

/**
 * The kind a journal document is tagged with, or undefined for an untagged document (written by an older version)
 * or a tag that names no kind of this library.
 */
export function taggedKind(doc: unknown): KindType | undefined {
  if (!doc || typeof doc !== 'object') return undefined;
  const tag = (doc as Record<string, unknown>)[DOC_KIND_FIELD];
  return isKindType(tag) ? tag : undefined;
}

/** The document with its kind tag (an object document; anything else is returned as it is). */
export function tagDoc<D>(doc: D, type: KindType): D {
  if (!doc || typeof doc !== 'object' || Array.isArray(doc)) return doc;
  return { ...doc, [DOC_KIND_FIELD]: type };
}
