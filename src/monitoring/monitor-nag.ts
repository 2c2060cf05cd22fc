import { IConstruct } from 'constructs';
import { acknowledge, acknowledgeCompliance } from '../connection/nag';

/** cdk-nag acknowledgements of the monitor's function, log group and role. */
export function acknowledgeMonitor(fn: IConstruct, logGroup: IConstruct, role: IConstruct): void {
  acknowledgeCompliance(fn, 'LambdaDLQ', 'Invoked by its schedule: a failed run raises the FunctionErrors alarm and the next run repeats the read; a dead-letter queue would hold nothing to redeliver.');
  acknowledgeCompliance(fn, 'LambdaConcurrency', 'One run per interval; reserved concurrency would take capacity from the account for a function idle between runs.');
  acknowledgeCompliance(fn, 'LambdaInsideVPC', 'It calls the service\'s public HTTPS interface and Secrets Manager; nothing inside a VPC.');
  acknowledgeCompliance(logGroup, 'CloudWatchLogGroupEncrypted', 'Encrypted at rest with service-managed keys; the lines hold metrics and no secret.');
  acknowledgeCompliance(role, 'IAMNoInlinePolicy', 'Grants made for this role alone (its log group and the refresh token secret).');
  acknowledge(fn, 'Serverless-LambdaDLQ', 'Invoked by its schedule: a failed run raises the FunctionErrors alarm and the next run repeats the read.');
  acknowledge(fn, 'Serverless-LambdaTracing', 'Every run and every service call is one JSON log line, next to the metric lines.');
}
