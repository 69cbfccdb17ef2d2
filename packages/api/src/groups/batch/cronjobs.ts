/**
 * CronJobs as kube-apiserver 1.24 serves them (pkg/registry/batch/cronjob): batch/v1 (storage)
 * and batch/v1beta1 (deprecated in 1.21, removed in 1.25; kube's warning names batch/v1 CronJob),
 * short name `cj`, category `all`, `status`. The two versions have the same fields: conversion is
 * the apiVersion. Defaults: concurrencyPolicy Allow, suspend false, 3 successful and 1 failed
 * jobs kept. `timeZone` is dropped (CronJobTimeZone is off in 1.24); the schedule is checked as
 * robfig/cron's ParseStandard (a `TZ=` prefix naming a known zone parses, as in kube 1.24).
 * A delete naming no policy orphans the jobs on batch/v1beta1.
 */
import { deprecationWarning, type ResourceDefinition, type ResourceStrategy } from '../../catalog.js';
import { type FieldError, fieldErr } from '../../field-errors.js';
import { age, ageColumn, col, containerCells, fieldAt, nameColumn, type TableDefinition } from '../../tables.js';
import type { StoredObject } from '../../types.js';
import { defineResource } from '../define.js';
import { type JsonObject, asObject, defaultNil, formatLabelSelector, goLabelSelector, specOf, statusStrategy, templateOptions, validateNonnegativeField, workloadPrepare } from '../apps/shared.js';
import { cronScheduleError } from './cron.js';
import { setDefaultsJobSpec, validateJobSpecCommon } from './jobs.js';

const TEMPLATE = ['spec', 'jobTemplate', 'spec', 'template'] as const;

function setDefaultsCronJob(obj: JsonObject): void {
  const spec = specOf(obj);
  if (!spec['concurrencyPolicy']) spec['concurrencyPolicy'] = 'Allow';
  defaultNil(spec, 'suspend', false);
  defaultNil(spec, 'successfulJobsHistoryLimit', 3);
  defaultNil(spec, 'failedJobsHistoryLimit', 1);
  // The job template's spec gets the Job defaults (SetObjectDefaults_CronJob walks into it).
  const jt = asObject(spec['jobTemplate']);
  if (jt) {
    if (!asObject(jt['spec'])) jt['spec'] = {};
    setDefaultsJobSpec(jt['spec'] as JsonObject);
  }
}

function validateCronJobSpec(obj: JsonObject, old?: JsonObject): FieldError[] {
  const spec = asObject(obj['spec']) ?? {};
  const errs: FieldError[] = [];
  const schedule = typeof spec['schedule'] === 'string' ? spec['schedule'] : '';
  if (schedule === '') errs.push(fieldErr.required('spec.schedule'));
  else {
    const err = cronScheduleError(schedule);
    if (err) errs.push(fieldErr.invalid('spec.schedule', schedule, err));
  }
  if (spec['startingDeadlineSeconds'] != null) errs.push(...validateNonnegativeField(spec['startingDeadlineSeconds'], 'spec.startingDeadlineSeconds'));
  const cp = spec['concurrencyPolicy'] ?? '';
  if (cp === '') errs.push(fieldErr.required('spec.concurrencyPolicy'));
  else if (cp !== 'Allow' && cp !== 'Forbid' && cp !== 'Replace') errs.push(fieldErr.notSupported('spec.concurrencyPolicy', cp, ['Allow', 'Forbid', 'Replace']));
  // ValidateJobTemplateSpec: the job spec rules, no selector of its own, no manualSelector.
  const jobSpec = asObject(fieldAt(spec, 'jobTemplate', 'spec')) ?? {};
  errs.push(...validateJobSpecCommon(jobSpec, 'spec.jobTemplate.spec', templateOptions(obj, old, TEMPLATE)));
  if (jobSpec['selector'] != null) errs.push(fieldErr.invalid('spec.jobTemplate.spec.selector', goLabelSelector(jobSpec['selector']), '`selector` will be auto-generated'));
  if (jobSpec['manualSelector'] === true) errs.push(fieldErr.notSupported('spec.jobTemplate.spec.manualSelector', true, ['nil', 'false']));
  for (const k of ['successfulJobsHistoryLimit', 'failedJobsHistoryLimit']) if (spec[k] != null) errs.push(...validateNonnegativeField(spec[k], `spec.${k}`));
  return errs;
}

const prepare = workloadPrepare('io.k8s.api.batch.v1.CronJobStatus', TEMPLATE);

/** CronJobTimeZone is off in 1.24: `spec.timeZone` is kept only when the old object had one. */
function dropTimeZone(obj: JsonObject, old?: JsonObject): void {
  if (fieldAt(old, 'spec', 'timeZone') == null) delete specOf(obj)['timeZone'];
}

const cronJobStrategy: ResourceStrategy = {
  defaults: setDefaultsCronJob,
  prepareForCreate(obj) {
    dropTimeZone(obj);
    prepare.prepareForCreate!(obj);
  },
  prepareForUpdate(obj, old) {
    dropTimeZone(obj, old);
    prepare.prepareForUpdate!(obj, old);
  },
  validate: (obj) => {
    const errs = validateCronJobSpec(obj);
    // ValidateCronJob: room for the 11 characters the controller appends to job names.
    const name = obj.metadata.name ?? '';
    if (name.length > 52) errs.push(fieldErr.invalid('metadata.name', name, 'must be no more than 52 characters'));
    return errs;
  },
  validateUpdate: (obj, old) => validateCronJobSpec(obj, old),
  validateOnUpdate: false,
  defaultGarbageCollectionPolicy: ({ version }) => (version === 'v1beta1' ? 'OrphanDependents' : 'DeleteDependents'),
};

const cronJobTable: TableDefinition = {
  columns: [
    nameColumn,
    col('Schedule', 'string', 'The schedule in cron format.'),
    col('Suspend', 'boolean', 'Whether new runs are held back.'),
    col('Active', 'integer', 'The number of running jobs.'),
    col('Last Schedule', 'string', 'The time since the job was last scheduled.'),
    ageColumn,
    col('Containers', 'string', 'The names of the containers in the template.', { priority: 1 }),
    col('Images', 'string', 'The images of the containers in the template.', { priority: 1 }),
    col('Selector', 'string', 'The label selector of the pods.', { priority: 1 }),
  ],
  cells: (obj, now) => {
    const [names, images] = containerCells(fieldAt(obj, ...TEMPLATE, 'spec', 'containers'));
    const suspend = fieldAt(obj, 'spec', 'suspend');
    const last = fieldAt(obj, 'status', 'lastScheduleTime');
    const active = fieldAt(obj, 'status', 'active');
    return [
      obj.metadata.name ?? '',
      String(fieldAt(obj, 'spec', 'schedule') ?? ''),
      typeof suspend === 'boolean' ? (suspend ? 'True' : 'False') : '<unset>', // kube's printBoolPtr
      Array.isArray(active) ? active.length : 0,
      typeof last === 'string' ? age({ metadata: { creationTimestamp: last } } as StoredObject, now) : '<none>',
      age(obj, now),
      names,
      images,
      formatLabelSelector(fieldAt(obj, 'spec', 'jobTemplate', 'spec', 'selector')),
    ];
  },
};

const common = {
  group: 'batch',
  kind: 'CronJob',
  plural: 'cronjobs',
  shortNames: ['cj'],
  categories: ['all'],
  namespaced: true,
  description: 'A CronJob creates Jobs on a repeating schedule.',
  strategy: cronJobStrategy,
  subresources: [{ name: 'status', verbs: ['get', 'patch', 'update'] as ('get' | 'patch' | 'update')[], strategy: statusStrategy(() => []) }],
  table: cronJobTable,
};

export const cronjobsV1 = defineResource({ ...common, version: 'v1' });

/** batch/v1beta1 and batch/v1 CronJobs have the same fields: only apiVersion changes (kube's generated conversions). */
function withApiVersion(obj: StoredObject, apiVersion: string): StoredObject {
  return { ...obj, apiVersion, kind: 'CronJob' };
}

export const cronjobsV1beta1: ResourceDefinition = defineResource({
  ...common,
  version: 'v1beta1',
  deprecation: deprecationWarning({ group: 'batch', version: 'v1beta1', kind: 'CronJob' }, '1.21', '1.25', { group: 'batch', version: 'v1', kind: 'CronJob' }),
  conversion: { storage: cronjobsV1, toStorage: (o) => withApiVersion(o, 'batch/v1'), fromStorage: (o) => withApiVersion(o, 'batch/v1beta1') },
});
