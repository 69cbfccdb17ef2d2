/**
 * kube 1.24's Node authorizer (plugin/pkg/auth/authorizer/node/node_authorizer.go): for a kubelet
 * (`system:node:<name>` in `system:nodes`), secrets, ConfigMaps, PVCs, PVs, VolumeAttachments and
 * service-account tokens only when the graph links them to a pod bound to that node; Leases and
 * CSINodes of its own name; everything else by the static NodeRules (the `system:node` role's
 * rules, which kube 1.24 binds to no one). Other users: no opinion. The NodeRestriction admission
 * plugin narrows the writes these rules allow.
 */
import { nodeIdentity, type StoredObject } from '@plinth/api';
import type { Attributes, Authorizer, Decision, PolicyRule } from '../authorizer.js';
import { ruleAllows } from '../rbac/rules.js';
import { nodeRules } from '../rbac/bootstrap-policy-cluster.js';
import { NodeGraph, type VertexType } from './graph.js';

/** The resources the graph is built from (kube's graph populator's informers). */
export type NodeGraphKind = 'pods' | 'persistentvolumes' | 'volumeattachments';
export const NODE_GRAPH_KINDS: readonly NodeGraphKind[] = ['pods', 'persistentvolumes', 'volumeattachments'];

export interface NodeGraphHandlers {
  /** Everything there is (first list and every relist): replaces what was known. */
  replace(objects: StoredObject[]): void;
  upsert(object: StoredObject): void;
  remove(object: StoredObject): void;
  /**
   * Whether a watch event, of which only the stored JSON and storage key (when known) are read,
   * may change the graph: false skips it undecoded. Where absent, every event is decoded.
   */
  mayMatter?(json: string, type: 'ADDED' | 'MODIFIED' | 'DELETED', key: string | undefined): boolean;
}

/** Where the graph's objects come from: a list-then-watch per kind; `subscribe` returns a stop function. */
export interface NodeGraphSource {
  subscribe(kind: NodeGraphKind, handlers: NodeGraphHandlers): () => void;
}

/** kube's NamespaceNodeLease. */
const NODE_LEASE_NAMESPACE = 'kube-node-lease';

/** A pod's graph key (`namespace/name`) from its storage key (`<prefix>/pods/<namespace>/<name>`). */
function podKeyOf(storageKey: string): string {
  const name = storageKey.lastIndexOf('/');
  return storageKey.slice(storageKey.lastIndexOf('/', name - 1) + 1);
}

const NO_OPINION: Decision = { decision: 'no-opinion' };
const ALLOW: Decision = { decision: 'allow' };
const noOpinion = (reason: string): Decision => ({ decision: 'no-opinion', reason });

export function createNodeAuthorizer(opts: { source: NodeGraphSource; rules?: PolicyRule[] }): Authorizer {
  const graph = new NodeGraph();
  const rules = opts.rules ?? nodeRules();

  const handlers: Record<NodeGraphKind, NodeGraphHandlers> = {
    pods: {
      replace: (objs) => {
        graph.clearPods();
        for (const o of objs) graph.setPod(o);
      },
      upsert: (o) => graph.setPod(o),
      remove: (o) => graph.deletePod(o),
      // kube's graph populator ignores pods never bound to a node, and a pod's update that keeps its
      // uid and node (its references are immutable): most pod events (creates, status updates,
      // the graceful deletion's update) change nothing here, and are not decoded.
      mayMatter: (json, type, key) => json.includes('"nodeName"') && (type !== 'MODIFIED' || key === undefined || !graph.podKeeps(podKeyOf(key), json)),
    },
    persistentvolumes: {
      replace: (objs) => {
        graph.clearPVs();
        for (const o of objs) graph.setPV(o);
      },
      upsert: (o) => graph.setPV(o),
      remove: (o) => graph.deletePV(o),
    },
    volumeattachments: {
      replace: (objs) => {
        graph.clearVolumeAttachments();
        for (const o of objs) graph.setVolumeAttachment(o);
      },
      upsert: (o) => graph.setVolumeAttachment(o),
      remove: (o) => graph.deleteVolumeAttachment(o),
    },
  };
  let resolveSynced!: () => void;
  const synced = new Promise<void>((r) => (resolveSynced = r));
  const listed = new Set<NodeGraphKind>();
  const stops = NODE_GRAPH_KINDS.map((kind) =>
    opts.source.subscribe(kind, {
      ...handlers[kind],
      replace(objs) {
        handlers[kind].replace(objs);
        listed.add(kind);
        if (listed.size === NODE_GRAPH_KINDS.length) resolveSynced();
      },
    }),
  );

  const related = (node: string, type: VertexType, a: Attributes): Decision => {
    if (!a.name) return noOpinion('No Object name found');
    return graph.reaches(node, type, a.namespace, a.name) ? ALLOW : noOpinion(`no relationship found between node '${node}' and this object`);
  };
  /** get, list and watch of one named object (a list/watch names it by a metadata.name field selector). */
  const readNamespaced = (node: string, type: VertexType, a: Attributes): Decision => {
    if (a.verb !== 'get' && a.verb !== 'list' && a.verb !== 'watch') return noOpinion('can only read resources of this type');
    if (a.subresource) return noOpinion('cannot read subresource');
    if (!a.namespace) return noOpinion('can only read namespaced object of this type');
    return related(node, type, a);
  };
  const getOnly = (node: string, type: VertexType, a: Attributes): Decision => {
    if (a.verb !== 'get') return noOpinion('can only get individual resources of this type');
    if (a.subresource) return noOpinion('cannot get subresource');
    return related(node, type, a);
  };
  const statusUpdate = (node: string, type: VertexType, a: Attributes): Decision => {
    if (a.verb !== 'update' && a.verb !== 'patch') return noOpinion('can only get/update/patch this type');
    if (a.subresource !== 'status') return noOpinion('can only update status subresource');
    return related(node, type, a);
  };
  const createToken = (node: string, a: Attributes): Decision => {
    if (a.verb !== 'create' || !a.name) return noOpinion('can only create tokens for individual service accounts');
    if (a.subresource !== 'token') return noOpinion('can only create token subresource of serviceaccount');
    return graph.reaches(node, 'serviceaccount', a.namespace, a.name) ? ALLOW : noOpinion(`no relationship found between node '${node}' and this object`);
  };
  /** Leases and CSINodes: the node's own name, except on create (NodeRestriction checks the object then). */
  const ownNamed = (node: string, a: Attributes, what: 'lease' | 'CSINode'): Decision => {
    const verbs = ['get', 'create', 'update', 'patch', 'delete'];
    if (!verbs.includes(a.verb)) return noOpinion(what === 'lease' ? 'can only get, create, update, patch, or delete a node lease' : 'can only get, create, update, patch, or delete a CSINode');
    if (what === 'lease') {
      if (a.namespace !== NODE_LEASE_NAMESPACE) return noOpinion(`can only access leases in the "${NODE_LEASE_NAMESPACE}" system namespace`);
    } else if (a.subresource) return noOpinion('cannot authorize CSINode subresources');
    if (a.verb !== 'create' && a.name !== node) return noOpinion(what === 'lease' ? 'can only access node lease with the same name as the requesting node' : 'can only access CSINode with the same name as the requesting node');
    return ALLOW;
  };

  return {
    synced,
    authorize(a) {
      const node = nodeIdentity(a.user);
      if (node === undefined) return NO_OPINION;
      if (node === '') return noOpinion(`unknown node for user ${JSON.stringify(a.user.name)}`);
      if (a.isResourceRequest) {
        if (a.apiGroup === '') {
          switch (a.resource) {
            case 'secrets':
              return readNamespaced(node, 'secret', a);
            case 'configmaps':
              return readNamespaced(node, 'configmap', a);
            case 'persistentvolumeclaims':
              return a.subresource === 'status' ? statusUpdate(node, 'pvc', a) : getOnly(node, 'pvc', a);
            case 'persistentvolumes':
              return getOnly(node, 'pv', a);
            case 'serviceaccounts':
              return createToken(node, a);
          }
        } else if (a.apiGroup === 'storage.k8s.io') {
          if (a.resource === 'volumeattachments') return getOnly(node, 'volumeattachment', a);
          if (a.resource === 'csinodes') return ownNamed(node, a, 'CSINode');
        } else if (a.apiGroup === 'coordination.k8s.io' && a.resource === 'leases') return ownNamed(node, a, 'lease');
      }
      for (const r of rules) if (ruleAllows(a, r)) return ALLOW;
      return NO_OPINION;
    },
    rulesFor(user) {
      // kube: a node's permissions are not enumerable; anyone else gets nothing from this authorizer.
      if (nodeIdentity(user) !== undefined) return { resourceRules: [], nonResourceRules: [], incomplete: true, evaluationError: 'node authorizer does not support user rule resolution' };
      return { resourceRules: [], nonResourceRules: [], incomplete: false };
    },
    close() {
      for (const stop of stops) stop();
    },
  };
}
