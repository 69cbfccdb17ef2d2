/**
 * Node validation as kube 1.24 has it (`ValidateNode`, `ValidateNodeUpdate`, `validateNodeTaints`,
 * the config-source rules of the deprecated DynamicKubeletConfig, and the node strategy's
 * dropping of that field). Object metadata aside: the store validates it, with a DNS-subdomain
 * name.
 *
 * kube's node strategy validates a create with ValidateNode, an update with ValidateNode +
 * ValidateNodeUpdate, and a status update with ValidateNodeUpdate alone.
 */
import { type FieldError, GoLiteral, fieldErr } from '../../../field-errors.js';
import { isConfigMapKey } from './basic.js';
import { isDNS1123Label, isDNS1123Subdomain, isValidLabelValue } from '../../../validation.js';
import { cidrFamily, isDualStackCIDRs, parseCIDRsError } from './cidr.js';
import { type JsonObject, arrayAt, child, index, isSet, memberAt, objectAt, stringAt, stringsAt } from './json-fields.js';
import { validateLabelName } from './node-selector.js';
import { resourceListEntries, validateResourceQuantityValue } from './resources.js';

/** The annotation older clients set taints through. */
export const TAINTS_ANNOTATION = 'scheduler.alpha.kubernetes.io/taints';
export const TAINT_EFFECTS = ['NoSchedule', 'PreferNoSchedule', 'NoExecute'];

/** kube's `validateTaintEffect` (tolerations allow an empty effect). */
export function validateTaintEffect(effect: string, allowEmpty: boolean, path: string): FieldError[] {
  if (!allowEmpty && effect === '') return [fieldErr.required(path, '')];
  return TAINT_EFFECTS.includes(effect) || effect === '' ? [] : [fieldErr.notSupported(path, effect, TAINT_EFFECTS)];
}

/** Go's `%#v` of a `core.Taint`. */
function goTaint(taint: unknown): GoLiteral {
  const time = isSet(taint, 'timeAdded') ? '(*v1.Time)(0xc000a1c0c0)' : '(*v1.Time)(nil)';
  return new GoLiteral(
    `core.Taint{Key:${JSON.stringify(stringAt(taint, 'key'))}, Value:${JSON.stringify(stringAt(taint, 'value'))}, Effect:${JSON.stringify(stringAt(taint, 'effect'))}, TimeAdded:${time}}`,
  );
}

/** kube's `validateNodeTaints`: keys, values, effects, and unique key/effect pairs. */
export function validateNodeTaints(taints: unknown[], path: string): FieldError[] {
  const errs: FieldError[] = [];
  const seen = new Map<string, Set<string>>();
  taints.forEach((taint, i) => {
    const idxPath = index(path, i);
    const k = stringAt(taint, 'key');
    const value = stringAt(taint, 'value');
    const effect = stringAt(taint, 'effect');
    errs.push(...validateLabelName(k, child(idxPath, 'key')));
    const valueErrs = isValidLabelValue(value);
    if (valueErrs.length > 0) errs.push(fieldErr.invalid(child(idxPath, 'value'), value, valueErrs.join(';')));
    errs.push(...validateTaintEffect(effect, false, child(idxPath, 'effect')));
    const keys = seen.get(effect) ?? new Set<string>();
    if (keys.has(k)) {
      errs.push({ ...fieldErr.duplicate(idxPath, goTaint(taint)), detail: 'taints must be unique by key and effect pair' });
      return;
    }
    keys.add(k);
    seen.set(effect, keys);
  });
  return errs;
}

/** kube's `ValidateNodeSpecificAnnotations`: taints set through the annotation are valid taints. */
export function validateNodeSpecificAnnotations(annotations: unknown, path: string): FieldError[] {
  const text = stringAt(annotations, TAINTS_ANNOTATION);
  if (!text) return [];
  let taints: unknown;
  try {
    taints = JSON.parse(text);
  } catch (e) {
    return [fieldErr.invalid(path, TAINTS_ANNOTATION, e instanceof SyntaxError ? goJsonSyntaxError(text) : String(e))];
  }
  if (taints !== null && !Array.isArray(taints)) {
    return [fieldErr.invalid(path, TAINTS_ANNOTATION, `json: cannot unmarshal ${typeof taints === 'object' ? 'object' : typeof taints} into Go value of type []core.Taint`)];
  }
  return Array.isArray(taints) && taints.length > 0 ? validateNodeTaints(taints, child(path, TAINTS_ANNOTATION)) : [];
}

/** The gist of Go's encoding/json syntax errors (plinth does not track Go's exact offsets). */
function goJsonSyntaxError(text: string): string {
  const trimmed = text.trim();
  if (trimmed === '') return 'unexpected end of JSON input';
  const c = trimmed[0]!;
  return '[{"-tfn0123456789'.includes(c) ? 'unexpected end of JSON input' : `invalid character '${c}' looking for beginning of value`;
}

/** kube's `ValidateNodeResources`: capacity and allocatable values (at `status.capacity.<name>`). */
export function validateNodeResources(obj: JsonObject): FieldError[] {
  const status = objectAt(obj, 'status');
  const errs: FieldError[] = [];
  for (const member of ['capacity', 'allocatable']) {
    for (const [k, q] of resourceListEntries(objectAt(status, member))) errs.push(...validateResourceQuantityValue(k, q, child('status', member, k)));
  }
  return errs;
}

function goStrings(values: string[]): GoLiteral {
  return new GoLiteral(`[]string{${values.map((v) => JSON.stringify(v)).join(', ')}}`);
}

/** kube's `spec.podCIDRs` rules: valid CIDRs, at most one per family, no duplicates. */
function validatePodCIDRs(cidrs: string[]): FieldError[] {
  const errs: FieldError[] = [];
  const path = 'spec.podCIDRs';
  cidrs.forEach((c, i) => {
    if (cidrFamily(c) === undefined) errs.push(fieldErr.invalid(index(path, i), goStrings(cidrs), 'must be valid CIDR'));
  });
  if (cidrs.length > 1) {
    const parseError = parseCIDRsError(cidrs);
    if (parseError) errs.push({ type: 'InternalError', field: path, hasValue: false, detail: `invalid PodCIDRs. failed to check with dual stack with error:${parseError}` });
    if (parseError || !isDualStackCIDRs(cidrs) || cidrs.length > 2) errs.push(fieldErr.invalid(path, goStrings(cidrs), 'may specify no more than one CIDR for each IP family'));
    const seen = new Set<string>();
    cidrs.forEach((c, i) => {
      if (seen.has(c)) errs.push(fieldErr.duplicate(index(path, i), c));
      seen.add(c);
    });
  }
  return errs;
}

/** kube's `ValidateNode` (metadata aside): annotation taints, `spec.taints` (reported under `metadata.taints`), resources, pod CIDRs. */
export function validateNode(obj: JsonObject): FieldError[] {
  const spec = objectAt(obj, 'spec');
  const taints = arrayAt(spec, 'taints');
  const cidrs = stringsAt(spec, 'podCIDRs');
  return [
    ...validateNodeSpecificAnnotations(objectAt(objectAt(obj, 'metadata'), 'annotations'), 'metadata.annotations'),
    ...(taints.length > 0 ? validateNodeTaints(taints, 'metadata.taints') : []),
    ...validateNodeResources(obj),
    ...(cidrs.length > 0 ? validatePodCIDRs(cidrs) : []),
  ];
}

/** kube's `validateConfigMapNodeConfigSource`: namespace, name and kubelet config key. */
function validateConfigMapSource(source: unknown, path: string): FieldError[] {
  const errs: FieldError[] = [];
  const ns = stringAt(source, 'namespace');
  const name = stringAt(source, 'name');
  const configKey = stringAt(source, 'kubeletConfigKey');
  if (!ns) errs.push(fieldErr.required(child(path, 'namespace'), 'namespace must be set'));
  else errs.push(...isDNS1123Label(ns).map((m) => fieldErr.invalid(child(path, 'namespace'), ns, m)));
  if (!name) errs.push(fieldErr.required(child(path, 'name'), 'name must be set'));
  else errs.push(...isDNS1123Subdomain(name).map((m) => fieldErr.invalid(child(path, 'name'), name, m)));
  if (!configKey) errs.push(fieldErr.required(child(path, 'kubeletConfigKey'), 'kubeletConfigKey must be set'));
  else errs.push(...isConfigMapKey(configKey).map((m) => fieldErr.invalid(child(path, 'kubeletConfigKey'), configKey, m)));
  return errs;
}

/** Go's `%#v` of a `core.NodeConfigSource`. */
function goConfigSource(source: unknown): GoLiteral {
  const cm = isSet(source, 'configMap') ? '(*core.ConfigMapNodeConfigSource)(0xc000a1c100)' : '(*core.ConfigMapNodeConfigSource)(nil)';
  return new GoLiteral(`core.NodeConfigSource{ConfigMap:${cm}}`);
}

/** A NodeConfigSource in spec (`inSpec`: uid and resourceVersion forbidden) or in status (both required). */
function validateConfigSource(source: unknown, path: string, inSpec: boolean): FieldError[] {
  const errs: FieldError[] = [];
  if (isSet(source, 'configMap')) {
    const cm = memberAt(source, 'configMap');
    const cmPath = child(path, 'configMap');
    if (inSpec) {
      if (stringAt(cm, 'uid')) errs.push(fieldErr.forbidden(child(cmPath, 'uid'), 'uid must not be set in spec'));
      if (stringAt(cm, 'resourceVersion')) errs.push(fieldErr.forbidden(child(cmPath, 'resourceVersion'), 'resourceVersion must not be set in spec'));
    } else {
      if (!stringAt(cm, 'uid')) errs.push(fieldErr.required(child(cmPath, 'uid'), 'uid must be set in status'));
      if (!stringAt(cm, 'resourceVersion')) errs.push(fieldErr.required(child(cmPath, 'resourceVersion'), 'resourceVersion must be set in status'));
    }
    errs.push(...validateConfigMapSource(cm, cmPath));
  } else {
    errs.push(fieldErr.invalid(path, goConfigSource(source), 'exactly one reference subfield must be non-nil'));
  }
  return errs;
}

/** Go's `%#v` of a `core.NodeAddress`. */
function goAddress(address: unknown): GoLiteral {
  return new GoLiteral(`core.NodeAddress{Type:${JSON.stringify(stringAt(address, 'type'))}, Address:${JSON.stringify(stringAt(address, 'address'))}}`);
}

const PODCIDR_CHANGE = 'node updates may not change podCIDR except from "" to valid';

/**
 * kube's `ValidateNodeUpdate` (metadata aside): annotation taints, resources, unique addresses,
 * pod CIDRs and provider ID fixed once set, config sources, taints, and an external ID that
 * never changes.
 */
export function validateNodeUpdate(obj: JsonObject, old: JsonObject): FieldError[] {
  const spec = objectAt(obj, 'spec');
  const oldSpec = objectAt(old, 'spec');
  const status = objectAt(obj, 'status');
  const errs = [...validateNodeSpecificAnnotations(objectAt(objectAt(obj, 'metadata'), 'annotations'), 'metadata.annotations'), ...validateNodeResources(obj)];
  const addresses = new Set<string>();
  arrayAt(status, 'addresses').forEach((a, i) => {
    const id = `${stringAt(a, 'type')}\u0000${stringAt(a, 'address')}`;
    if (addresses.has(id)) errs.push(fieldErr.duplicate(index('status.addresses', i), goAddress(a)));
    addresses.add(id);
  });
  const oldCIDRs = stringsAt(oldSpec, 'podCIDRs');
  const cidrs = stringsAt(spec, 'podCIDRs');
  if (oldCIDRs.length > 0) {
    if (oldCIDRs.length !== cidrs.length) errs.push(fieldErr.forbidden('spec.podCIDRs', PODCIDR_CHANGE));
    else oldCIDRs.forEach((c, i) => c !== cidrs[i] && errs.push(fieldErr.forbidden('spec.podCIDRs', PODCIDR_CHANGE)));
  }
  const oldProvider = stringAt(oldSpec, 'providerID');
  if (oldProvider && oldProvider !== stringAt(spec, 'providerID')) {
    errs.push(fieldErr.forbidden('spec.providerID', 'node updates may not change providerID except from "" to valid'));
  }
  if (isSet(spec, 'configSource')) errs.push(...validateConfigSource(memberAt(spec, 'configSource'), 'spec.configSource', true));
  const config = objectAt(status, 'config');
  if (config) {
    for (const member of ['assigned', 'active', 'lastKnownGood']) {
      if (isSet(config, member)) errs.push(...validateConfigSource(memberAt(config, member), child('status.config', member), false));
    }
  }
  const taints = arrayAt(spec, 'taints');
  if (taints.length > 0) errs.push(...validateNodeTaints(taints, 'metadata.taints'));
  if (stringAt(spec, 'externalID') !== stringAt(oldSpec, 'externalID')) errs.push(fieldErr.forbidden('spec.externalID', 'may not be updated'));
  return errs;
}

/**
 * The node strategies' `dropDisabledFields` (DynamicKubeletConfig is off in 1.24): a
 * `spec.configSource` (and a status `config`, `forStatus`) is dropped unless the old node had one.
 * Mutates `obj`.
 */
export function dropDisabledNodeFields(obj: JsonObject, old: JsonObject | undefined, forStatus = false): void {
  const spec = objectAt(obj, 'spec');
  if (!forStatus && spec && !isSet(objectAt(old, 'spec'), 'configSource')) delete spec['configSource'];
  const status = objectAt(obj, 'status');
  if (forStatus && status && !isSet(objectAt(old, 'status'), 'config')) delete status['config'];
}
