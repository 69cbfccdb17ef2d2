/**
 * batch: v1 (preferred: jobs, cronjobs) and v1beta1 (cronjobs only, deprecated in 1.21 and removed
 * in 1.25), both CronJob versions stored as batch/v1.
 */
import { defineGroup } from '../define.js';
import { cronjobsV1, cronjobsV1beta1 } from './cronjobs.js';
import { jobs } from './jobs.js';

export const batchGroup = defineGroup({
  group: 'batch',
  versions: [{ version: 'v1' }, { version: 'v1beta1', deprecated: { in: '1.21', removedIn: '1.25' } }],
  resources: [cronjobsV1, jobs, cronjobsV1beta1],
});

export { cronjobsV1, cronjobsV1beta1, jobs };
export { cronScheduleError } from './cron.js';
