/**
 * The Node authorizer's graph (kube 1.24 plugin/pkg/auth/authorizer/node/graph.go and
 * graph_populator.go) as reverse indices: which pods reference a secret, ConfigMap, PVC or service
 * account, which PVs a claim and a secret lead to, and the node each VolumeAttachment names.
 * kube's edges are secret/configmap/pvc/serviceaccount → pod → node, pv → pvc, secret → pv and
 * volumeattachment → node; "reachable from the node" is exactly what `reaches` answers, with no
 * graph walk: each question reads the pods of one reference.
 */
import { podClaimNames, podConfigMapNames, podSecretNames, pvSecretRefs, MIRROR_POD_ANNOTATION_KEY, type StoredObject } from '@plinth/api';

/** The vertex types kube's authorizer starts from. */
export type VertexType = 'secret' | 'configmap' | 'pvc' | 'pv' | 'volumeattachment' | 'serviceaccount';

interface PodRecord {
  node: string;
  uid: string;
  /** `ns/name` of what the pod references, by vertex type (empty for a mirror pod). */
  refs: Array<[Exclude<VertexType, 'pv' | 'volumeattachment'>, string]>;
}

const keyOf = (namespace: string, name: string): string => `${namespace}/${name}`;

function addTo(m: Map<string, Set<string>>, k: string, v: string): void {
  let s = m.get(k);
  if (!s) m.set(k, (s = new Set()));
  s.add(v);
}

function removeFrom(m: Map<string, Set<string>>, k: string, v: string): void {
  const s = m.get(k);
  if (!s) return;
  s.delete(v);
  if (s.size === 0) m.delete(k);
}

export class NodeGraph {
  #pods = new Map<string, PodRecord>();
  /** Vertex type → `ns/name` of the referenced object → the pods (`ns/name`) referencing it. */
  #podsOf = new Map<string, Map<string, Set<string>>>([
    ['secret', new Map()],
    ['configmap', new Map()],
    ['pvc', new Map()],
    ['serviceaccount', new Map()],
  ]);
  /** PV name → its claim (`ns/name`) and the kubelet-visible secrets (`ns/name`) it names. */
  #pvs = new Map<string, { claim: string; secrets: string[] }>();
  #pvsOfClaim = new Map<string, Set<string>>();
  #pvsOfSecret = new Map<string, Set<string>>();
  /** VolumeAttachment name → the node it attaches to. */
  #attachments = new Map<string, string>();

  /**
   * kube's graphPopulator.updatePod then AddPod: an unscheduled pod is ignored; a pod already known
   * on the same node with the same uid is unchanged (what it references is immutable).
   */
  setPod(pod: StoredObject): void {
    const spec = (pod.spec ?? {}) as Record<string, unknown>;
    const node = typeof spec.nodeName === 'string' ? spec.nodeName : '';
    if (!node) return;
    const ns = pod.metadata.namespace ?? '';
    const key = keyOf(ns, pod.metadata.name ?? '');
    const uid = pod.metadata.uid ?? '';
    const known = this.#pods.get(key);
    if (known && known.node === node && known.uid === uid) return;
    this.deletePod(pod);
    const refs: PodRecord['refs'] = [];
    // A mirror pod only links to its node: a node must never gain access through a pod it created.
    if (pod.metadata.annotations?.[MIRROR_POD_ANNOTATION_KEY] === undefined) {
      const sa = typeof spec.serviceAccountName === 'string' ? spec.serviceAccountName : '';
      if (sa) refs.push(['serviceaccount', keyOf(ns, sa)]);
      for (const n of podSecretNames(pod)) refs.push(['secret', keyOf(ns, n)]);
      for (const n of podConfigMapNames(pod)) refs.push(['configmap', keyOf(ns, n)]);
      for (const n of podClaimNames(pod)) refs.push(['pvc', keyOf(ns, n)]);
    }
    this.#pods.set(key, { node, uid, refs });
    for (const [type, ref] of refs) addTo(this.#podsOf.get(type)!, ref, key);
  }

  /**
   * Whether `json`, a new version of the pod at `key` (`namespace/name`), keeps the uid and node
   * the graph has for it: then setPod would change nothing. A text test (the uid and the node as
   * JSON members); it may say false for a version that keeps them, never true for one that does not
   * name both.
   */
  podKeeps(key: string, json: string): boolean {
    const known = this.#pods.get(key);
    return !!known && json.includes(`"uid":${JSON.stringify(known.uid)}`) && json.includes(`"nodeName":${JSON.stringify(known.node)}`);
  }

  deletePod(pod: StoredObject): void {
    const key = keyOf(pod.metadata.namespace ?? '', pod.metadata.name ?? '');
    const known = this.#pods.get(key);
    if (!known) return;
    this.#pods.delete(key);
    for (const [type, ref] of known.refs) removeFrom(this.#podsOf.get(type)!, ref, key);
  }

  /** kube's AddPV: a PV without a claimRef links to nothing. */
  setPV(pv: StoredObject): void {
    this.deletePV(pv);
    const claimRef = ((pv.spec ?? {}) as Record<string, unknown>).claimRef as { namespace?: unknown; name?: unknown } | undefined;
    if (!claimRef || typeof claimRef !== 'object') return;
    const name = pv.metadata.name ?? '';
    const claim = keyOf(typeof claimRef.namespace === 'string' ? claimRef.namespace : '', typeof claimRef.name === 'string' ? claimRef.name : '');
    const secrets = pvSecretRefs(pv)
      .filter((s) => s.kubeletVisible)
      .map((s) => keyOf(s.namespace, s.name));
    this.#pvs.set(name, { claim, secrets });
    addTo(this.#pvsOfClaim, claim, name);
    for (const s of secrets) addTo(this.#pvsOfSecret, s, name);
  }

  deletePV(pv: StoredObject): void {
    const name = pv.metadata.name ?? '';
    const known = this.#pvs.get(name);
    if (!known) return;
    this.#pvs.delete(name);
    removeFrom(this.#pvsOfClaim, known.claim, name);
    for (const s of known.secrets) removeFrom(this.#pvsOfSecret, s, name);
  }

  /** kube's AddVolumeAttachment: an attachment with no node links to nothing. */
  setVolumeAttachment(va: StoredObject): void {
    const node = ((va.spec ?? {}) as Record<string, unknown>).nodeName;
    const name = va.metadata.name ?? '';
    if (typeof node === 'string' && node) this.#attachments.set(name, node);
    else this.#attachments.delete(name);
  }

  deleteVolumeAttachment(va: StoredObject): void {
    this.#attachments.delete(va.metadata.name ?? '');
  }

  clearPods(): void {
    this.#pods.clear();
    for (const m of this.#podsOf.values()) m.clear();
  }

  clearPVs(): void {
    this.#pvs.clear();
    this.#pvsOfClaim.clear();
    this.#pvsOfSecret.clear();
  }

  clearVolumeAttachments(): void {
    this.#attachments.clear();
  }

  /** kube's hasPathFrom: whether the object (namespace '' for PVs and attachments) leads to the node. */
  reaches(node: string, type: VertexType, namespace: string, name: string): boolean {
    const key = keyOf(namespace, name);
    switch (type) {
      case 'volumeattachment':
        return this.#attachments.get(name) === node;
      case 'pv':
        return this.#pvReaches(node, name);
      case 'secret':
        if (this.#anyPodOn(node, this.#podsOf.get('secret')!.get(key))) return true;
        for (const pv of this.#pvsOfSecret.get(key) ?? []) if (this.#pvReaches(node, pv)) return true;
        return false;
      default:
        return this.#anyPodOn(node, this.#podsOf.get(type)!.get(key));
    }
  }

  #pvReaches(node: string, pv: string): boolean {
    const known = this.#pvs.get(pv);
    return !!known && this.#anyPodOn(node, this.#podsOf.get('pvc')!.get(known.claim));
  }

  #anyPodOn(node: string, pods: Set<string> | undefined): boolean {
    if (!pods) return false;
    for (const p of pods) if (this.#pods.get(p)?.node === node) return true;
    return false;
  }
}
