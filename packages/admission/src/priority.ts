/**
 * kube's Priority plugin (plugin/pkg/admission/priority, 1.24): a created pod gets the priority and
 * preemptionPolicy of the PriorityClass it names, or of the global default class (the lowest-valued
 * one marked globalDefault), or 0; a pod may not state a different priority itself. An update keeps
 * the old pod's values when the new body drops them. A PriorityClass may be globalDefault only if
 * no other class is.
 */
import { internalError, type StoredObject } from '@plinth/api';
import type { AdmissionAttributes, AdmissionPlugin } from './interfaces.js';
import { admissionForbidden, isMainResource } from './forbidden.js';

/** The PriorityClasses as the informer has them, or as etcd has them now (`fresh`). */
export type PriorityClassLister = (fresh?: boolean) => Promise<StoredObject[]>;

function defaultClassOf(classes: StoredObject[]): StoredObject | undefined {
  let found: StoredObject | undefined;
  for (const pc of classes) {
    if (pc['globalDefault'] !== true) continue;
    if (!found || (found['value'] as number) > (pc['value'] as number)) found = pc;
  }
  return found;
}

function specOf(pod: StoredObject): Record<string, unknown> {
  if (!pod['spec'] || typeof pod['spec'] !== 'object') pod['spec'] = {};
  return pod['spec'] as Record<string, unknown>;
}

export function createPriority(list: PriorityClassLister): AdmissionPlugin {
  const admitPod = async (attrs: AdmissionAttributes): Promise<void> => {
    const spec = specOf(attrs.object!);
    if (attrs.operation === 'UPDATE') {
      const old = (attrs.oldObject?.['spec'] ?? {}) as Record<string, unknown>;
      if (spec['priority'] == null && old['priority'] != null) spec['priority'] = old['priority'];
      if (spec['preemptionPolicy'] == null && old['preemptionPolicy'] != null) spec['preemptionPolicy'] = old['preemptionPolicy'];
      return;
    }
    if (attrs.operation !== 'CREATE') return;
    let priority: number;
    let policy: unknown;
    const className = typeof spec['priorityClassName'] === 'string' ? spec['priorityClassName'] : '';
    if (!className) {
      const dpc = defaultClassOf(await list());
      priority = dpc ? (dpc['value'] as number) : 0;
      policy = dpc ? dpc['preemptionPolicy'] : 'PreemptLowerPriority';
      spec['priorityClassName'] = dpc?.metadata.name ?? '';
      if (!spec['priorityClassName']) delete spec['priorityClassName'];
    } else {
      // The cache first; a class it does not have yet (created a moment ago) is looked up in etcd
      // before the pod is refused, so a client that creates a class and then its pods is not refused.
      const named = (c: StoredObject): boolean => c.metadata.name === className;
      const pc = (await list()).find(named) ?? (await list(true)).find(named);
      if (!pc) throw admissionForbidden(attrs, `no PriorityClass with name ${className} was found`);
      priority = typeof pc['value'] === 'number' ? pc['value'] : 0;
      policy = pc['preemptionPolicy'];
    }
    if (typeof spec['priority'] === 'number' && spec['priority'] !== priority) {
      throw admissionForbidden(attrs, `the integer value of priority (${spec['priority']}) must not be provided in pod spec; priority admission controller computed ${priority} from the given PriorityClass name`);
    }
    spec['priority'] = priority;
    if (typeof policy === 'string') {
      if (typeof spec['preemptionPolicy'] === 'string' && spec['preemptionPolicy'] !== policy) {
        throw admissionForbidden(attrs, `the string value of PreemptionPolicy (${spec['preemptionPolicy']}) must not be provided in pod spec; priority admission controller computed ${policy} from the given PriorityClass name`);
      }
      spec['preemptionPolicy'] = policy;
    }
  };

  return {
    name: 'Priority',
    handles: (op) => op === 'CREATE' || op === 'UPDATE' || op === 'DELETE',
    async admit(attrs) {
      if (isMainResource(attrs, '', 'pods') && attrs.object) await admitPod(attrs);
    },
    async validate(attrs) {
      if (!isMainResource(attrs, 'scheduling.k8s.io', 'priorityclasses') || !attrs.object) return;
      if (attrs.operation !== 'CREATE' && attrs.operation !== 'UPDATE') return;
      if (attrs.object['globalDefault'] !== true) return;
      let dpc: StoredObject | undefined;
      try {
        dpc = defaultClassOf(await list(true));
      } catch (e) {
        throw internalError(new Error(`failed to get default priority class: ${String(e)}`));
      }
      if (dpc && (attrs.operation === 'CREATE' || dpc.metadata.name !== attrs.object.metadata.name)) {
        throw admissionForbidden(attrs, `PriorityClass ${dpc.metadata.name} is already marked as default. Only one default can exist`);
      }
    },
  };
}
