/** The resource policy `LifecycleJournal` synthesizes, as DynamoDB returns it (shared by the declared-journal tests). */
import { App, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { LifecycleJournal } from '../../src';

/** A template value as CloudFormation resolves it in account 123456789012 of us-east-1. */
function cfn(v: unknown): unknown {
  const pseudo: Record<string, string> = { 'AWS::Partition': 'aws', 'AWS::AccountId': '123456789012', 'AWS::Region': 'us-east-1' };
  if (Array.isArray(v)) return v.map(cfn);
  if (v === null || typeof v !== 'object') return v;
  const o = v as Record<string, unknown>;
  if (typeof o.Ref === 'string' && pseudo[o.Ref]) return pseudo[o.Ref];
  if (o['Fn::Join']) {
    const [sep, parts] = o['Fn::Join'] as [string, unknown[]];
    return parts.map((p) => String(cfn(p))).join(sep);
  }
  if (typeof o['Fn::Sub'] === 'string') return (o['Fn::Sub'] as string).replace(/\$\{([^}]+)\}/g, (_, k: string) => pseudo[k]);
  return Object.fromEntries(Object.entries(o).map(([k, x]) => [k, cfn(x)]));
}

/** The resource policy LifecycleJournal synthesizes for `table`, as DynamoDB returns it. */
export function constructPolicy(table: string, maintainerArns?: string[]): string {
  const stack = new Stack(new App(), 'Journal', { env: { account: '123456789012', region: 'us-east-1' }, terminationProtection: true });
  new LifecycleJournal(stack, 'Journal', { tableName: table, maintainerArns });
  const [t] = Object.values(Template.fromStack(stack).findResources('AWS::DynamoDB::Table'));
  return JSON.stringify(cfn(stack.resolve(t.Properties.ResourcePolicy.PolicyDocument)));
}
