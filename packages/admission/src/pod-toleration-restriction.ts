/**
 * kube's PodTolerationRestriction plugin (plugin/pkg/admission/podtolerationrestriction, 1.24),
 * off by default. Mutating: a created pod gets its namespace's default tolerations (the JSON list
 * in the `scheduler.alpha.kubernetes.io/defaultTolerations` annotation, else the configuration's
 * `default`), and any pod that is not BestEffort the memory-pressure NoSchedule toleration, merged
 * as kube's MergeTolerations. Validating: a pod's tolerations must each be covered by the
 * namespace's whitelist (`scheduler.alpha.kubernetes.io/tolerationsWhitelist`, else the
 * configuration's `whitelist`) when that is not empty. The configuration (kind Configuration of
 * podtolerationrestriction.admission.k8s.io/v1alpha1) is the plugin's entry in
 * `--admission-control-config-file`.
 */
import { computePodQOS, fieldErrorString, isJsonObject, notFound, StatusError, validateTolerations } from '@plinth/api';
import type { AdmissionAttributes, AdmissionPlugin } from './interfaces.js';
import { isMainResource } from './forbidden.js';
import type { NamespaceLookup } from './namespace-lifecycle.js';
import { podSpecOf } from './pod-access.js';
import { isSuperset, mergeTolerations } from './runtimeclass.js';

export const NS_DEFAULT_TOLERATIONS = 'scheduler.alpha.kubernetes.io/defaultTolerations';
export const NS_TOLERATIONS_WHITELIST = 'scheduler.alpha.kubernetes.io/tolerationsWhitelist';
const API_VERSION = 'podtolerationrestriction.admission.k8s.io/v1alpha1';

type Toleration = Record<string, unknown>;

const MEMORY_PRESSURE: Toleration = { key: 'node.kubernetes.io/memory-pressure', operator: 'Exists', effect: 'NoSchedule' };

/** kube answers the plain errors of this plugin as a 500 without a reason. */
const plainError = (message: string): StatusError => new StatusError({ code: 500, reason: '', message });

const tolerationList = (v: unknown): Toleration[] => (Array.isArray(v) ? v.filter(isJsonObject) : []);

/** kube's loadConfiguration and ValidateConfiguration; throws kube's start-up error. */
export function parsePodTolerationRestrictionConfig(config: Record<string, unknown> | undefined): { default: Toleration[]; whitelist: Toleration[] } {
  if (!config) return { default: [], whitelist: [] };
  const fail = (why: string): never => {
    throw new Error(`failed to initialize admission: couldn't init admission plugin "PodTolerationRestriction": ${why}`);
  };
  const kind = config['kind'];
  if (typeof kind !== 'string' || kind === '') fail(`Object 'Kind' is missing in '${JSON.stringify(config)}'`);
  if (kind !== 'Configuration' || config['apiVersion'] !== API_VERSION) fail(`no kind "${String(kind)}" is registered for version "${String(config['apiVersion'] ?? '')}"`);
  const errs = [...validateTolerations(config['default'] ?? [], 'podtolerationrestriction.default'), ...validateTolerations(config['whitelist'] ?? [], 'podtolerationrestriction.whitelist')];
  // Go's %v of the error list: the errors in brackets, separated by spaces.
  if (errs.length > 0) fail(`invalid config: [${errs.map(fieldErrorString).join(' ')}]`);
  return { default: tolerationList(config['default']), whitelist: tolerationList(config['whitelist']) };
}

export interface PodTolerationRestrictionOptions {
  getNamespace: NamespaceLookup;
  config: Record<string, unknown> | undefined;
}

export function createPodTolerationRestriction(opts: PodTolerationRestrictionOptions): AdmissionPlugin {
  const config = parsePodTolerationRestrictionConfig(opts.config);

  /** The tolerations a namespace annotation lists; undefined when the annotation is absent. */
  const namespaceTolerations = async (name: string, key: string): Promise<Toleration[] | undefined> => {
    const ns = await opts.getNamespace(name);
    if (!ns) throw notFound({ group: '', resource: 'namespaces' }, name);
    const value = (ns.metadata.annotations ?? {})[key];
    if (typeof value !== 'string') return undefined;
    if (value === '') return [];
    let parsed: unknown;
    try {
      parsed = JSON.parse(value);
    } catch (e) {
      throw plainError(e instanceof Error ? e.message : String(e));
    }
    if (parsed !== null && !Array.isArray(parsed)) throw plainError('json: cannot unmarshal object into Go value of type []v1.Toleration');
    return tolerationList(parsed);
  };

  const check = async (attrs: AdmissionAttributes): Promise<void> => {
    const tolerations = tolerationList(podSpecOf(attrs.object!)['tolerations']);
    if (tolerations.length === 0) return;
    let whitelist = await namespaceTolerations(attrs.namespace, NS_TOLERATIONS_WHITELIST);
    let scope = 'namespace';
    if (whitelist === undefined) {
      whitelist = config.whitelist;
      scope = 'cluster';
    }
    if (whitelist.length === 0) return;
    const covered = tolerations.every((t) => whitelist!.some((w) => isSuperset(w, t)));
    if (!covered) throw plainError(`pod tolerations (possibly merged with namespace default tolerations) conflict with its ${scope} whitelist`);
  };

  return {
    name: 'PodTolerationRestriction',
    handles: (op) => op === 'CREATE' || op === 'UPDATE',
    async admit(attrs) {
      if (!isMainResource(attrs, '', 'pods') || !attrs.object) return;
      const extra: Toleration[] = [];
      if (attrs.operation === 'CREATE') extra.push(...((await namespaceTolerations(attrs.namespace, NS_DEFAULT_TOLERATIONS)) ?? config.default));
      if (computePodQOS(attrs.object) !== 'BestEffort') extra.push(MEMORY_PRESSURE);
      if (extra.length > 0) {
        const spec = podSpecOf(attrs.object);
        spec['tolerations'] = mergeTolerations(tolerationList(spec['tolerations']), extra);
      }
      await check(attrs);
    },
    async validate(attrs) {
      if (!isMainResource(attrs, '', 'pods') || !attrs.object) return;
      await check(attrs);
    },
  };
}
