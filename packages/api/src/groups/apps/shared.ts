/**
 * What the apps/v1 and batch/v1 workload kinds share, ported from kube 1.24
 * (pkg/apis/apps/validation, pkg/registry/apps/*): label selectors as kube checks and prints them,
 * IntOrString percentages, the pod template's defaults and disabled fields, spec/status isolation
 * and the generation rule, and the printers' cells.
 */
import type { ResourceStrategy } from '../../catalog.js';
import { type FieldError, fieldErr, GoLiteral } from '../../field-errors.js';
import { labelSelectorFromObject, type LabelSelectorObject } from '../../selectors/labels.js';
import { fieldAt } from '../../tables.js';
import type { StoredObject } from '../../types.js';
import { goZeroStruct } from '../../kube-schema/definitions.js';
import { setDefaultsPodSpecTree } from '../core/defaults/pod.js';
import { dropDisabledTemplateFields } from '../core/helpers/drop-disabled.js';
import { type JsonObject, asObject, num } from '../core/validation/access.js';
import { goStringMap, validateNonnegativeField } from '../core/validation/basic.js';
import { validateLabelSelector } from '../core/validation/label-selector.js';
import { podTemplateValidationOptions, type PodValidationOptions } from '../core/validation/pod-options.js';
import { semanticEqual } from '../core/validation/semantic.js';

export { asObject, goStringMap, num, semanticEqual, validateLabelSelector, validateNonnegativeField, type JsonObject, type PodValidationOptions };

/** `obj.spec`, created when absent (defaulting writes into it). */
export function specOf(obj: JsonObject): JsonObject {
  if (!asObject(obj['spec'])) obj['spec'] = {};
  return obj['spec'] as JsonObject;
}

/** Sets `o[key]` when it is absent or null (a Go pointer left nil). */
export function defaultNil(o: JsonObject, key: string, value: unknown): void {
  if (o[key] === undefined || o[key] === null) o[key] = value;
}

/** The pod template's generated defaults (SetObjectDefaults_* walk into spec.template.spec). */
export function setDefaultsTemplate(template: unknown): void {
  const t = asObject(template);
  if (!t) return;
  if (!asObject(t['spec'])) t['spec'] = {};
  setDefaultsPodSpecTree(t['spec'] as JsonObject);
}

/** GetValidationOptionsFromPodTemplate over `spec.template` of the new and old objects. */
export function templateOptions(obj: JsonObject, old?: JsonObject, path: readonly string[] = ['spec', 'template']): PodValidationOptions {
  return podTemplateValidationOptions(fieldAt(obj, ...path), old ? fieldAt(old, ...path) : undefined);
}

function setOrDelete(o: JsonObject, key: string, value: unknown): void {
  if (value === undefined) delete o[key];
  else o[key] = value;
}

/**
 * The common workload strategy steps (kube's <kind>Strategy.PrepareForCreate/PrepareForUpdate):
 * status reset on create (to the zero struct of `statusDefinition` as Go writes it), kept on
 * update, generation 1 then bumped on a spec change only, the template's disabled fields dropped.
 */
export function workloadPrepare(statusDefinition: string, templatePath: readonly string[] = ['spec', 'template']): Pick<ResourceStrategy, 'prepareForCreate' | 'prepareForUpdate'> {
  return {
    prepareForCreate(obj) {
      obj['status'] = goZeroStruct(statusDefinition);
      obj.metadata.generation = 1;
      dropDisabledTemplateFields(fieldAt(obj, ...templatePath));
    },
    prepareForUpdate(obj, old) {
      setOrDelete(obj, 'status', old['status']);
      dropDisabledTemplateFields(fieldAt(obj, ...templatePath), fieldAt(old, ...templatePath));
      const gen = old.metadata.generation ?? 0;
      obj.metadata.generation = semanticEqual(obj['spec'], old['spec']) ? gen : gen + 1;
    },
  };
}

/** The `/status` strategy of a workload: the spec stays the old one; only its status rules apply. */
export function statusStrategy(validateStatus: (obj: StoredObject, old: StoredObject) => FieldError[], keepLabels = false): ResourceStrategy {
  return {
    prepareForUpdate(obj, old) {
      setOrDelete(obj, 'spec', old['spec']);
      if (keepLabels) setOrDelete(obj.metadata as JsonObject, 'labels', old.metadata.labels);
    },
    validate: () => [],
    validateUpdate: validateStatus,
    validateOnUpdate: false,
  };
}

const goQuoteless = (s: string): string => s;

/** gogo-protobuf's String() of a metav1.LabelSelector, as kube prints it in a field error. */
export function goLabelSelector(sel: unknown): GoLiteral | null {
  const s = asObject(sel);
  if (!s) return null;
  const ml = asObject(s['matchLabels']) ?? {};
  const keys = Object.keys(ml).sort();
  const labels = `map[string]string{${keys.map((k) => `${goQuoteless(k)}: ${String(ml[k])},`).join('')}}`;
  const exprs = Array.isArray(s['matchExpressions']) ? (s['matchExpressions'] as unknown[]) : [];
  const reqs = exprs
    .map((e) => {
      const r = asObject(e) ?? {};
      const values = Array.isArray(r['values']) ? (r['values'] as unknown[]).map(String) : [];
      return `LabelSelectorRequirement{Key:${String(r['key'] ?? '')},Operator:${String(r['operator'] ?? '')},Values:[${values.join(' ')}],}`;
    })
    .map((r) => `${r},`)
    .join('');
  return new GoLiteral(`&LabelSelector{MatchLabels:${labels},MatchExpressions:[]LabelSelectorRequirement{${reqs}},}`);
}

/** metav1.LabelSelectorAsSelector(...).String(); undefined when it does not parse. */
export function selectorString(sel: unknown): string | undefined {
  try {
    return labelSelectorFromObject(asObject(sel) as LabelSelectorObject | undefined).toString();
  } catch {
    return undefined;
  }
}

/** metav1.FormatLabelSelector: `<none>` for an empty selector, `<error>` for a bad one. */
export function formatLabelSelector(sel: unknown): string {
  if (!asObject(sel)) return '<none>';
  const s = selectorString(sel);
  if (s === undefined) return '<error>';
  return s === '' ? '<none>' : s;
}

/** Whether the selector (when it parses and is not empty) matches the template's labels; true when it cannot be checked. */
export function selectorMatchesTemplate(sel: unknown, template: unknown): { parsed: boolean; matches: boolean; empty: boolean } {
  try {
    const s = labelSelectorFromObject(asObject(sel) as LabelSelectorObject | undefined);
    const labels = (asObject(fieldAt(template, 'metadata', 'labels')) ?? {}) as Record<string, string>;
    return { parsed: true, matches: s.matches(labels), empty: s.empty() };
  } catch {
    return { parsed: false, matches: true, empty: true };
  }
}

/** The template's labels as kube prints the Invalid value (`map[string]string{...}`). */
export function templateLabelsValue(template: unknown): GoLiteral {
  return goStringMap(asObject(fieldAt(template, 'metadata', 'labels')));
}

/** kube's selector checks of apps/v1 specs: required, ValidateLabelSelector, not empty. */
export function validateWorkloadSelector(sel: unknown, path: string, kindWord: string): FieldError[] {
  if (sel === undefined || sel === null) return [fieldErr.required(path)];
  const errs = validateLabelSelector(sel, path);
  const s = asObject(sel) ?? {};
  const n = Object.keys(asObject(s['matchLabels']) ?? {}).length + (Array.isArray(s['matchExpressions']) ? s['matchExpressions'].length : 0);
  if (n === 0) errs.push(fieldErr.invalid(path, goLabelSelector(sel), `empty selector is invalid for ${kindWord}`));
  return errs;
}

/** ValidateImmutableField of a selector. */
export function validateImmutableSelector(obj: JsonObject, old: JsonObject, path = 'spec.selector'): FieldError[] {
  const sel = fieldAt(obj, ...path.split('.'));
  return semanticEqual(sel, fieldAt(old, ...path.split('.'))) ? [] : [fieldErr.invalid(path, goLabelSelector(sel), 'field is immutable')];
}

/** An intstr.IntOrString value as a field error prints it (`%#v`: its String() has a pointer receiver). */
export function goIntOrString(v: unknown): GoLiteral {
  return typeof v === 'string' ? new GoLiteral(`intstr.IntOrString{Type:1, IntVal:0, StrVal:${JSON.stringify(v)}}`) : new GoLiteral(`intstr.IntOrString{Type:0, IntVal:${num(v)}, StrVal:""}`);
}
const intOrStringValue = goIntOrString;

const PERCENT = /^[0-9]+%$/;

/** kube's getIntOrPercentValue. */
export function intOrPercentValue(v: unknown): number {
  if (typeof v === 'string') return PERCENT.test(v) ? Number.parseInt(v.slice(0, -1), 10) : 0;
  return typeof v === 'number' ? v : 0;
}

/** kube's ValidatePositiveIntOrPercent. */
export function validatePositiveIntOrPercent(v: unknown, path: string): FieldError[] {
  if (typeof v === 'string') return PERCENT.test(v) ? [] : [fieldErr.invalid(path, intOrStringValue(v), "a valid percent string must be a numeric string followed by an ending '%' (e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')")];
  if (typeof v === 'number') return validateNonnegativeField(v, path);
  return [];
}

/** kube's IsNotMoreThan100Percent. */
export function isNotMoreThan100Percent(v: unknown, path: string): FieldError[] {
  if (typeof v !== 'string' || !PERCENT.test(v) || intOrPercentValue(v) <= 100) return [];
  return [fieldErr.invalid(path, intOrStringValue(v), 'must not be greater than 100%')];
}

/** The printers' int cells: a missing count is 0. */
export const int = (v: unknown): number => num(v);

/**
 * Go's `%#v` of a pointer field inside a struct kube prints: `(*T)(nil)`, or an address, which
 * Go prints as the pointer's value and no client can depend on (a fixed one here).
 */
function goPointer(type: string, v: unknown): string {
  return v === undefined || v === null ? `(*${type})(nil)` : `(*${type})(0xc000000000)`;
}

const ROLLING_TYPES = {
  DeploymentStrategy: 'apps.RollingUpdateDeployment',
  StatefulSetUpdateStrategy: 'apps.RollingUpdateStatefulSetStrategy',
  DaemonSetUpdateStrategy: 'apps.RollingUpdateDaemonSet',
} as const;

/**
 * An apps update strategy (DeploymentStrategy, StatefulSetUpdateStrategy, DaemonSetUpdateStrategy) as kube's field
 * errors print the internal struct (`%#v`).
 */
export function goUpdateStrategy(kind: keyof typeof ROLLING_TYPES, strategy: JsonObject): GoLiteral {
  const rollingType = ROLLING_TYPES[kind];
  return new GoLiteral(`apps.${kind}{Type:${JSON.stringify(String(strategy['type'] ?? ''))}, RollingUpdate:${goPointer(rollingType, strategy['rollingUpdate'])}}`);
}

/** A StatefulSet's rollingUpdate as kube's field errors print the internal struct (`%#v`). */
export function goRollingUpdateStatefulSet(ru: JsonObject): GoLiteral {
  return new GoLiteral(`apps.RollingUpdateStatefulSetStrategy{Partition:${num(ru['partition'])}, MaxUnavailable:${goPointer('intstr.IntOrString', ru['maxUnavailable'])}}`);
}
