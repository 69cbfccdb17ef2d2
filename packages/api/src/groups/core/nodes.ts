/**
 * core/v1 Nodes as kube-apiserver 1.24 has them (pkg/registry/core/node): cluster-scoped, short
 * name `no`, every verb, with `status` and `proxy`. Unlike every other kind, a create keeps the
 * status it is given (kubelets register with theirs); an update keeps the old status, `/status`
 * the old spec; DynamicKubeletConfig is off in 1.24, so a new `spec.configSource` (and on create a
 * `status.config`) is dropped. Printer printNode; field selectors metadata.name and
 * spec.unschedulable (kube's node field label conversion). `proxy` is answered by the
 * apiserver's node proxy connecter (kube's node ResourceLocation).
 */
import type { ResourceStrategy } from '../../catalog.js';
import { age, ageColumn, col, fieldAt, nameColumn, type TableDefinition } from '../../tables.js';
import type { StoredObject } from '../../types.js';
import { defineResource } from '../define.js';
import { NAME_WATCH_INDEX } from '../../selectors/fields.js';
import { setDefaultsNode } from './defaults/node.js';
import { dropDisabledNodeFields, validateNode, validateNodeUpdate } from './validation/node.js';

const nodeStrategy: ResourceStrategy = {
  defaults: (obj) => setDefaultsNode(obj),
  prepareForCreate(obj) {
    // Status is kept on create (kube: "Nodes allow *all* fields, including status, to be set on create").
    dropDisabledNodeFields(obj, undefined);
    dropDisabledNodeFields(obj, undefined, true);
  },
  prepareForUpdate(obj, old) {
    if (old['status'] === undefined) delete obj['status'];
    else obj['status'] = old['status'];
    dropDisabledNodeFields(obj, old);
  },
  validate: (obj) => validateNode(obj),
  validateUpdate: (obj, old) => validateNodeUpdate(obj, old),
};

const nodeStatusStrategy: ResourceStrategy = {
  prepareForUpdate(obj, old) {
    if (old['spec'] === undefined) delete obj['spec'];
    else obj['spec'] = old['spec'];
    dropDisabledNodeFields(obj, old, true);
  },
  validate: () => [],
  validateUpdate: (obj, old) => validateNodeUpdate(obj, old),
  validateOnUpdate: false,
};

/** The role label prefix and the older role label kubectl's ROLES column reads. */
const ROLE_PREFIX = 'node-role.kubernetes.io/';
const ROLE_LABEL = 'kubernetes.io/role';

/** kube's findNodeRoles: roles from `node-role.kubernetes.io/<role>` keys and `kubernetes.io/role` values, sorted, unique. */
export function nodeRoles(node: StoredObject): string[] {
  const roles = new Set<string>();
  for (const [k, v] of Object.entries(node.metadata.labels ?? {})) {
    if (k.startsWith(ROLE_PREFIX)) {
      const role = k.slice(ROLE_PREFIX.length);
      if (role) roles.add(role);
    } else if (k === ROLE_LABEL && v !== '') roles.add(v);
  }
  return [...roles].sort();
}

/** kube's printNode STATUS: the Ready condition (Ready / NotReady / Unknown), then SchedulingDisabled. */
export function nodeStatusCell(node: StoredObject): string {
  const conditions = fieldAt(node, 'status', 'conditions');
  const status: string[] = [];
  const ready = Array.isArray(conditions) ? conditions.filter((c) => fieldAt(c, 'type') === 'Ready').pop() : undefined;
  if (ready !== undefined) status.push(fieldAt(ready, 'status') === 'True' ? 'Ready' : 'NotReady');
  else status.push('Unknown');
  if (fieldAt(node, 'spec', 'unschedulable') === true) status.push('SchedulingDisabled');
  return status.join(',');
}

/** The first address of a type, or kube's `<none>`. */
function addressOf(node: StoredObject, type: string): string {
  const addresses = fieldAt(node, 'status', 'addresses');
  const found = Array.isArray(addresses) ? addresses.find((a) => fieldAt(a, 'type') === type) : undefined;
  const address = fieldAt(found, 'address');
  return found !== undefined && typeof address === 'string' ? address : '<none>';
}

const infoOr = (node: StoredObject, key: string): string => {
  const v = fieldAt(node, 'status', 'nodeInfo', key);
  return typeof v === 'string' && v !== '' ? v : '<unknown>';
};

const nodeTable: TableDefinition = {
  columns: [
    nameColumn,
    col('Status', 'string', 'The readiness of the node, and whether it takes new pods.'),
    col('Roles', 'string', "The node's roles, from its role labels."),
    ageColumn,
    col('Version', 'string', "The kubelet's version."),
    col('Internal-IP', 'string', 'The first internal IP of the node.', { priority: 1 }),
    col('External-IP', 'string', 'The first external IP of the node.', { priority: 1 }),
    col('OS-Image', 'string', "The node's OS image.", { priority: 1 }),
    col('Kernel-Version', 'string', "The node's kernel version.", { priority: 1 }),
    col('Container-Runtime', 'string', "The node's container runtime and its version.", { priority: 1 }),
  ],
  cells: (obj, now) => {
    const version = fieldAt(obj, 'status', 'nodeInfo', 'kubeletVersion');
    return [
      obj.metadata.name ?? '',
      nodeStatusCell(obj),
      nodeRoles(obj).join(',') || '<none>',
      age(obj, now),
      typeof version === 'string' ? version : '',
      addressOf(obj, 'InternalIP'),
      addressOf(obj, 'ExternalIP'),
      infoOr(obj, 'osImage'),
      infoOr(obj, 'kernelVersion'),
      infoOr(obj, 'containerRuntimeVersion'),
    ];
  },
};

export const nodes = defineResource({
  group: '',
  version: 'v1',
  kind: 'Node',
  plural: 'nodes',
  shortNames: ['no'],
  namespaced: false,
  description: 'A Node is a machine that runs pods, registered by its kubelet.',
  strategy: nodeStrategy,
  subresources: [
    // kube's connect verbs: GET, POST, PUT, PATCH, DELETE (and HEAD, OPTIONS) to the kubelet.
    { name: 'proxy', verbs: ['create', 'delete', 'get', 'patch', 'update'], connect: { path: true, kind: 'NodeProxyOptions' } },
    { name: 'status', verbs: ['get', 'patch', 'update'], strategy: nodeStatusStrategy },
  ],
  table: nodeTable,
  fieldSelector: {
    labels: ['metadata.name', 'spec.unschedulable'],
    fields: (obj, out) => {
      out['spec.unschedulable'] = String(fieldAt(obj, 'spec', 'unschedulable') === true);
    },
    // kube's node.NameTriggerFunc: each kubelet watches its own Node by name.
    index: NAME_WATCH_INDEX,
  },
});
