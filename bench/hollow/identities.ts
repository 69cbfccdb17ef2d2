/**
 * The hollow cluster's identities as a `--token-auth-file` (token,user,uid,"group1,group2"):
 * each node `system:node:<name>` in `system:nodes` (Node authorizer + NodeRestriction), the
 * scheduler `system:kube-scheduler`, and the two controllers as their kube-system service accounts
 * (what kube-controller-manager --use-service-account-credentials uses; bootstrap RBAC binds them).
 */
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';

/** Bearer tokens of every hollow actor. */
export interface HollowIdentities {
  nodes: Array<{ name: string; token: string }>;
  scheduler: string;
  deploymentController: string;
  replicaSetController: string;
}

const token = (): string => randomBytes(16).toString('hex');

/** Tokens for `nodes` hollow nodes named `hollow-node-<i>` and the control-plane stand-ins. */
export function createIdentities(nodes: number): HollowIdentities {
  return {
    nodes: Array.from({ length: nodes }, (_, i) => ({ name: `hollow-node-${i}`, token: token() })),
    scheduler: token(),
    deploymentController: token(),
    replicaSetController: token(),
  };
}

/** Writes them in kube's static token file format. */
export function writeTokenFile(path: string, ids: HollowIdentities): void {
  const sa = (name: string): string => `system:serviceaccount:kube-system:${name}`;
  const saGroups = '"system:serviceaccounts,system:serviceaccounts:kube-system"';
  const lines = [
    `${ids.scheduler},system:kube-scheduler,uid-kube-scheduler`,
    `${ids.deploymentController},${sa('deployment-controller')},uid-deployment-controller,${saGroups}`,
    `${ids.replicaSetController},${sa('replicaset-controller')},uid-replicaset-controller,${saGroups}`,
    ...ids.nodes.map((n) => `${n.token},system:node:${n.name},uid-${n.name},"system:nodes"`),
  ];
  writeFileSync(path, `${lines.join('\n')}\n`, { mode: 0o600 });
}
