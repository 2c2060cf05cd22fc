export * from './connection/service-connection';
export * from './notifications/notification-type';
export * from './notifications/notification-pipeline-roles';
export * from './kinds/registry/constructs';
export * from './notifications/notification-pipeline-fleet';
export { NotificationPipelineFleetAlarmOptions } from './notifications/fleet-alarms';
export * from './monitoring/subscription-monitor';
export * from './monitoring/monitor-source';
export * from './monitoring/drift-monitor';
