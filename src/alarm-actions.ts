import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as cwActions from 'aws-cdk-lib/aws-cloudwatch-actions';
import * as sns from 'aws-cdk-lib/aws-sns';
import { acknowledgeCompliance } from './connection/nag';

/**
 * Lets `topic` hear an alarm (alarm and OK). Without a topic the alarm only shows its state, and the compliance packs'
 * missing-action finding is acknowledged with the way to add one.
 */
export function notifyOrAcknowledge(alarm: cloudwatch.Alarm, topic: sns.ITopic | undefined): void {
  if (topic) {
    alarm.addAlarmAction(new cwActions.SnsAction(topic));
    alarm.addOkAction(new cwActions.SnsAction(topic));
    return;
  }
  acknowledgeCompliance(alarm, 'CloudWatchAlarmAction', 'Declared without alarmTopic: the alarm shows its state in the console and on the '
    + 'dashboard. Give alarmTopic, or add an action to the returned alarms, to be notified.');
}
