/**
 * CloudFormation template shapes and helpers used by the local runner.
 */

/** A resource of a CloudFormation template. */
export interface TemplateResource {
  readonly Type: string;
  readonly Properties?: Record<string, unknown>;
  readonly DependsOn?: string | string[];
  readonly DeletionPolicy?: string;
  readonly UpdateReplacePolicy?: string;
  readonly Condition?: string;
  readonly Metadata?: Record<string, unknown>;
}

/** A template parameter. */
export interface TemplateParameter {
  readonly Type?: string;
  readonly Default?: unknown;
}

/** A CloudFormation template (the parts the runner reads). */
export interface Template {
  readonly Resources?: Record<string, TemplateResource>;
  readonly Parameters?: Record<string, TemplateParameter>;
  readonly Conditions?: Record<string, unknown>;
  readonly Mappings?: Record<string, Record<string, Record<string, unknown>>>;
  readonly Outputs?: Record<string, { Value: unknown; Export?: { Name: unknown } }>;
}

/** Prefix of the custom resource types served by this library's provider. */
export const DPI_TYPE_PREFIX = 'Custom::Dpi';

/** Whether a resource type is served by this library's provider. */
export function isDpiType(type: string): boolean {
  return type.startsWith(DPI_TYPE_PREFIX);
}

/** Whether a resource type is a custom resource (of any provider). */
export function isCustomType(type: string): boolean {
  return type.startsWith('Custom::') || type === 'AWS::CloudFormation::CustomResource';
}

/** `DependsOn` as a list. */
export function dependsOnList(r: TemplateResource): string[] {
  if (r.DependsOn === undefined) return [];
  return Array.isArray(r.DependsOn) ? [...r.DependsOn] : [r.DependsOn];
}

/** A plain JSON object (not an array, not null). */
export function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
