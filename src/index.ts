export * from './connection/service-connection';
export * from './notifications/notification-type';
export * from './notifications/notification-pipeline-roles';
export * from './notifications/notification-pipeline';
export * from './notifications/legacy-notification-pipeline';
export * from './subscriptions/subscription';
export * from './subscriptions/history-request';
export * from './subscriptions/product-order-jobs';
