/**
 * policy PodDisruptionBudgets as kube-apiserver 1.24 serves them
 * (pkg/registry/policy/poddisruptionbudget): namespaced, short name `pdb`, `status`, in policy/v1
 * (storage) and policy/v1beta1 (deprecated 1.21, removed 1.25). An empty selector selects nothing
 * in v1beta1 and every pod in v1: kube's v1beta1 conversion stores v1beta1's empty selector as a
 * selector that matches nothing (an Exists requirement on a label no pod carries) and shows v1's
 * empty selector to v1beta1 as a DoesNotExist requirement on it (pkg/apis/policy/helper.go).
 * Create clears status and starts at generation 1; a spec change bumps it; `/status` keeps the spec.
 */
import { deprecationWarning, type ResourceDefinition, type ResourceStrategy } from '../../catalog.js';
import { type FieldError, fieldErr, GoLiteral } from '../../field-errors.js';
import { age, ageColumn, col, fieldAt, nameColumn, type TableDefinition } from '../../tables.js';
import type { StoredObject } from '../../types.js';
import { defineResource } from '../define.js';
import { validateLabelSelector } from '../core/validation/label-selector.js';
import { validateNonnegativeField } from '../core/validation/basic.js';
import { semanticEqual } from '../core/validation/semantic.js';

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

/** policy.PDBV1beta1Label. */
export const PDB_V1BETA1_LABEL = 'pdb.kubernetes.io/deprecated-v1beta1-empty-selector-match';
const MATCH_NONE_V1 = { matchExpressions: [{ key: PDB_V1BETA1_LABEL, operator: 'Exists' }] };
const MATCH_ALL_V1BETA1 = { matchExpressions: [{ key: PDB_V1BETA1_LABEL, operator: 'DoesNotExist' }] };
const isEmptySelector = (s: unknown): boolean => isObj(s) && Object.keys(s['matchLabels'] ?? {}).length === 0 && ((s['matchExpressions'] as unknown[] | undefined) ?? []).length === 0;
const sameSelector = (s: unknown, want: Obj): boolean => isObj(s) && semanticEqual({ matchLabels: s['matchLabels'] ?? {}, matchExpressions: s['matchExpressions'] ?? [] }, { matchLabels: {}, ...want });

/** policy.StripPDBV1beta1Label: the marker never mixes with a user's requirements. */
function stripMarker(sel: unknown): unknown {
  if (!isObj(sel) || !Array.isArray(sel['matchExpressions'])) return sel;
  return { ...sel, matchExpressions: sel['matchExpressions'].filter((e) => !(isObj(e) && e['key'] === PDB_V1BETA1_LABEL)) };
}

function withSelector(o: StoredObject, apiVersion: string, selector: unknown): StoredObject {
  const spec = { ...(isObj(o['spec']) ? o['spec'] : {}) };
  if (selector === undefined) delete spec['selector'];
  else spec['selector'] = selector;
  return { ...o, apiVersion, kind: 'PodDisruptionBudget', spec } as StoredObject;
}

/** policy/v1beta1 → policy/v1 (Convert_v1beta1_PodDisruptionBudget_To_policy_...). */
export function pdbV1beta1ToV1(o: StoredObject): StoredObject {
  const sel = fieldAt(o, 'spec', 'selector');
  if (isEmptySelector(sel)) return withSelector(o, 'policy/v1', structuredClone(MATCH_NONE_V1));
  if (sameSelector(sel, MATCH_ALL_V1BETA1)) return withSelector(o, 'policy/v1', {});
  return withSelector(o, 'policy/v1', stripMarker(sel));
}

/** policy/v1 → policy/v1beta1 (Convert_policy_PodDisruptionBudget_To_v1beta1_...). */
export function pdbV1ToV1beta1(o: StoredObject): StoredObject {
  const sel = fieldAt(o, 'spec', 'selector');
  if (sameSelector(sel, MATCH_NONE_V1)) return withSelector(o, 'policy/v1beta1', {});
  if (isEmptySelector(sel)) return withSelector(o, 'policy/v1beta1', structuredClone(MATCH_ALL_V1BETA1));
  return withSelector(o, 'policy/v1beta1', sel);
}

const PERCENT = /^[0-9]+%$/;
const PERCENT_MSG = "a valid percent string must be a numeric string followed by an ending '%' (e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')";
/** An IntOrString as field errors print it (Go's %#v of intstr.IntOrString). */
const intOrString = (v: unknown): GoLiteral => (typeof v === 'string' ? new GoLiteral(`intstr.IntOrString{Type:1, IntVal:0, StrVal:${JSON.stringify(v)}}`) : new GoLiteral(`intstr.IntOrString{Type:0, IntVal:${String(v)}, StrVal:""}`));

/** apps validation's ValidatePositiveIntOrPercent and IsNotMoreThan100Percent. */
function validateIntOrPercent(v: unknown, path: string): FieldError[] {
  if (typeof v === 'string') {
    if (!PERCENT.test(v)) return [fieldErr.invalid(path, intOrString(v), PERCENT_MSG)];
    return parseInt(v, 10) > 100 ? [fieldErr.invalid(path, intOrString(v), 'must not be greater than 100%')] : [];
  }
  return validateNonnegativeField(v, path);
}

/** kube's ValidatePodDisruptionBudgetSpec. */
function validatePdb(o: StoredObject): FieldError[] {
  const spec = isObj(o['spec']) ? o['spec'] : {};
  const errs: FieldError[] = [];
  const min = spec['minAvailable'];
  const max = spec['maxUnavailable'];
  if (min != null && max != null) errs.push(fieldErr.invalid('spec', new GoLiteral('policy.PodDisruptionBudgetSpec{...}'), 'minAvailable and maxUnavailable cannot be both set'));
  if (min != null) errs.push(...validateIntOrPercent(min, 'spec.minAvailable'));
  if (max != null) errs.push(...validateIntOrPercent(max, 'spec.maxUnavailable'));
  errs.push(...validateLabelSelector(spec['selector'], 'spec.selector'));
  return errs;
}

/** kube's ValidatePodDisruptionBudgetStatusUpdate (the counters). */
function validatePdbStatus(o: StoredObject): FieldError[] {
  const st = isObj(o['status']) ? o['status'] : {};
  return ['disruptionsAllowed', 'currentHealthy', 'desiredHealthy', 'expectedPods'].flatMap((k) => validateNonnegativeField(st[k], `status.${k}`));
}

function pdbStrategy(version: 'v1' | 'v1beta1'): ResourceStrategy {
  return {
    defaults: (o) => {
      // v1 requests never carry the v1beta1 marker, but for the match-none selector itself.
      if (version === 'v1' && isObj(o['spec']) && !sameSelector(o['spec']['selector'], MATCH_NONE_V1) && o['spec']['selector'] !== undefined) o['spec']['selector'] = stripMarker(o['spec']['selector']);
    },
    prepareForCreate: (o) => {
      o['status'] = { disruptionsAllowed: 0, currentHealthy: 0, desiredHealthy: 0, expectedPods: 0 };
      o.metadata.generation = 1;
    },
    prepareForUpdate: (o, old) => {
      o['status'] = old['status'];
      const gen = old.metadata.generation ?? 0;
      o.metadata.generation = semanticEqual(o['spec'], old['spec']) ? gen : gen + 1;
    },
    validate: validatePdb,
  };
}

const pdbStatusStrategy: ResourceStrategy = {
  prepareForUpdate: (o, old) => {
    o['spec'] = old['spec'];
  },
  validate: () => [],
  validateUpdate: validatePdbStatus,
  validateOnUpdate: false,
};

const cell = (v: unknown): string => (v === undefined || v === null ? 'N/A' : String(v));

/** kube's printPodDisruptionBudget. */
const pdbTable: TableDefinition = {
  columns: [
    nameColumn,
    col('Min Available', 'string', 'The minimum number of pods that must be available.'),
    col('Max Unavailable', 'string', 'The maximum number of pods that may be unavailable.'),
    col('Allowed Disruptions', 'integer', 'The number of disruptions currently allowed.'),
    ageColumn,
  ],
  cells: (o, now) => [o.metadata.name ?? '', cell(fieldAt(o, 'spec', 'minAvailable')), cell(fieldAt(o, 'spec', 'maxUnavailable')), Number(fieldAt(o, 'status', 'disruptionsAllowed') ?? 0), age(o, now)],
};

function pdbVersion(version: 'v1' | 'v1beta1', storage?: ResourceDefinition): ResourceDefinition {
  const kind = 'PodDisruptionBudget';
  return defineResource({
    group: 'policy',
    version,
    kind,
    plural: 'poddisruptionbudgets',
    shortNames: ['pdb'],
    namespaced: true,
    description: 'A PodDisruptionBudget limits how many pods of a set voluntary disruptions may take down at once.',
    strategy: pdbStrategy(version),
    subresources: [{ name: 'status', verbs: ['get', 'patch', 'update'], strategy: pdbStatusStrategy }],
    table: pdbTable,
    ...(storage ? { conversion: { storage, toStorage: pdbV1beta1ToV1, fromStorage: pdbV1ToV1beta1 } } : {}),
    ...(version === 'v1beta1' ? { deprecation: deprecationWarning({ group: 'policy', version, kind }, '1.21', '1.25', { group: 'policy', version: 'v1', kind }) } : {}),
  });
}

export const pdbV1 = pdbVersion('v1');
export const pdbV1beta1 = pdbVersion('v1beta1', pdbV1);
