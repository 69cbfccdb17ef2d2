/**
 * kube's default NodeIdentifier (pkg/auth/nodeidentifier): a kubelet is a user named
 * `system:node:<name>` in the group `system:nodes`. Shared by the Node authorizer and the
 * NodeRestriction admission plugin.
 */
import type { UserInfo } from './types.js';

export const NODE_USER_PREFIX = 'system:node:';
export const NODES_GROUP = 'system:nodes';

/**
 * The node a user acts for: undefined when the user is not a node; '' when it is one but names
 * no node (`system:node:` alone), which both node plugins refuse.
 */
export function nodeIdentity(user: UserInfo): string | undefined {
  if (!user.name.startsWith(NODE_USER_PREFIX)) return undefined;
  if (!user.groups.includes(NODES_GROUP)) return undefined;
  return user.name.slice(NODE_USER_PREFIX.length);
}
