/**
 * batch/v1 Jobs as kube-apiserver 1.24 serves them (pkg/registry/batch/job): category `all`,
 * `status`. Defaults (SetDefaults_Job): completions and parallelism 1, backoffLimit 6,
 * completionMode NonIndexed, suspend false, the Job's labels from its template's when it has none.
 * Unless `manualSelector`, the `controller-uid` selector and the `controller-uid`/`job-name`
 * template labels are generated. The template, completions, selector and completionMode are
 * immutable (1.24's JobMutableNodeSchedulingDirectives is off). restartPolicy Never or OnFailure.
 * A delete naming no policy orphans the pods on batch/v1. Field selector `status.successful`.
 */
import type { ResourceStrategy } from '../../catalog.js';
import { type FieldError, fieldErr } from '../../field-errors.js';
import { age, ageColumn, col, containerCells, fieldAt, humanDuration, nameColumn, type TableDefinition } from '../../tables.js';
import type { StoredObject } from '../../types.js';
import { validateDNS1123Label } from '../core/validation/basic.js';
import { validatePodTemplateSpec } from '../core/validation/pod-template.js';
import { defineResource } from '../define.js';
import {
  type JsonObject, type PodValidationOptions, asObject, defaultNil, formatLabelSelector, goLabelSelector, int, num, semanticEqual, selectorMatchesTemplate, setDefaultsTemplate, specOf, statusStrategy,
  templateLabelsValue, templateOptions, validateLabelSelector, validateNonnegativeField, workloadPrepare,
} from '../apps/shared.js';
import { str } from '../core/validation/access.js';

const MAX_PARALLELISM_FOR_INDEXED_JOB = 100000;

/** SetDefaults_Job and the template's defaults. */
export function setDefaultsJobSpec(spec: JsonObject): void {
  if (spec['completions'] == null && spec['parallelism'] == null) {
    spec['completions'] = 1;
    spec['parallelism'] = 1;
  }
  defaultNil(spec, 'parallelism', 1);
  defaultNil(spec, 'backoffLimit', 6);
  defaultNil(spec, 'completionMode', 'NonIndexed');
  defaultNil(spec, 'suspend', false);
  setDefaultsTemplate(spec['template']);
}

/** kube's validateJobSpec (shared by Jobs and CronJobs' job templates). */
export function validateJobSpecCommon(specValue: unknown, path: string, opts: PodValidationOptions): FieldError[] {
  const spec = asObject(specValue) ?? {};
  const errs: FieldError[] = [];
  for (const k of ['parallelism', 'completions', 'activeDeadlineSeconds', 'backoffLimit', 'ttlSecondsAfterFinished']) if (spec[k] != null) errs.push(...validateNonnegativeField(spec[k], `${path}.${k}`));
  const mode = spec['completionMode'];
  if (mode != null) {
    if (mode !== 'NonIndexed' && mode !== 'Indexed') errs.push(fieldErr.notSupported(`${path}.completionMode`, mode, ['NonIndexed', 'Indexed']));
    if (mode === 'Indexed') {
      if (spec['completions'] == null) errs.push(fieldErr.required(`${path}.completions`, 'when completion mode is Indexed'));
      if (spec['parallelism'] != null && num(spec['parallelism']) > MAX_PARALLELISM_FOR_INDEXED_JOB) {
        errs.push(fieldErr.invalid(`${path}.parallelism`, spec['parallelism'], `must be less than or equal to ${MAX_PARALLELISM_FOR_INDEXED_JOB} when completion mode is Indexed`));
      }
    }
  }
  errs.push(...validatePodTemplateSpec(spec['template'], `${path}.template`, opts));
  const rp = str(fieldAt(spec, 'template', 'spec', 'restartPolicy'));
  if (rp === 'Always' || rp === '') errs.push(fieldErr.required(`${path}.template.spec.restartPolicy`, 'valid values: "OnFailure", "Never"'));
  else if (rp !== 'OnFailure' && rp !== 'Never') errs.push(fieldErr.notSupported(`${path}.template.spec.restartPolicy`, rp, ['OnFailure', 'Never']));
  return errs;
}

/** kube's generateSelector: the controller-uid selector and the template's job-name/controller-uid labels. */
function generateSelector(job: StoredObject): void {
  const spec = specOf(job);
  if (!asObject(spec['template'])) spec['template'] = {};
  const t = spec['template'] as JsonObject;
  if (!asObject(t['metadata'])) t['metadata'] = {};
  const meta = t['metadata'] as JsonObject;
  if (!asObject(meta['labels'])) meta['labels'] = {};
  const labels = meta['labels'] as Record<string, string>;
  labels['job-name'] ??= job.metadata.name ?? '';
  labels['controller-uid'] ??= job.metadata.uid ?? '';
  if (!asObject(spec['selector'])) spec['selector'] = {};
  const sel = spec['selector'] as JsonObject;
  if (!asObject(sel['matchLabels'])) sel['matchLabels'] = {};
  const ml = sel['matchLabels'] as Record<string, string>;
  ml['controller-uid'] ??= job.metadata.uid ?? '';
}

/** kube's ValidateGeneratedSelector: with manualSelector nothing; otherwise the generated labels must be there. */
function validateGeneratedSelector(job: StoredObject): FieldError[] {
  if (fieldAt(job, 'spec', 'manualSelector') === true) return [];
  const sel = asObject(fieldAt(job, 'spec', 'selector'));
  if (!sel) return [];
  const uid = job.metadata.uid ?? '';
  const errs: FieldError[] = [];
  const labels = asObject(fieldAt(job, 'spec', 'template', 'metadata', 'labels')) ?? {};
  if (labels['controller-uid'] !== uid) errs.push(fieldErr.invalid('spec.template.metadata.labels', templateLabelsValue(fieldAt(job, 'spec', 'template')), '`selector` not auto-generated'));
  const ml = asObject(sel['matchLabels']) ?? {};
  if (ml['controller-uid'] !== uid) errs.push(fieldErr.invalid('spec.selector.matchLabels', goLabelSelector(sel), '`selector` not auto-generated'));
  return errs;
}

/** kube's ValidateJobSpec: the common rules, a required selector matching the template. */
function validateJobSpec(specValue: unknown, template: unknown, opts: PodValidationOptions): FieldError[] {
  const spec = asObject(specValue) ?? {};
  const errs = validateJobSpecCommon(spec, 'spec', opts);
  if (spec['selector'] == null) errs.push(fieldErr.required('spec.selector'));
  else errs.push(...validateLabelSelector(spec['selector'], 'spec.selector'));
  const m = selectorMatchesTemplate(spec['selector'], template);
  if (spec['selector'] != null && m.parsed && !m.matches) errs.push(fieldErr.invalid('spec.template.metadata.labels', templateLabelsValue(template), '`selector` does not match template `labels`'));
  return errs;
}

function validateJob(job: StoredObject, opts: PodValidationOptions): FieldError[] {
  const errs = [...validateGeneratedSelector(job), ...validateJobSpec(job['spec'], fieldAt(job, 'spec', 'template'), opts)];
  const ann = job.metadata.annotations ?? {};
  // JobTrackingWithFinalizers is off in 1.24: the annotation may not be added.
  if (Object.hasOwn(ann, 'batch.kubernetes.io/job-tracking')) errs.push(fieldErr.forbidden('metadata.annotations[batch.kubernetes.io/job-tracking]', 'cannot add this annotation'));
  const completions = fieldAt(job, 'spec', 'completions');
  if (fieldAt(job, 'spec', 'completionMode') === 'Indexed' && typeof completions === 'number' && completions > 0) {
    const host = `${job.metadata.name ?? ''}-${completions - 1}`;
    if (validateDNS1123Label(host, '').length > 0) errs.push(fieldErr.invalid('metadata.name', job.metadata.name ?? '', `will not able to create pod with invalid DNS label: ${host}`));
  }
  return errs;
}

function immutable(obj: JsonObject, old: JsonObject, key: string): FieldError[] {
  const v = fieldAt(obj, 'spec', key);
  if (semanticEqual(v, fieldAt(old, 'spec', key))) return [];
  return [fieldErr.invalid(`spec.${key}`, key === 'selector' ? goLabelSelector(v) : (v ?? null), 'field is immutable')];
}

const prepare = workloadPrepare('io.k8s.api.batch.v1.JobStatus');

const jobStrategy: ResourceStrategy = {
  defaults(obj) {
    const spec = specOf(obj);
    const labels = asObject(fieldAt(spec, 'template', 'metadata', 'labels'));
    if (labels && Object.keys(obj.metadata?.labels ?? {}).length === 0) obj.metadata = { ...(obj.metadata ?? {}), labels: { ...(labels as Record<string, string>) } };
    setDefaultsJobSpec(spec);
  },
  prepareForCreate(obj) {
    prepare.prepareForCreate!(obj);
    if (fieldAt(obj, 'spec', 'manualSelector') !== true) generateSelector(obj);
  },
  prepareForUpdate: prepare.prepareForUpdate!,
  validate: (obj) => validateJob(obj, templateOptions(obj)),
  // kube: ValidateJob, then ValidateJobUpdate (the spec again and the immutable fields).
  validateUpdate: (obj, old) => {
    const opts = templateOptions(obj, old);
    return [
      ...validateJobSpec(obj['spec'], fieldAt(obj, 'spec', 'template'), opts),
      ...immutable(obj, old, 'completions'),
      ...immutable(obj, old, 'selector'),
      ...(semanticEqual(fieldAt(obj, 'spec', 'template'), fieldAt(old, 'spec', 'template')) ? [] : [fieldErr.invalid('spec.template', fieldAt(obj, 'spec', 'template'), 'field is immutable')]),
      ...immutable(obj, old, 'completionMode'),
    ];
  },
  defaultGarbageCollectionPolicy: ({ version }) => (version === 'v1' ? 'OrphanDependents' : 'DeleteDependents'),
};

function validateJobStatusUpdate(obj: JsonObject): FieldError[] {
  const st = asObject(obj['status']) ?? {};
  const errs: FieldError[] = [];
  for (const k of ['active', 'succeeded', 'failed']) errs.push(...validateNonnegativeField(st[k] ?? 0, `status.${k}`));
  if (st['ready'] != null) errs.push(...validateNonnegativeField(st['ready'], 'status.ready'));
  const uncounted = asObject(st['uncountedTerminatedPods']);
  if (uncounted) {
    const seen = new Set<string>();
    for (const k of ['succeeded', 'failed']) {
      const list = Array.isArray(uncounted[k]) ? (uncounted[k] as unknown[]) : [];
      list.forEach((uid, i) => {
        const p = `status.uncountedTerminatedPods.${k}[${i}]`;
        if (uid === '' || uid == null) errs.push(fieldErr.invalid(p, '', 'must not be empty'));
        else if (seen.has(String(uid))) errs.push(fieldErr.duplicate(p, uid));
        else seen.add(String(uid));
      });
    }
  }
  return errs;
}

/** printJob's COMPLETIONS cell. */
function completionsCell(obj: JsonObject): string {
  const succeeded = int(fieldAt(obj, 'status', 'succeeded'));
  const completions = fieldAt(obj, 'spec', 'completions');
  if (typeof completions === 'number') return `${succeeded}/${completions}`;
  const parallelism = int(fieldAt(obj, 'spec', 'parallelism'));
  return parallelism > 1 ? `${succeeded}/1 of ${parallelism}` : `${succeeded}/1`;
}

function durationCell(obj: JsonObject, now: number): string {
  const start = fieldAt(obj, 'status', 'startTime');
  if (typeof start !== 'string') return '';
  const end = fieldAt(obj, 'status', 'completionTime');
  return humanDuration((typeof end === 'string' ? Date.parse(end) : now) - Date.parse(start));
}

const jobTable: TableDefinition = {
  columns: [
    nameColumn,
    col('Completions', 'string', 'The succeeded pods out of the wanted completions.'),
    col('Duration', 'string', 'The time the job took to complete.'),
    ageColumn,
    col('Containers', 'string', 'The names of the containers in the template.', { priority: 1 }),
    col('Images', 'string', 'The images of the containers in the template.', { priority: 1 }),
    col('Selector', 'string', 'The label selector of the pods.', { priority: 1 }),
  ],
  cells: (obj, now) => {
    const [names, images] = containerCells(fieldAt(obj, 'spec', 'template', 'spec', 'containers'));
    return [obj.metadata.name ?? '', completionsCell(obj), durationCell(obj, now), age(obj, now), names, images, formatLabelSelector(fieldAt(obj, 'spec', 'selector'))];
  },
};

export const jobs = defineResource({
  group: 'batch',
  version: 'v1',
  kind: 'Job',
  plural: 'jobs',
  categories: ['all'],
  namespaced: true,
  description: 'A Job runs pods until a number of them complete successfully.',
  strategy: jobStrategy,
  subresources: [{ name: 'status', verbs: ['get', 'patch', 'update'], strategy: statusStrategy(validateJobStatusUpdate) }],
  table: jobTable,
  fieldSelector: {
    labels: ['metadata.name', 'metadata.namespace', 'status.successful'],
    fields: (obj, out) => {
      out['status.successful'] = String(int(fieldAt(obj, 'status', 'succeeded')));
    },
  },
});

