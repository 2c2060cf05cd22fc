import { Aspects, CfnResource, IAspect, Stack, Validations } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import { IConstruct } from 'constructs';

/**
 * Acknowledgements of cdk-nag findings on resources that this library owns
 * (internal). cdk-nag is not a dependency: acknowledgements are recorded
 * with CDK's `Validations` metadata, which cdk-nag 3 reads.
 *
 * Only findings that match an expected pattern are acknowledged, each one
 * individually and with a reason; anything else stays visible.
 */

/** Record an acknowledgement (works for finding IDs that contain `::`, which `Validations.acknowledge` rejects). */
export function acknowledge(scope: IConstruct, id: string, reason: string): void {
  if (id.split('::').length <= 2 && !id.includes('[')) {
    Validations.of(scope).acknowledge({ id, reason });
    return;
  }
  scope.node.addMetadata(Validations.ACKNOWLEDGED_RULES_METADATA_KEY, { [id]: reason });
}

/** The compliance packs whose rules of the same name give the same findings (HIPAA Security, NIST 800-53 R5). */
const COMPLIANCE_PACKS = ['HIPAA.Security', 'NIST.800.53.R5'];

/** Acknowledge rule `<pack>-<rule>` of both compliance packs on `scope`, with one reason. */
export function acknowledgeCompliance(scope: IConstruct, rule: string, reason: string): void {
  for (const pack of COMPLIANCE_PACKS) acknowledge(scope, `${pack}-${rule}`, reason);
}

/** A wildcard resource pattern and why it is acceptable. */
export interface WildcardRule {
  /** Matches the flattened resource (cdk-nag form, e.g. `arn:<AWS::Partition>:sqs:us-east-1:123:spapi-*`). */
  readonly pattern: RegExp;
  readonly reason: string;
}

/**
 * Acknowledge `AwsSolutions-IAM5[Resource::...]` findings of the IAM policies
 * and roles under `scope` whose wildcard resources match one of `rules`.
 * Runs as an aspect, after every grant has been added.
 */
export function acknowledgeWildcards(scope: IConstruct, rules: WildcardRule[]): void {
  Aspects.of(scope).add(new WildcardAcknowledger(rules));
}

class WildcardAcknowledger implements IAspect {
  constructor(private readonly rules: WildcardRule[]) {}

  public visit(node: IConstruct): void {
    if (!(node instanceof CfnResource)) {
      return;
    }
    const stack = Stack.of(node);
    const documents: unknown[] = [];
    if (node instanceof iam.CfnPolicy) {
      documents.push(stack.resolve(node.policyDocument));
    } else if (node instanceof iam.CfnRole) {
      const policies = stack.resolve(node.policies) as Array<{ policyDocument?: unknown; PolicyDocument?: unknown }> | undefined;
      for (const policy of policies ?? []) {
        documents.push(stack.resolve(policy.policyDocument ?? policy.PolicyDocument));
      }
    } else {
      return;
    }
    for (const doc of documents) {
      const statements = ((doc as { Statement?: unknown[] } | undefined)?.Statement ?? []) as Array<{ Effect?: string; Resource?: unknown }>;
      for (const statement of statements) {
        if (statement.Effect !== 'Allow') {
          continue;
        }
        const resources = Array.isArray(statement.Resource) ? statement.Resource : [statement.Resource];
        for (const resource of resources) {
          const flat = flatten(resource);
          if (!flat.includes('*')) {
            continue;
          }
          const rule = this.rules.find((r) => r.pattern.test(flat));
          if (rule) {
            acknowledge(node, `AwsSolutions-IAM5[Resource::${flat}]`, rule.reason);
          }
        }
      }
    }
  }
}

/** Flatten a CloudFormation reference the way cdk-nag names findings. */
export function flatten(node: unknown): string {
  if (node === undefined) {
    return '';
  }
  if (typeof node === 'string') {
    return node.replace(/\${/g, '<').replace(/}/g, '>');
  }
  const obj = node as Record<string, unknown>;
  if (obj['Fn::Join']) {
    const [delimiter, items] = obj['Fn::Join'] as [string, unknown[]];
    return items.map(flatten).join(delimiter);
  }
  if (obj['Fn::Sub']) {
    return flatten(obj['Fn::Sub']);
  }
  if (obj['Fn::GetAtt']) {
    const [resource, attribute] = obj['Fn::GetAtt'] as [unknown, unknown];
    return `<${flatten(resource)}.${flatten(attribute)}>`;
  }
  if (obj['Fn::ImportValue']) {
    return flatten(obj['Fn::ImportValue']);
  }
  if (obj.Ref) {
    return `<${flatten(obj.Ref)}>`;
  }
  return JSON.stringify(node);
}
