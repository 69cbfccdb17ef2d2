import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { UserInfo } from '@plinth/api';
import { checkRbacWrite, EscalationError, UnsupportedRoleRefKindError, type EscalationCheckDeps, type RbacObject } from './escalation.js';
import type { Attributes, PolicyRule } from '../authorizer.js';

const bob: UserInfo = { name: 'bob', groups: ['system:authenticated'] };
const podsReader: PolicyRule = { verbs: ['get'], apiGroups: [''], resources: ['pods'] };
const secretsReader: PolicyRule = { verbs: ['get'], apiGroups: [''], resources: ['secrets'] };

/** A fake authorizer: `held` are the user's rules; `allowedVerbs` the extra verbs authorize() allows. */
function deps(held: PolicyRule[], allowed: (a: Attributes) => boolean = () => false, roles: Record<string, PolicyRule[]> = {}): EscalationCheckDeps & { asked: Attributes[] } {
  const asked: Attributes[] = [];
  return {
    asked,
    authorizer: {
      authorize: (a) => {
        asked.push(a);
        return allowed(a) ? { decision: 'allow' } : { decision: 'no-opinion' };
      },
      rulesFor: () => ({ resourceRules: held, nonResourceRules: [], incomplete: false }),
    },
    roleRules: async (kind, ns, name) => {
      const rules = roles[`${kind}/${ns}/${name}`];
      if (!rules) throw new Error(`${kind} ${name} not found`);
      return rules;
    },
  };
}

const role = (rules: PolicyRule[], extra: Partial<RbacObject> = {}): RbacObject => ({ metadata: { name: 'r' }, rules, ...extra });
const binding = (kind: string, name: string): RbacObject => ({ metadata: { name: 'b' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind, name }, subjects: [] });

describe('checkRbacWrite: roles', () => {
  it('allows a role within what the user holds', async () => {
    await checkRbacWrite(deps([podsReader]), { resource: 'roles', user: bob, namespace: 'ns', name: '', object: role([podsReader]) });
  });

  it("refuses a role granting more, with kube's message", async () => {
    await assert.rejects(
      checkRbacWrite(deps([podsReader]), { resource: 'roles', user: bob, namespace: 'ns', name: '', object: role([podsReader, secretsReader]) }),
      (e: unknown) =>
        e instanceof EscalationError &&
        e.message === 'user "bob" (groups=["system:authenticated"]) is attempting to grant RBAC permissions not currently held:\n{APIGroups:[""], Resources:["secrets"], Verbs:["get"]}',
    );
  });

  it("escalate on the role allows it, asked as kube asks: the request's name ('' for a create)", async () => {
    const d = deps([], (a) => a.verb === 'escalate');
    await checkRbacWrite(d, { resource: 'roles', user: bob, namespace: 'ns', name: 'r', object: role([secretsReader]) });
    assert.deepEqual(
      { verb: d.asked[0]!.verb, group: d.asked[0]!.apiGroup, resource: d.asked[0]!.resource, ns: d.asked[0]!.namespace, name: d.asked[0]!.name },
      { verb: 'escalate', group: 'rbac.authorization.k8s.io', resource: 'roles', ns: 'ns', name: 'r' },
    );
    // kube's RoleEscalationAuthorized asks with RequestInfo.Name: escalate on `r` alone does not cover a POST.
    const onlyR = deps([], (a) => a.verb === 'escalate' && a.name === 'r');
    await assert.rejects(checkRbacWrite(onlyR, { resource: 'roles', user: bob, namespace: 'ns', name: '', object: role([secretsReader]) }), EscalationError);
  });

  it('system:masters needs nothing', async () => {
    const d = deps([]);
    await checkRbacWrite(d, { resource: 'clusterroles', user: { name: 'root', groups: ['system:masters'] }, namespace: '', name: '', object: role([secretsReader]) });
    assert.equal(d.asked.length, 0);
  });

  it('an update changing only owner references and finalizers is allowed', async () => {
    const old = role([secretsReader]);
    const next = structuredClone(old);
    next.metadata['finalizers'] = ['x'];
    await checkRbacWrite(deps([]), { resource: 'roles', user: bob, namespace: 'ns', name: '', object: next, oldObject: old });
    next.rules = [secretsReader, podsReader];
    await assert.rejects(checkRbacWrite(deps([]), { resource: 'roles', user: bob, namespace: 'ns', name: '', object: next, oldObject: old }), EscalationError);
  });

  it("kube's IsOnlyMutatingGCFields: empty and absent lists are equal; anything else that changed counts, managedFields and resourceVersion included", async () => {
    const old = role([secretsReader], { metadata: { name: 'r', resourceVersion: '5', labels: {} } });
    const gcOnly = (next: RbacObject) => checkRbacWrite(deps([]), { resource: 'roles', user: bob, namespace: 'ns', name: 'r', object: next, oldObject: old });
    await gcOnly({ ...structuredClone(old), metadata: { name: 'r', resourceVersion: '5', ownerReferences: [{ uid: 'u' }], finalizers: [] }, apiVersion: 'rbac.authorization.k8s.io/v1' });
    await assert.rejects(gcOnly({ ...structuredClone(old), metadata: { name: 'r', resourceVersion: '4' } }), EscalationError);
    await assert.rejects(gcOnly({ ...structuredClone(old), metadata: { name: 'r', resourceVersion: '5', managedFields: [{ manager: 'm' }] } }), EscalationError);
    await assert.rejects(gcOnly({ ...structuredClone(old), metadata: { name: 'r', resourceVersion: '5', labels: { a: 'b' } } }), EscalationError);
  });

  it('an aggregationRule without selectors is none (kube: hasAggregationRule)', async () => {
    await checkRbacWrite(deps([podsReader]), { resource: 'clusterroles', user: bob, namespace: '', name: '', object: role([podsReader], { aggregationRule: { clusterRoleSelectors: [] } }) });
  });

  it('an aggregationRule needs full authority', async () => {
    const agg = role([], { aggregationRule: { clusterRoleSelectors: [{ matchLabels: { a: 'b' } }] } });
    await assert.rejects(checkRbacWrite(deps([podsReader]), { resource: 'clusterroles', user: bob, namespace: '', name: '', object: agg }), /must have cluster-admin privileges to use the aggregationRule/);
    const all: PolicyRule[] = [{ verbs: ['*'], apiGroups: ['*'], resources: ['*'] }, { verbs: ['*'], nonResourceURLs: ['*'] }];
    await checkRbacWrite(deps(all), { resource: 'clusterroles', user: bob, namespace: '', name: '', object: agg });
  });
});

describe('checkRbacWrite: bindings', () => {
  const roles = { 'ClusterRole//secret-reader': [secretsReader], 'Role/ns/pod-reader': [podsReader] };

  it('a binding to a role whose permissions the user holds is allowed', async () => {
    await checkRbacWrite(deps([podsReader], undefined, roles), { resource: 'rolebindings', user: bob, namespace: 'ns', name: '', object: binding('Role', 'pod-reader') });
  });

  it('a binding to more than the user holds is refused', async () => {
    await assert.rejects(
      checkRbacWrite(deps([podsReader], undefined, roles), { resource: 'clusterrolebindings', user: bob, namespace: '', name: '', object: binding('ClusterRole', 'secret-reader') }),
      /is attempting to grant RBAC permissions not currently held:\n\{APIGroups:\[""\], Resources:\["secrets"\], Verbs:\["get"\]\}/,
    );
  });

  it('bind on the referenced role allows it, asked in the binding namespace', async () => {
    const d = deps([], (a) => a.verb === 'bind' && a.resource === 'clusterroles' && a.name === 'secret-reader', roles);
    await checkRbacWrite(d, { resource: 'rolebindings', user: bob, namespace: 'ns', name: '', object: binding('ClusterRole', 'secret-reader') });
    assert.equal(d.asked[0]!.namespace, 'ns');
  });

  it("a roleRef kind other than Role or ClusterRole is kube's resolver error (before validation)", async () => {
    await assert.rejects(checkRbacWrite(deps([], undefined, roles), { resource: 'rolebindings', user: bob, namespace: 'ns', name: '', object: binding('Foo', 'x') }), (e: unknown) => e instanceof UnsupportedRoleRefKindError && e.message === 'unsupported role reference kind: "Foo"');
  });

  it('a missing role propagates the read error', async () => {
    await assert.rejects(checkRbacWrite(deps([], undefined, roles), { resource: 'rolebindings', user: bob, namespace: 'ns', name: '', object: binding('Role', 'nope') }), /not found/);
  });
});
