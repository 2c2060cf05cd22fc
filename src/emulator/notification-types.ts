/**
 * The emulator's catalogue of marketplace notification types.
 *
 * The specification names the types but does not say which account type each
 * is valid for, nor which delivery path it uses. The emulator's choice is
 * documented in docs/emulator.md and exported here so tests and tools can
 * rely on it.
 */

/** `seller` (remote identity type 17) or `vendor` (type 18). */
export type AccountType = 'seller' | 'vendor';

/** `eventbridge`: event-bus path (rule + target into the delivery stream); `sqs`: queue path (source queue + pipe). */
export type DeliveryPath = 'eventbridge' | 'sqs';

export interface NotificationTypeInfo {
  readonly name: string;
  readonly accountTypes: readonly AccountType[];
  readonly path: DeliveryPath;
}

export const NOTIFICATION_TYPES: readonly NotificationTypeInfo[] = [
  { name: 'ORDER_CHANGE', accountTypes: ['seller'], path: 'eventbridge' },
  { name: 'FEED_PROCESSING_FINISHED', accountTypes: ['seller'], path: 'sqs' },
  { name: 'REPORT_PROCESSING_FINISHED', accountTypes: ['seller', 'vendor'], path: 'sqs' },
  { name: 'LISTINGS_ITEM_STATUS_CHANGE', accountTypes: ['seller'], path: 'eventbridge' },
  { name: 'LISTINGS_ITEM_ISSUES_CHANGE', accountTypes: ['seller'], path: 'eventbridge' },
  { name: 'PRODUCT_TYPE_DEFINITIONS_CHANGE', accountTypes: ['seller'], path: 'eventbridge' },
  { name: 'FBA_INVENTORY_AVAILABILITY_CHANGES', accountTypes: ['seller'], path: 'eventbridge' },
  { name: 'DETAIL_PAGE_TRAFFIC_EVENT', accountTypes: ['vendor'], path: 'eventbridge' },
  { name: 'ITEM_INVENTORY_EVENT_CHANGE', accountTypes: ['vendor'], path: 'eventbridge' },
  { name: 'ITEM_SALES_EVENT_CHANGE', accountTypes: ['vendor'], path: 'eventbridge' },
];

/** Type names valid for an account type, in catalogue order. */
export function notificationTypesFor(accountType: AccountType): string[] {
  return NOTIFICATION_TYPES.filter((t) => t.accountTypes.includes(accountType)).map((t) => t.name);
}

/** The catalogue entry of a type name, or undefined. */
export function notificationTypeInfo(name: string): NotificationTypeInfo | undefined {
  return NOTIFICATION_TYPES.find((t) => t.name === name);
}

/** Whether `name` is valid for `accountType`. */
export function isValidNotificationType(name: string, accountType: AccountType): boolean {
  const info = notificationTypeInfo(name);
  return info !== undefined && info.accountTypes.includes(accountType);
}

/** The delivery path of a type (undefined when unknown). */
export function deliveryPathOf(name: string): DeliveryPath | undefined {
  return notificationTypeInfo(name)?.path;
}

/** Remote identity type IDs: 17 = seller, 18 = vendor. */
export const SELLER_IDENTITY_TYPE = 17;
export const VENDOR_IDENTITY_TYPE = 18;

/** Account type of a remote identity type (legacy rule: type 17 = seller, anything else vendor). */
export function accountTypeOfIdentityType(typeId: number): AccountType {
  return typeId === SELLER_IDENTITY_TYPE ? 'seller' : 'vendor';
}
