/**
 * kube 1.24's NodeRestriction admission plugin (plugin/pkg/admission/noderestriction): a kubelet
 * (`system:node:<name>` in `system:nodes`) may write only its own Node (without touching taints,
 * configSource or labels outside the kubelet's set), create only mirror pods bound to itself that
 * reference no other API object, update the status of, evict or delete only pods bound to itself,
 * update only PVC status, request tokens only for pods bound to itself, and touch only its own
 * Lease and CSINode. A mutating plugin (kube's Admit); other users pass untouched.
 */
import { MIRROR_POD_ANNOTATION_KEY, nodeIdentity, notFound, podConfigMapNames, podSecretNames, type StoredObject } from '@plinth/api';
import type { AdmissionAttributes, AdmissionPlugin } from './interfaces.js';
import { admissionForbidden } from './forbidden.js';

/** One object as kube's informer listers read it (plinth: the watch cache, a miss confirmed in etcd). */
export type ObjectGetter = (namespace: string, name: string) => Promise<StoredObject | undefined>;

export interface NodeRestrictionDeps {
  getPod: ObjectGetter;
  getNode: (name: string) => Promise<StoredObject | undefined>;
}

type Obj = Record<string, unknown>;
const obj = (v: unknown): Obj => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Obj) : {});
const specOf = (o: StoredObject | undefined): Obj => obj(o?.spec);
const nodeNameOf = (pod: StoredObject): string => (typeof specOf(pod).nodeName === 'string' ? (specOf(pod).nodeName as string) : '');

/** k8s.io/api's LabelNamespaceNodeRestriction. */
const NODE_RESTRICTION_LABEL_NAMESPACE = 'node-restriction.kubernetes.io';
/** k8s.io/kubelet's kubeletLabels and kubeletLabelNamespaces (1.24): what a kubelet may set under kubernetes.io / k8s.io. */
const KUBELET_LABELS = new Set([
  'kubernetes.io/hostname',
  'topology.kubernetes.io/zone',
  'topology.kubernetes.io/region',
  'failure-domain.beta.kubernetes.io/zone',
  'failure-domain.beta.kubernetes.io/region',
  'beta.kubernetes.io/instance-type',
  'node.kubernetes.io/instance-type',
  'kubernetes.io/os',
  'kubernetes.io/arch',
  'beta.kubernetes.io/os',
  'beta.kubernetes.io/arch',
]);
const KUBELET_LABEL_NAMESPACES = ['kubelet.kubernetes.io', 'node.kubernetes.io'];

const labelNamespace = (key: string): string => (key.includes('/') ? key.slice(0, key.indexOf('/')) : '');
const inNamespace = (ns: string, domain: string): boolean => ns === domain || ns.endsWith(`.${domain}`);

function isKubeletLabel(key: string): boolean {
  if (KUBELET_LABELS.has(key)) return true;
  const ns = labelNamespace(key);
  return KUBELET_LABEL_NAMESPACES.some((d) => inNamespace(ns, d));
}

/** kube's getForbiddenLabels: node-restriction.kubernetes.io ones, and kubernetes.io/k8s.io ones the kubelet does not own; sorted. */
function forbiddenLabels(modified: Set<string>): string[] {
  const out: string[] = [];
  for (const key of modified) {
    const ns = labelNamespace(key);
    if (inNamespace(ns, NODE_RESTRICTION_LABEL_NAMESPACE)) out.push(key);
    else if ((inNamespace(ns, 'kubernetes.io') || inNamespace(ns, 'k8s.io')) && !isKubeletLabel(key)) out.push(key);
  }
  return out.sort();
}

/** The keys added, removed or changed between two label maps. */
function modifiedLabels(a: Record<string, string> = {}, b: Record<string, string> = {}): Set<string> {
  const out = new Set<string>();
  for (const [k, v] of Object.entries(a)) if (b[k] !== v) out.add(k);
  for (const [k, v] of Object.entries(b)) if (a[k] !== v) out.add(k);
  return out;
}

/** Semantic equality of JSON values (absent, null and empty-list/empty-map differ only as kube's DeepEqual treats nil vs empty: not at all here). */
function sameJSON(a: unknown, b: unknown): boolean {
  return JSON.stringify(canonical(a)) === JSON.stringify(canonical(b));
}

function canonical(v: unknown): unknown {
  if (Array.isArray(v)) return v.length === 0 ? undefined : v.map(canonical);
  if (v && typeof v === 'object') {
    const out: Obj = {};
    for (const k of Object.keys(v as Obj).sort()) {
      const c = canonical((v as Obj)[k]);
      if (c !== undefined && c !== null) out[k] = c;
    }
    return Object.keys(out).length === 0 ? undefined : out;
  }
  return v === '' || v === null ? undefined : v;
}

export function createNodeRestriction(deps: NodeRestrictionDeps): AdmissionPlugin {
  /** The informer lister's miss: kube answers with the lister's own NotFound (singular resource). */
  const podOrNotFound = async (namespace: string, name: string): Promise<StoredObject> => {
    const pod = await deps.getPod(namespace, name);
    if (!pod) throw notFound({ group: '', resource: 'pod' }, name);
    return pod;
  };

  const admitPodCreate = async (node: string, a: AdmissionAttributes): Promise<void> => {
    const pod = a.object!;
    const refuse = (why: string) => admissionForbidden(a, why);
    if (pod.metadata.annotations?.[MIRROR_POD_ANNOTATION_KEY] === undefined) throw refuse(`pod does not have "${MIRROR_POD_ANNOTATION_KEY}" annotation, node "${node}" can only create mirror pods`);
    if (nodeNameOf(pod) !== node) throw refuse(`node "${node}" can only create pods with spec.nodeName set to itself`);
    const owners = pod.metadata.ownerReferences ?? [];
    if (owners.length > 1) throw refuse(`node "${node}" can only create pods with a single owner reference set to itself`);
    if (owners.length === 1) {
      const owner = owners[0]!;
      if (owner.apiVersion !== 'v1' || owner.kind !== 'Node' || owner.name !== node) throw refuse(`node "${node}" can only create pods with an owner reference set to itself`);
      if (owner.controller !== true) throw refuse(`node "${node}" can only create pods with a controller owner reference set to itself`);
      if (owner.blockOwnerDeletion === true) throw refuse(`node "${node}" must not set blockOwnerDeletion on an owner reference`);
      const found = await deps.getNode(node);
      if (!found) throw notFound({ group: '', resource: 'node' }, node);
      if (owner.uid !== found.metadata.uid) throw refuse(`node ${node} UID mismatch: expected ${owner.uid} got ${found.metadata.uid ?? ''}`);
    }
    const spec = specOf(pod);
    if (typeof spec.serviceAccountName === 'string' && spec.serviceAccountName) throw refuse(`node "${node}" can not create pods that reference a service account`);
    if (podSecretNames(pod).length > 0) throw refuse(`node "${node}" can not create pods that reference secrets`);
    if (podConfigMapNames(pod).length > 0) throw refuse(`node "${node}" can not create pods that reference configmaps`);
    const volumes = Array.isArray(spec.volumes) ? (spec.volumes as unknown[]) : [];
    if (volumes.some((v) => obj(v).persistentVolumeClaim)) throw refuse(`node "${node}" can not create pods that reference persistentvolumeclaims`);
  };

  const admitPod = async (node: string, a: AdmissionAttributes): Promise<void> => {
    switch (a.operation) {
      case 'CREATE':
        return admitPodCreate(node, a);
      case 'DELETE': {
        // The object being deleted, as read for this delete (kube reads its informer's copy).
        const pod = a.oldObject ?? (await podOrNotFound(a.namespace, a.name));
        if (nodeNameOf(pod) !== node) throw admissionForbidden(a, `node "${node}" can only delete pods with spec.nodeName set to itself`);
        return;
      }
      default:
        throw admissionForbidden(a, `unexpected operation "${a.operation}", node "${node}" can only create and delete mirror pods`);
    }
  };

  const admitPodStatus = (node: string, a: AdmissionAttributes): void => {
    if (a.operation !== 'UPDATE') throw admissionForbidden(a, `unexpected operation "${a.operation}"`);
    if (nodeNameOf(a.oldObject!) !== node) throw admissionForbidden(a, `node "${node}" can only update pod status for pods with spec.nodeName set to itself`);
    if (modifiedLabels(a.oldObject!.metadata.labels, a.object!.metadata.labels).size > 0) throw admissionForbidden(a, `node "${node}" cannot update labels through pod status`);
  };

  const admitPodEviction = async (node: string, a: AdmissionAttributes): Promise<void> => {
    if (a.operation !== 'CREATE') throw admissionForbidden(a, `unexpected operation ${a.operation}`);
    const podName = a.name || a.object?.metadata.name || '';
    if (!podName) throw admissionForbidden(a, 'could not determine pod from request data');
    const pod = await podOrNotFound(a.namespace, podName);
    if (nodeNameOf(pod) !== node) throw admissionForbidden(a, `node ${node} can only evict pods with spec.nodeName set to itself`);
  };

  const admitPVCStatus = (node: string, a: AdmissionAttributes): void => {
    if (a.operation !== 'UPDATE') throw admissionForbidden(a, `unexpected operation "${a.operation}"`);
    // Only status.capacity and status.conditions may change (resourceVersion and managedFields aside).
    const strip = (o: StoredObject): Obj => {
      const { resourceVersion: _rv, managedFields: _mf, ...metadata } = o.metadata;
      const { capacity: _c, conditions: _cond, ...status } = obj(o.status);
      return { ...o, metadata, status };
    };
    const before = strip(a.oldObject!);
    const after = strip(a.object!);
    if (!sameJSON(before, after)) {
      const changed = [...new Set([...Object.keys(before), ...Object.keys(after)])].filter((k) => !sameJSON(before[k], after[k]));
      throw admissionForbidden(a, `node "${node}" is not allowed to update fields other than status.capacity and status.conditions: ${changed.join(', ')}`);
    }
  };

  const admitNode = (node: string, a: AdmissionAttributes): void => {
    if (a.name !== node) throw admissionForbidden(a, `node "${node}" is not allowed to modify node "${a.name}"`);
    if (a.operation === 'CREATE') {
      const n = a.object!;
      if (specOf(n).configSource != null) throw admissionForbidden(a, `node "${node}" is not allowed to create pods with a non-nil configSource`);
      const forbidden = forbiddenLabels(modifiedLabels(n.metadata.labels, undefined));
      if (forbidden.length > 0) throw admissionForbidden(a, `node "${node}" is not allowed to set the following labels: ${forbidden.join(', ')}`);
    }
    if (a.operation === 'UPDATE') {
      const n = a.object!;
      const old = a.oldObject!;
      const source = specOf(n).configSource;
      if (source != null && !sameJSON(source, specOf(old).configSource)) throw admissionForbidden(a, `node "${node}" is not allowed to update configSource to a new non-nil configSource`);
      if (!sameJSON(specOf(n).taints, specOf(old).taints)) throw admissionForbidden(a, `node "${node}" is not allowed to modify taints`);
      const forbidden = forbiddenLabels(modifiedLabels(n.metadata.labels, old.metadata.labels));
      if (forbidden.length > 0) throw admissionForbidden(a, `is not allowed to modify labels: ${forbidden.join(', ')}`);
    }
  };

  const admitServiceAccount = async (node: string, a: AdmissionAttributes): Promise<void> => {
    if (a.operation !== 'CREATE' || a.subresource !== 'token') return;
    const ref = obj(specOf(a.object).boundObjectRef);
    if (!specOf(a.object).boundObjectRef || ref.apiVersion !== 'v1' || ref.kind !== 'Pod' || !ref.name) throw admissionForbidden(a, 'node requested token not bound to a pod');
    if (!ref.uid) throw admissionForbidden(a, 'node requested token with a pod binding without a uid');
    const pod = await podOrNotFound(a.namespace, String(ref.name));
    if (ref.uid !== pod.metadata.uid) {
      throw admissionForbidden(a, `the UID in the bound object reference (${String(ref.uid)}) does not match the UID in record (${pod.metadata.uid ?? ''}). The object might have been deleted and then recreated`);
    }
    if (nodeNameOf(pod) !== node) throw admissionForbidden(a, 'node requested token bound to a pod scheduled on a different node');
  };

  /** Leases (in kube-node-lease) and CSINodes: the node's own name; on create, the object's. */
  const admitOwnNamed = (node: string, a: AdmissionAttributes, why: string): void => {
    const name = a.operation === 'CREATE' ? (a.object?.metadata.name ?? '') : a.name;
    if (name !== node) throw admissionForbidden(a, why);
  };

  return {
    name: 'NodeRestriction',
    handles: (op) => op === 'CREATE' || op === 'UPDATE' || op === 'DELETE',
    async admit(a) {
      const node = nodeIdentity(a.user);
      if (node === undefined) return;
      if (node === '') throw admissionForbidden(a, `could not determine node from user "${a.user.name}"`);
      const { group, plural } = a.resource;
      if (group === '') {
        switch (plural) {
          case 'pods':
            if (a.subresource === '') return admitPod(node, a);
            if (a.subresource === 'status') return admitPodStatus(node, a);
            if (a.subresource === 'eviction') return admitPodEviction(node, a);
            throw admissionForbidden(a, `unexpected pod subresource "${a.subresource}", only 'status' and 'eviction' are allowed`);
          case 'nodes':
            return admitNode(node, a);
          case 'persistentvolumeclaims':
            if (a.subresource === 'status') return admitPVCStatus(node, a);
            throw admissionForbidden(a, 'may only update PVC status');
          case 'serviceaccounts':
            return admitServiceAccount(node, a);
        }
        return;
      }
      if (group === 'coordination.k8s.io' && plural === 'leases') {
        if (a.namespace !== 'kube-node-lease') throw admissionForbidden(a, 'can only access leases in the "kube-node-lease" system namespace');
        return admitOwnNamed(node, a, 'can only access node lease with the same name as the requesting node');
      }
      if (group === 'storage.k8s.io' && plural === 'csinodes') return admitOwnNamed(node, a, 'can only access CSINode with the same name as the requesting node');
    },
  };
}
