/**
 * Node defaults as kube 1.24 has them (pkg/apis/core/v1 `SetDefaults_NodeStatus`). The
 * ResourceLists (`status.capacity`, `status.allocatable`) get kube's stored form from
 * `canonicalResourceList` (quantity.ts).
 */
import { type JsonObject, cloneJson, isJsonObject } from '../../../json.js';
import { objectMember } from './json.js';

/** kube's `SetDefaults_NodeStatus`: without `allocatable`, a node's allocatable is its capacity. */
export function setDefaultsNodeStatus(status: JsonObject): void {
  const allocatable = Object.hasOwn(status, 'allocatable') ? status['allocatable'] : undefined;
  const capacity = Object.hasOwn(status, 'capacity') ? status['capacity'] : undefined;
  if ((allocatable === undefined || allocatable === null) && isJsonObject(capacity)) status['allocatable'] = cloneJson(capacity);
}

/** kube's `SetObjectDefaults_Node`. */
export function setDefaultsNode(obj: JsonObject): void {
  const status = objectMember(obj, 'status');
  if (status) setDefaultsNodeStatus(status);
}
