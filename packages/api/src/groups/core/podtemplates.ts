/**
 * core/v1 PodTemplates as kube-apiserver 1.24 has them (pkg/registry/core/podtemplate): namespaced,
 * every verb, no short name; generation 1 on create and bumped by any change of the template; the
 * printer's NAME, CONTAINERS, IMAGES, POD LABELS (printPodTemplate).
 *
 * Defaults are kube's SetObjectDefaults_PodTemplate (the template's pod spec tree). Validation is
 * kube's ValidatePodTemplate: object metadata (the generic store), then ValidatePodTemplateSpec on
 * `template` (labels, annotations, the whole pod spec, the ephemeral containers ban), with kube's
 * paths (`template.labels`: kube names them off the template, not its metadata).
 */
import { isDeepStrictEqual } from 'node:util';
import type { ResourceStrategy } from '../../catalog.js';
import { col, containerCells, fieldAt, formatLabels, nameColumn, type TableDefinition } from '../../tables.js';
import type { StoredObject } from '../../types.js';
import { defineResource } from '../define.js';
import { setDefaultsPodTemplate } from './defaults/pod.js';
import { podTemplateValidationOptions } from './validation/pod-options.js';
import { validatePodTemplateSpec } from './validation/pod-template.js';

const podTemplateStrategy: ResourceStrategy = {
  defaults: (obj) => setDefaultsPodTemplate(obj),
  prepareForCreate(obj) {
    obj.metadata.generation = 1;
  },
  prepareForUpdate(obj, old) {
    // Any change of the template is a new generation.
    obj.metadata.generation = (old.metadata.generation ?? 0) + (isDeepStrictEqual(obj['template'], old['template']) ? 0 : 1);
  },
  validate: (obj: StoredObject) => validatePodTemplateSpec(obj['template'], 'template', podTemplateValidationOptions(obj['template'], undefined)),
  // ValidatePodTemplateUpdate: the template again (options from both), nothing immutable.
  validateUpdate: (obj: StoredObject, old: StoredObject) => validatePodTemplateSpec(obj['template'], 'template', podTemplateValidationOptions(obj['template'], old['template'])),
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
  // kube's ReturnDeletedObject: DELETE answers with the deleted object, not a Status.
  returnDeletedObject: true,
  namespaced: true,
  description: 'A PodTemplate is a template for pods, kept for controllers to make pods from.',
  strategy: podTemplateStrategy,
  table: podTemplateTable,
});
