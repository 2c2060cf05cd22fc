/**
 * The kind of marketplace account a remote identity belongs to.
 */
export enum AccountType {
  /** Seller identity (remote identity type 17). */
  SELLER = 'seller',
  /** Vendor identity (remote identity type 18). */
  VENDOR = 'vendor',
}

/**
 * What a pipeline does when some notification types fail to subscribe
 * (the service answers 207 with a non-empty `failed` map).
 */
export enum PartialFailure {
  /** Undo the pipeline and fail the deployment with the per-type reasons. */
  FAIL = 'FAIL',
  /** Keep the pipeline with the types that succeeded (see `failedTypes`). */
  ALLOW = 'ALLOW',
}

/**
 * The path by which the service receives a notification type upstream.
 *
 * Both paths end in the same delivery stream, shared bucket prefix and
 * object-notification queue; event-bus types additionally need the
 * event-bus-to-delivery-stream role.
 */
export enum NotificationDelivery {
  /** Queue path (the service's own queue destination). */
  QUEUE = 'QUEUE',
  /** Event-bus path (rule + target to the delivery stream; needs `eventBusRoleArn`). */
  EVENT_BUS = 'EVENT_BUS',
}

/**
 * Options of a notification type that is not in the built-in catalogue.
 */
export interface NotificationTypeOptions {
  /**
   * Whether seller identities may subscribe to the type.
   *
   * @default true
   */
  readonly validForSeller?: boolean;

  /**
   * Whether vendor identities may subscribe to the type.
   *
   * @default true
   */
  readonly validForVendor?: boolean;

  /**
   * The delivery path of the type.
   *
   * @default NotificationDelivery.EVENT_BUS (the stricter requirement: the event-bus role must be given)
   */
  readonly delivery?: NotificationDelivery;
}

const NAME_RE = /^[A-Z][A-Z0-9_]*$/;

/**
 * A marketplace notification type (enum-like class).
 *
 * The static members are the types named by the service interface, with the
 * account types they are valid for and their delivery path. Use
 * `NotificationType.of()` for other names.
 */
export class NotificationType {
  /** Detail page traffic (vendor, event bus). */
  public static readonly DETAIL_PAGE_TRAFFIC_EVENT = new NotificationType('DETAIL_PAGE_TRAFFIC_EVENT', false, true, NotificationDelivery.EVENT_BUS);
  /** Feed processing finished (seller, queue). */
  public static readonly FEED_PROCESSING_FINISHED = new NotificationType('FEED_PROCESSING_FINISHED', true, false, NotificationDelivery.QUEUE);
  /** Item inventory change (vendor, event bus). */
  public static readonly ITEM_INVENTORY_EVENT_CHANGE = new NotificationType('ITEM_INVENTORY_EVENT_CHANGE', false, true, NotificationDelivery.EVENT_BUS);
  /** Item sales change (vendor, event bus). */
  public static readonly ITEM_SALES_EVENT_CHANGE = new NotificationType('ITEM_SALES_EVENT_CHANGE', false, true, NotificationDelivery.EVENT_BUS);
  /** Report processing finished (seller and vendor, queue). */
  public static readonly REPORT_PROCESSING_FINISHED = new NotificationType('REPORT_PROCESSING_FINISHED', true, true, NotificationDelivery.QUEUE);
  /** Listings item issues change (seller, event bus). */
  public static readonly LISTINGS_ITEM_ISSUES_CHANGE = new NotificationType('LISTINGS_ITEM_ISSUES_CHANGE', true, false, NotificationDelivery.EVENT_BUS);
  /** Product type definitions change (seller, event bus). */
  public static readonly PRODUCT_TYPE_DEFINITIONS_CHANGE = new NotificationType('PRODUCT_TYPE_DEFINITIONS_CHANGE', true, false, NotificationDelivery.EVENT_BUS);
  /** Order change (seller, event bus). */
  public static readonly ORDER_CHANGE = new NotificationType('ORDER_CHANGE', true, false, NotificationDelivery.EVENT_BUS);
  /** Listings item status change (seller, event bus). */
  public static readonly LISTINGS_ITEM_STATUS_CHANGE = new NotificationType('LISTINGS_ITEM_STATUS_CHANGE', true, false, NotificationDelivery.EVENT_BUS);
  /** FBA inventory availability changes (seller, event bus). */
  public static readonly FBA_INVENTORY_AVAILABILITY_CHANGES = new NotificationType('FBA_INVENTORY_AVAILABILITY_CHANGES', true, false, NotificationDelivery.EVENT_BUS);

  /** Every type of the built-in catalogue. */
  public static all(): NotificationType[] {
    return [
      NotificationType.DETAIL_PAGE_TRAFFIC_EVENT,
      NotificationType.FEED_PROCESSING_FINISHED,
      NotificationType.ITEM_INVENTORY_EVENT_CHANGE,
      NotificationType.ITEM_SALES_EVENT_CHANGE,
      NotificationType.REPORT_PROCESSING_FINISHED,
      NotificationType.LISTINGS_ITEM_ISSUES_CHANGE,
      NotificationType.PRODUCT_TYPE_DEFINITIONS_CHANGE,
      NotificationType.ORDER_CHANGE,
      NotificationType.LISTINGS_ITEM_STATUS_CHANGE,
      NotificationType.FBA_INVENTORY_AVAILABILITY_CHANGES,
    ];
  }

  /**
   * A notification type by name.
   *
   * Without options, a name of the built-in catalogue returns that member;
   * another name is valid for both account types and uses the event-bus path.
   * With options, the given validity and delivery path are used.
   *
   * @param name the type name, upper case (`/^[A-Z][A-Z0-9_]*$/`)
   * @param options validity and delivery path of a type outside the catalogue
   */
  public static of(name: string, options?: NotificationTypeOptions): NotificationType {
    if (typeof name !== 'string' || !NAME_RE.test(name)) {
      throw new Error(`NotificationType.of: name '${String(name)}' is not a notification type name; use upper case letters, digits and underscores, starting with a letter (e.g. ORDER_CHANGE)`);
    }
    const known = NotificationType.all().find((t) => t.name === name);
    if (known && options === undefined) {
      return known;
    }
    return new NotificationType(
      name,
      options?.validForSeller ?? known?.validForSeller ?? true,
      options?.validForVendor ?? known?.validForVendor ?? true,
      options?.delivery ?? known?.delivery ?? NotificationDelivery.EVENT_BUS,
    );
  }

  /** The type name as the service knows it. */
  public readonly name: string;
  /** Whether seller identities may subscribe to the type. */
  public readonly validForSeller: boolean;
  /** Whether vendor identities may subscribe to the type. */
  public readonly validForVendor: boolean;
  /** The delivery path of the type. */
  public readonly delivery: NotificationDelivery;

  private constructor(name: string, validForSeller: boolean, validForVendor: boolean, delivery: NotificationDelivery) {
    this.name = name;
    this.validForSeller = validForSeller;
    this.validForVendor = validForVendor;
    this.delivery = delivery;
  }

  /** Whether the type is valid for the given account type. */
  public isValidFor(accountType: AccountType): boolean {
    return accountType === AccountType.SELLER ? this.validForSeller : this.validForVendor;
  }

  /** The type name. */
  public toString(): string {
    return this.name;
  }
}
