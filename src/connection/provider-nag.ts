import * as iam from 'aws-cdk-lib/aws-iam';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as logs from 'aws-cdk-lib/aws-logs';
import * as cr from 'aws-cdk-lib/custom-resources';
import { acknowledge, acknowledgeCompliance } from './nag';

/**
 * Acknowledgements (HIPAA Security, NIST 800-53 R5, Serverless) of a deploy-time function of the provider: what it
 * does not have and why. Each names the rule and the resource.
 */
export function acknowledgeDeployTimeFunction(fn: lambda.Function, dlqReason: string, inVpc: boolean): void {
  acknowledgeCompliance(fn, 'LambdaDLQ', `A deploy-time function: ${dlqReason}.`);
  acknowledgeCompliance(fn, 'LambdaConcurrency', 'A deploy-time function run once per resource event; reserved concurrency would take capacity from the '
    + 'account for functions that are idle between deployments, and CloudFormation already bounds how many run at once.');
  if (!inVpc) {
    acknowledgeCompliance(fn, 'LambdaInsideVPC', 'It calls the service\'s public HTTPS interface and AWS APIs (Secrets Manager, DynamoDB, IAM, STS) and '
      + 'reaches no resource inside a VPC; a VPC would need a NAT gateway or endpoints for no gain.');
  }
  acknowledge(fn, 'Serverless-LambdaDLQ', `A deploy-time function: ${dlqReason}.`);
  acknowledge(fn, 'Serverless-LambdaTracing', 'A deploy-time function: every event and every service call is logged as one JSON line (request ID, '
    + 'path, status, duration), which is what an operator reads; X-Ray traces would add cost and wildcard permissions.');
}

/** Acknowledgements of the provider's log groups for the HIPAA Security and NIST 800-53 R5 packs. */
export function acknowledgeLogGroup(group: logs.LogGroup): void {
  acknowledgeCompliance(group, 'CloudWatchLogGroupEncrypted', 'CloudWatch Logs encrypts these logs at rest with service-managed keys; '
    + 'they hold no secret (the handler redacts the refresh token and tokens from every line and reason), so a customer-managed key '
    + 'would add cost and a key policy without protecting more.');
}

/** Acknowledgements of inline policies (grants) on the provider's roles for the HIPAA Security and NIST 800-53 R5 packs. */
export function acknowledgeInlinePolicies(role: iam.Role): void {
  acknowledgeCompliance(role, 'IAMNoInlinePolicy', 'The policy is made by aws-cdk-lib grants for this role alone and names only this stack\'s '
    + 'resources; an inline policy cannot be attached to another principal, which a managed policy could.');
}

/** The aws-cdk-lib provider framework's functions of `provider`: their memory, and what cdk-nag cannot ask of them. */
export function acknowledgeFrameworkFunctions(provider: cr.Provider, inVpc: boolean): void {
  for (const child of provider.node.children) {
    if (child instanceof lambda.Function) {
      acknowledge(child, 'AwsSolutions-L1', 'The runtime of the aws-cdk-lib custom-resources framework functions is chosen by aws-cdk-lib and cannot be set; the handler itself runs on the newest Node.js runtime.');
      acknowledge(child, 'Serverless-LambdaLatestVersion', 'The runtime of the aws-cdk-lib custom-resources framework functions is chosen by aws-cdk-lib and cannot be set; the handler itself runs on the newest Node.js runtime.');
      // The framework's default (128 MB) is what the Serverless pack flags; its functions only relay events.
      (child.node.defaultChild as lambda.CfnFunction).memorySize = 256;
      acknowledgeDeployTimeFunction(child, child.node.id === 'framework-onEvent'
        ? 'invoked asynchronously by CloudFormation; the framework reports every outcome, failures included, to the stack\'s response URL, '
          + 'so a dead-letter queue would hold nothing that CloudFormation does not already show (and end with its timeout)'
        : 'invoked synchronously by the waiter state machine, which reports failures to CloudFormation; a dead-letter queue would never receive an event',
      inVpc);
    }
  }
}
