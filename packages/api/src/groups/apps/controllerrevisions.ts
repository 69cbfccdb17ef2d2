/**
 * apps/v1 ControllerRevisions as kube-apiserver 1.24 serves them
 * (pkg/registry/apps/controllerrevision): no short name or category; `data` is required and
 * immutable, `revision` not negative; no generation. Printer: NAME, CONTROLLER, REVISION, AGE.
 */
import type { ResourceStrategy } from '../../catalog.js';
import { type FieldError, fieldErr } from '../../field-errors.js';
import { age, ageColumn, col, nameColumn, type TableDefinition } from '../../tables.js';
import { defineResource } from '../define.js';
import { type JsonObject, asObject, semanticEqual, validateNonnegativeField } from './shared.js';

function validateControllerRevision(obj: JsonObject): FieldError[] {
  const errs: FieldError[] = [];
  if (obj['data'] === undefined || obj['data'] === null) errs.push(fieldErr.required('data', 'data is mandatory'));
  errs.push(...validateNonnegativeField(obj['revision'] ?? 0, 'revision'));
  return errs;
}

const strategy: ResourceStrategy = {
  validate: validateControllerRevision,
  validateUpdate: (obj, old) => [...validateControllerRevision(obj), ...(semanticEqual(obj['data'], old['data']) ? [] : [fieldErr.invalid('data', obj['data'] ?? null, 'field is immutable')])],
};

/** The controller owner as kube prints it: `<kind>.<group>/<name>`, `<none>` without one. */
function controllerCell(obj: JsonObject): string {
  const refs = Array.isArray(asObject(obj['metadata'])?.['ownerReferences']) ? (asObject(obj['metadata'])!['ownerReferences'] as unknown[]) : [];
  const ref = refs.map(asObject).find((r) => r?.['controller'] === true);
  if (!ref) return '<none>';
  const apiVersion = String(ref['apiVersion'] ?? '');
  const group = apiVersion.includes('/') ? apiVersion.split('/')[0]! : '';
  const kind = String(ref['kind'] ?? '').toLowerCase();
  return `${group ? `${kind}.${group}` : kind}/${String(ref['name'] ?? '')}`;
}

const table: TableDefinition = {
  columns: [nameColumn, col('Controller', 'string', 'The controller of the object.'), col('Revision', 'string', 'The revision number.'), ageColumn],
  cells: (obj, now) => [obj.metadata.name ?? '', controllerCell(obj), typeof obj['revision'] === 'number' ? obj['revision'] : 0, age(obj, now)],
};

export const controllerrevisions = defineResource({
  group: 'apps',
  version: 'v1',
  kind: 'ControllerRevision',
  plural: 'controllerrevisions',
  namespaced: true,
  description: 'A ControllerRevision is an immutable snapshot of a controller state, kept for rollbacks.',
  strategy,
  table,
});
