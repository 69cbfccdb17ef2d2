/**
 * The write guard of the four RBAC resources (kube's policybased storages): escalation checks
 * against the request's user and the server's authorizer, run on the object mutating admission
 * left (see WriteGuard), refused as kube refuses them — 403 Forbidden on the object, "... is
 * forbidden: user ... is attempting to grant RBAC permissions not currently held: ...".
 */
import { StatusError, forbidden, groupResourceOf, type ResourceDefinition, type StoredObject } from '@plinth/api';
import { EscalationError, UnsupportedRoleRefKindError, checkRbacWrite, type Authorizer, type PolicyRule, type RbacObject, type RbacResource } from '@plinth/auth';
import type { ResourceStore, WriteGuard } from './store.js';

const RBAC_RESOURCES: ReadonlySet<string> = new Set(['roles', 'clusterroles', 'rolebindings', 'clusterrolebindings']);

export function isRbacResource(def: ResourceDefinition): boolean {
  return def.group === 'rbac.authorization.k8s.io' && RBAC_RESOURCES.has(def.plural);
}

export interface RbacEscalationGuardDeps {
  /** Read at each check, so the guard can be built before the authorizer is final. */
  authorizer: () => Authorizer;
  roles: () => ResourceStore;
  clusterRoles: () => ResourceStore;
}

const rulesOf = (o: StoredObject): PolicyRule[] => ((o as { rules?: PolicyRule[] }).rules ?? []);

export function createRbacEscalationGuard(def: ResourceDefinition, deps: RbacEscalationGuardDeps): WriteGuard {
  const resource = def.plural as RbacResource;
  return async ({ scope, name, object, oldObject }) => {
    const namespace = def.namespaced ? scope.namespace || object.metadata.namespace || '' : '';
    try {
      await checkRbacWrite(
        {
          authorizer: deps.authorizer(),
          roleRules: async (kind, ns, name) => {
            const reader = { user: scope.user, namespace: ns };
            return rulesOf(kind === 'Role' ? await deps.roles().get(reader, name) : await deps.clusterRoles().get({ ...reader, namespace: '' }, name));
          },
        },
        { resource, user: scope.user, namespace, name, object: object as unknown as RbacObject, oldObject: oldObject as unknown as RbacObject | undefined },
      );
    } catch (e) {
      if (e instanceof EscalationError) throw forbidden(groupResourceOf(def), object.metadata.name ?? '', e.message);
      // kube answers its resolver's plain error as any untyped error: 500, no reason, its text.
      if (e instanceof UnsupportedRoleRefKindError) throw new StatusError({ code: 500, reason: '', message: e.message });
      throw e;
    }
  };
}
