/**
 * core/v1 PodTemplates as kube-apiserver 1.24 has them (pkg/registry/core/podtemplate): namespaced,
 * every verb, no short name; generation 1 on create and bumped by any change of the template; the
 * printer's NAME, CONTAINERS, IMAGES, POD LABELS (printPodTemplate).
 *
 * Validation is kube's ValidatePodTemplate: object metadata (the generic store), then
 * ValidatePodTemplateSpec on `template`. Until the port of pod spec validation is wired in, the
 * rules here are the template's own metadata and the ephemeral containers ban, with kube's paths
 * (`template.labels`, `template.annotations`: kube names them off the template, not its metadata).
 */
import { isDeepStrictEqual } from 'node:util';
import type { ResourceStrategy } from '../../catalog.js';
import { type FieldError, fieldErr } from '../../field-errors.js';
import { col, containerCells, fieldAt, formatLabels, nameColumn, type TableDefinition } from '../../tables.js';
import type { StoredObject } from '../../types.js';
import { validateAnnotations, validateLabels } from '../../validation.js';
import { defineResource } from '../define.js';

/** The parts of kube's ValidatePodTemplateSpec that need no pod spec validation. */
export function validatePodTemplateSpecMeta(template: unknown, path: string): FieldError[] {
  const errs = [
    ...validateLabels(fieldAt(template, 'metadata', 'labels'), `${path}.labels`),
    ...validateAnnotations(fieldAt(template, 'metadata', 'annotations'), `${path}.annotations`),
  ];
  const ephemeral = fieldAt(template, 'spec', 'ephemeralContainers');
  if (Array.isArray(ephemeral) && ephemeral.length > 0) errs.push(fieldErr.forbidden(`${path}.spec.ephemeralContainers`, 'ephemeral containers not allowed in pod template'));
  return errs;
}

const podTemplateStrategy: ResourceStrategy = {
  prepareForCreate(obj) {
    obj.metadata.generation = 1;
  },
  prepareForUpdate(obj, old) {
    // Any change of the template is a new generation.
    obj.metadata.generation = (old.metadata.generation ?? 0) + (isDeepStrictEqual(obj['template'], old['template']) ? 0 : 1);
  },
  validate: (obj: StoredObject) => validatePodTemplateSpecMeta(obj['template'], 'template'),
};

const podTemplateTable: TableDefinition = {
  columns: [
    nameColumn,
    col('Containers', 'string', 'The names of the containers in the template.'),
    col('Images', 'string', 'The images of the containers in the template.'),
    col('Pod Labels', 'string', "The template's pod labels."),
  ],
  cells: (obj) => {
    const [names, images] = containerCells(fieldAt(obj, 'template', 'spec', 'containers'));
    return [obj.metadata.name ?? '', names, images, formatLabels(fieldAt(obj, 'template', 'metadata', 'labels'))];
  },
};

export const podtemplates = defineResource({
  group: '',
  version: 'v1',
  kind: 'PodTemplate',
  plural: 'podtemplates',
  namespaced: true,
  description: 'A PodTemplate is a template for pods, kept for controllers to make pods from.',
  strategy: podTemplateStrategy,
  table: podTemplateTable,
});
