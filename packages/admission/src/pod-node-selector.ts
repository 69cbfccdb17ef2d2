/**
 * kube's PodNodeSelector plugin (plugin/pkg/admission/podnodeselector, 1.24), off by default. On
 * pod create: the namespace's node selector — its `scheduler.alpha.kubernetes.io/node-selector`
 * annotation, else the configuration's `clusterDefaultNodeSelector` — is merged into the pod's
 * `nodeSelector` (a conflicting value is 403); then the pod's selector must stay within the
 * configuration's whitelist for its namespace, if one is given. The configuration is the
 * plugin's `--admission-control-config-file` entry: `podNodeSelectorPluginConfig: {clusterDefaultNodeSelector: "k=v",
 * <namespace>: "k=v,..."}`.
 */
import { fieldErr, fieldErrorString, forbidden, groupResourceOf, internalError, isJsonObject, isQualifiedName, isValidLabelValue, StatusError, type StoredObject } from '@plinth/api';
import type { AdmissionAttributes, AdmissionPlugin } from './interfaces.js';
import { isMainResource } from './forbidden.js';
import type { NamespaceLookup } from './namespace-lifecycle.js';
import { podSpecOf } from './pod-access.js';

export const NAMESPACE_NODE_SELECTOR_ANNOTATION = 'scheduler.alpha.kubernetes.io/node-selector';

type LabelSet = Record<string, string>;

/** kube answers a plain error from this plugin as a 500 without a reason. */
const plainError = (message: string): StatusError => new StatusError({ code: 500, reason: '', message });

/** kube's labels.ConvertSelectorToLabelsMap: `k=v,k2=v2` with valid keys and values. */
export function selectorToLabels(selector: string): LabelSet {
  const out: LabelSet = {};
  if (selector === '') return out;
  for (const label of selector.split(',')) {
    const parts = label.split('=');
    if (parts.length !== 2) throw plainError(`invalid selector: [${parts.join(' ')}]`);
    const key = parts[0]!.trim();
    const keyErrs = isQualifiedName(key);
    if (keyErrs.length > 0) throw plainError(fieldErrorString(fieldErr.invalid('', key, keyErrs.join('; '))));
    const value = parts[1]!.trim();
    const valueErrs = isValidLabelValue(value);
    if (valueErrs.length > 0) throw plainError(fieldErrorString(fieldErr.invalid(`[${key}]`, value, valueErrs.join('; '))));
    out[key] = value;
  }
  return out;
}

/** kube's labels.Conflicts: a key both sets have with different values. */
const conflicts = (a: LabelSet, b: LabelSet): boolean => Object.keys(a).some((k) => Object.hasOwn(b, k) && b[k] !== a[k]);

/** The configuration's map (kube decodes the field name case-insensitively and ignores a bad document). */
function configMapOf(config: Record<string, unknown> | undefined): LabelSet {
  const out: LabelSet = {};
  if (!config) return out;
  const key = Object.keys(config).find((k) => k.toLowerCase() === 'podnodeselectorpluginconfig');
  const map = key ? config[key] : undefined;
  if (!isJsonObject(map)) return out;
  for (const [k, v] of Object.entries(map)) if (typeof v === 'string') out[k] = v;
  return out;
}

export interface PodNodeSelectorOptions {
  getNamespace: NamespaceLookup;
  config: Record<string, unknown> | undefined;
}

export function createPodNodeSelector(opts: PodNodeSelectorOptions): AdmissionPlugin {
  const clusterSelectors = configMapOf(opts.config);

  const namespaceSelector = async (name: string): Promise<LabelSet> => {
    const ns = await opts.getNamespace(name);
    if (!ns) throw internalError(new Error(`namespace ${name} does not exist`));
    const annotation = (ns.metadata.annotations ?? {})[NAMESPACE_NODE_SELECTOR_ANNOTATION];
    return selectorToLabels(typeof annotation === 'string' ? annotation : (clusterSelectors['clusterDefaultNodeSelector'] ?? ''));
  };

  const nodeSelectorOf = (pod: StoredObject): LabelSet => {
    const sel = podSpecOf(pod)['nodeSelector'];
    return isJsonObject(sel) ? (sel as LabelSet) : {};
  };

  const refuse = (attrs: AdmissionAttributes, why: string): StatusError => forbidden(groupResourceOf(attrs.resource), attrs.object?.metadata.name ?? '', why);

  const check = async (attrs: AdmissionAttributes): Promise<void> => {
    const pod = attrs.object!;
    if (conflicts(await namespaceSelector(attrs.namespace), nodeSelectorOf(pod))) throw refuse(attrs, 'pod node label selector conflicts with its namespace node label selector');
    const whitelist = selectorToLabels(clusterSelectors[attrs.namespace] ?? '');
    if (Object.keys(whitelist).length === 0) return;
    for (const [k, v] of Object.entries(nodeSelectorOf(pod))) {
      if (whitelist[k] !== v) throw refuse(attrs, 'pod node label selector labels conflict with its namespace whitelist');
    }
  };

  return {
    name: 'PodNodeSelector',
    handles: (op) => op === 'CREATE',
    async admit(attrs) {
      if (!isMainResource(attrs, '', 'pods') || !attrs.object) return;
      const pod = attrs.object;
      const nsSelector = await namespaceSelector(attrs.namespace);
      const own = nodeSelectorOf(pod);
      if (conflicts(nsSelector, own)) throw refuse(attrs, 'pod node label selector conflicts with its namespace node label selector');
      const merged = { ...nsSelector, ...own };
      if (Object.keys(merged).length > 0) podSpecOf(pod)['nodeSelector'] = merged;
      await check(attrs);
    },
    async validate(attrs) {
      if (!isMainResource(attrs, '', 'pods') || !attrs.object) return;
      await check(attrs);
    },
  };
}
