/** `dpi drift --fix` of `Custom::DpiHistoryRequest`: none (a history request cannot be changed). */
import { unchangeable } from '../../../handler/repair-common';

/** The repair of a history request: says why there is none. */
export const historyRepair = unchangeable('a history request cannot be changed: redeploy with a new one (another construct ID) or remove it from the app');
