import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Catalog } from '../catalog.js';
import { builtinDefinitions, requireKindDefinition } from '../kube-schema/definitions.js';
import { DecodeError, type Schema, conform } from '../schema.js';
import { builtinResources } from './index.js';

const defs = builtinDefinitions();

function refs(schema: Schema, out: Set<string>): void {
  if (schema.$ref) out.add(schema.$ref);
  for (const p of Object.values(schema.properties ?? {})) refs(p, out);
  if (schema.items) refs(schema.items, out);
  if (schema.additionalProperties) refs(schema.additionalProperties, out);
}

describe('builtinResources', () => {
  it('lists the resources in order and builds a catalog', () => {
    const all = builtinResources();
    assert.deepEqual(all.map((d) => d.plural), [
      'bindings',
      'componentstatuses',
      'configmaps',
      'endpoints',
      'events',
      'limitranges',
      'namespaces',
      'nodes',
      'persistentvolumeclaims',
      'persistentvolumes',
      'pods',
      'podtemplates',
      'replicationcontrollers',
      'resourcequotas',
      'secrets',
      'serviceaccounts',
      'services',
      'apiservices',
      'controllerrevisions',
      'daemonsets',
      'deployments',
      'replicasets',
      'statefulsets',
      'events',
      'events',
      'selfsubjectreviews',
      'tokenreviews',
      'localsubjectaccessreviews',
      'selfsubjectaccessreviews',
      'selfsubjectrulesreviews',
      'subjectaccessreviews',
      'horizontalpodautoscalers',
      'horizontalpodautoscalers',
      'horizontalpodautoscalers',
      'horizontalpodautoscalers',
      'cronjobs',
      'jobs',
      'cronjobs',
      'certificatesigningrequests',
      'ingressclasses',
      'ingresses',
      'networkpolicies',
      'poddisruptionbudgets',
      'poddisruptionbudgets',
      'podsecuritypolicies',
      'clusterroles',
      'clusterrolebindings',
      'roles',
      'rolebindings',
      'csidrivers',
      'csinodes',
      'csistoragecapacities',
      'storageclasses',
      'volumeattachments',
      'csistoragecapacities',
      'mutatingwebhookconfigurations',
      'validatingwebhookconfigurations',
      'customresourcedefinitions',
      'priorityclasses',
      'leases',
      'runtimeclasses',
      'runtimeclasses',
      'endpointslices',
      'endpointslices',
      'flowschemas',
      'prioritylevelconfigurations',
      'flowschemas',
      'prioritylevelconfigurations',
    ]);
    const cat = new Catalog(all);
    assert.equal(cat.lookupKind('rbac.authorization.k8s.io/v1', 'RoleBinding'), cat.lookup('rbac.authorization.k8s.io', 'v1', 'rolebindings'));
    // A sub-resource's own kind is a kind of the catalog too; it is no resource.
    assert.equal(cat.lookupKind('authentication.k8s.io/v1', 'TokenRequest')?.kind, 'TokenRequest');
    assert.equal(cat.lookup('authentication.k8s.io', 'v1', 'tokenrequests'), undefined);
    assert.deepEqual(cat.kinds().map((k) => k.kind).slice(-4), ['PriorityLevelConfiguration', 'Eviction', 'Scale', 'TokenRequest']);
    assert.equal(cat.lookupKind('coordination.k8s.io/v1', 'Lease'), cat.lookup('coordination.k8s.io', 'v1', 'leases'));
    // Only stored resources get stores and namespace cleanup (one definition per storage).
    assert.deepEqual(cat.stored().map((d) => d.plural).includes('tokenreviews'), false);
    assert.deepEqual(cat.namespacedResources().map((d) => d.plural), ['configmaps', 'endpoints', 'events', 'limitranges', 'persistentvolumeclaims', 'pods', 'podtemplates', 'replicationcontrollers', 'resourcequotas', 'secrets', 'serviceaccounts', 'services', 'controllerrevisions', 'daemonsets', 'deployments', 'replicasets', 'statefulsets', 'horizontalpodautoscalers', 'cronjobs', 'jobs', 'ingresses', 'networkpolicies', 'poddisruptionbudgets', 'roles', 'rolebindings', 'csistoragecapacities', 'leases', 'endpointslices']);
  });

  it("takes every kind's schema from the schema source, with its list kind", () => {
    for (const d of builtinResources()) {
      assert.equal(d.schema.goType?.endsWith(`.${d.kind}`), true, d.kind);
      assert.ok(d.schema.properties?.['metadata'], `${d.kind} has metadata`);
      if (d.listKind) assert.ok(requireKindDefinition({ group: d.group, version: d.version, kind: d.listKind }), d.listKind);
      assert.ok(d.description && d.description.length <= 100, `${d.kind}: a one-line description of plinth's own`);
    }
  });

  it('references only known definitions', () => {
    const used = new Set<string>();
    for (const d of builtinResources()) refs(d.schema, used);
    for (const d of defs.values()) refs(d, used);
    for (const r of used) assert.ok(defs.has(r), `missing definition ${r}`);
  });

  it('decodes bodies through the schemas', () => {
    const crb = builtinResources().find((d) => d.kind === 'ClusterRoleBinding')!;
    const out = conform({ roleRef: { kind: 'ClusterRole', name: 'v', junk: 1 }, subjects: [{ kind: 'User', name: 'a', namespace: 'n' }] }, crb.schema, defs, 'ClusterRoleBinding');
    assert.deepEqual(out, { roleRef: { kind: 'ClusterRole', name: 'v' }, subjects: [{ kind: 'User', name: 'a', namespace: 'n' }] });
    assert.throws(
      () => conform({ subjects: 'x' }, crb.schema, defs, 'ClusterRoleBinding'),
      (e: unknown) => e instanceof DecodeError && e.message === 'json: cannot unmarshal string into Go struct field ClusterRoleBinding.subjects of type []v1.Subject',
    );
    const secret = builtinResources().find((d) => d.kind === 'Secret')!;
    assert.throws(() => conform({ data: { a: '!!' } }, secret.schema, defs, 'Secret'), DecodeError);
  });
});
