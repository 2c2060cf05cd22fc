/** `dpi drift --fix` of `Custom::DpiProductOrderJobs`: none (submitted jobs cannot be changed or re-sent). */
import { unchangeable } from '../../../handler/repair-common';

/** The repair of product order jobs: says why there is none. */
export const orderJobsRepair = unchangeable('submitted jobs cannot be changed or re-sent by drift --fix: the next deploy submits what is missing');
