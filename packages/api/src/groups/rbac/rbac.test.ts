import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { ResourceDefinition } from '../../catalog.js';
import { type FieldError, fieldErrorString } from '../../field-errors.js';
import type { StoredObject } from '../../types.js';
import { builtinDefinitions } from '../../kube-schema/definitions.js';
import { validatePolicyRule } from './shared.js';
import { clusterrolebindings, clusterroles, rolebindings, roles } from './index.js';

const GROUP = 'rbac.authorization.k8s.io';

function mk(fields: Record<string, unknown>, namespace?: string): StoredObject {
  return { metadata: { name: 'x', ...(namespace ? { namespace } : {}) }, ...structuredClone(fields) };
}

/** Runs defaults and validate as the generic store would on create. */
function create(def: ResourceDefinition, o: StoredObject): FieldError[] {
  def.strategy.defaults?.(o);
  def.strategy.prepareForCreate?.(o);
  return def.strategy.validate(o);
}

function update(def: ResourceDefinition, o: StoredObject, old: StoredObject): FieldError[] {
  def.strategy.defaults?.(o);
  def.strategy.prepareForUpdate?.(o, old);
  return [...def.strategy.validate(o), ...(def.strategy.validateUpdate?.(o, old) ?? [])];
}

function only(errs: FieldError[]): FieldError {
  assert.equal(errs.length, 1, `expected one error, got ${JSON.stringify(errs.map(fieldErrorString))}`);
  return errs[0]!;
}

const goodRole = { rules: [{ verbs: ['get'], apiGroups: [''], resources: ['pods'] }] };
const goodCRB = { roleRef: { apiGroup: GROUP, kind: 'ClusterRole', name: 'view' }, subjects: [{ kind: 'User', name: 'alice' }] };

describe('rbac definitions', () => {
  it('have the discovery facts kube serves', () => {
    for (const d of [clusterroles, clusterrolebindings, roles, rolebindings]) {
      assert.equal(d.group, GROUP);
      assert.equal(d.version, 'v1');
      assert.deepEqual(d.verbs, ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch']);
      assert.deepEqual(d.shortNames, []);
      assert.equal(d.allowCreateOnUpdate, true);
      assert.equal(d.returnDeletedObject, false);
      assert.deepEqual(d.nameValidator('a/b', false), ["may not contain '/'"]);
      assert.equal(d.listKind, `${d.kind}List`);
    }
    assert.equal(clusterroles.namespaced, false);
    assert.equal(clusterrolebindings.namespaced, false);
    assert.equal(roles.namespaced, true);
    assert.equal(rolebindings.namespaced, true);
    assert.equal(clusterrolebindings.singular, 'clusterrolebinding');
  });

  it("carry kube 1.24's markers (lists without one are atomic for apply) and Go types", () => {
    const defs = builtinDefinitions();
    assert.equal(defs.get('io.k8s.api.rbac.v1.PolicyRule')?.properties?.['verbs']?.['x-kubernetes-list-type'], undefined);
    assert.equal(clusterrolebindings.schema.properties?.['subjects']?.items?.$ref, 'io.k8s.api.rbac.v1.Subject');
    assert.equal(defs.get('io.k8s.api.rbac.v1.Subject')?.['x-kubernetes-map-type'], 'atomic');
    assert.equal(roles.schema.properties?.['rules']?.items?.$ref, 'io.k8s.api.rbac.v1.PolicyRule');
    assert.equal(defs.get('io.k8s.api.rbac.v1.Subject')?.goType, 'v1.Subject');
    assert.equal(defs.get('io.k8s.api.rbac.v1.RoleRef')?.goType, 'v1.RoleRef');
  });
});

describe('binding defaults', () => {
  it('default roleRef.apiGroup and subject apiGroups', () => {
    const o = mk({
      roleRef: { kind: 'Role', name: 'r' },
      subjects: [
        { kind: 'ServiceAccount', name: 'sa', namespace: 'ns' },
        { kind: 'User', name: 'u' },
        { kind: 'Group', name: 'g' },
        { kind: 'User', name: 'v', apiGroup: 'custom' },
      ],
    }, 'ns');
    rolebindings.strategy.defaults!(o);
    assert.deepEqual(o['roleRef'], { apiGroup: GROUP, kind: 'Role', name: 'r' });
    assert.deepEqual(o['subjects'], [
      { kind: 'ServiceAccount', name: 'sa', namespace: 'ns' },
      { kind: 'User', name: 'u', apiGroup: GROUP },
      { kind: 'Group', name: 'g', apiGroup: GROUP },
      { kind: 'User', name: 'v', apiGroup: 'custom' },
    ]);
  });

  it('keeps an explicit roleRef.apiGroup and defaults a missing roleRef', () => {
    const o = mk({ roleRef: { apiGroup: 'other', kind: 'ClusterRole', name: 'r' } });
    clusterrolebindings.strategy.defaults!(o);
    assert.equal((o['roleRef'] as Record<string, unknown>)['apiGroup'], 'other');
    const empty = mk({});
    clusterrolebindings.strategy.defaults!(empty);
    assert.deepEqual(empty['roleRef'], { apiGroup: GROUP });
  });
});

describe('ValidatePolicyRule', () => {
  it('accepts good rules', () => {
    assert.deepEqual(create(roles, mk(goodRole, 'ns')), []);
    assert.deepEqual(create(clusterroles, mk({ rules: [{ verbs: ['get'], nonResourceURLs: ['/healthz'] }] })), []);
    assert.deepEqual(create(clusterroles, mk({})), []);
  });

  it('requires verbs', () => {
    const e = only(create(roles, mk({ rules: [goodRole.rules[0], { apiGroups: [''], resources: ['pods'] }] }, 'ns')));
    assert.equal(e.field, 'rules[1].verbs');
    assert.equal(e.type, 'FieldValueRequired');
    assert.equal(e.detail, 'verbs must contain at least one value');
    assert.equal(fieldErrorString(e), 'rules[1].verbs: Required value: verbs must contain at least one value');
  });

  it('forbids non-resource URLs in namespaced rules', () => {
    const e = only(create(roles, mk({ rules: [{ verbs: ['get'], nonResourceURLs: ['/healthz'] }] }, 'ns')));
    assert.equal(e.field, 'rules[0].nonResourceURLs');
    assert.equal(e.type, 'FieldValueInvalid');
    assert.deepEqual(e.value, ['/healthz']);
    assert.equal(e.detail, 'namespaced rules cannot apply to non-resource URLs');
  });

  it('forbids mixing resources and non-resource URLs', () => {
    for (const extra of [{ apiGroups: [''] }, { resources: ['pods'] }, { resourceNames: ['a'] }]) {
      const e = only(create(clusterroles, mk({ rules: [{ verbs: ['get'], nonResourceURLs: ['/x'], ...extra }] })));
      assert.equal(e.field, 'rules[0].nonResourceURLs');
      assert.equal(e.type, 'FieldValueInvalid');
      assert.equal(e.detail, 'rules cannot apply to both regular resources and non-resource URLs');
    }
    // both messages in a namespaced role, and nothing about apiGroups/resources
    const errs = validatePolicyRule({ verbs: ['get'], nonResourceURLs: ['/x'], resources: ['pods'] }, true, 'rules[0]');
    assert.deepEqual(errs.map((e) => e.detail), [
      'namespaced rules cannot apply to non-resource URLs',
      'rules cannot apply to both regular resources and non-resource URLs',
    ]);
  });

  it('requires apiGroups and resources for resource rules', () => {
    const errs = create(clusterroles, mk({ rules: [{}] }));
    assert.deepEqual(
      errs.map((e) => [e.field, e.type, e.detail]),
      [
        ['rules[0].verbs', 'FieldValueRequired', 'verbs must contain at least one value'],
        ['rules[0].apiGroups', 'FieldValueRequired', 'resource rules must supply at least one api group'],
        ['rules[0].resources', 'FieldValueRequired', 'resource rules must supply at least one resource'],
      ],
    );
  });
});

describe('ClusterRole aggregationRule', () => {
  it('accepts valid selectors', () => {
    const o = mk({ aggregationRule: { clusterRoleSelectors: [{ matchLabels: { 'rbac.example.com/aggregate-to-view': 'true' } }] } });
    assert.deepEqual(create(clusterroles, o), []);
  });

  it('requires at least one selector', () => {
    const e = only(create(clusterroles, mk({ aggregationRule: {} })));
    assert.equal(e.field, 'aggregationRule.clusterRoleSelectors');
    assert.equal(e.type, 'FieldValueRequired');
    assert.equal(e.detail, 'at least one clusterRoleSelector required if aggregationRule is non-nil');
  });

  it('validates selector operators', () => {
    const o = mk({ aggregationRule: { clusterRoleSelectors: [{ matchExpressions: [{ key: 'a', operator: 'Bogus' }] }] } });
    const errs = create(clusterroles, o);
    assert.deepEqual(errs.map(fieldErrorString), [
      'aggregationRule.clusterRoleSelectors[0].matchExpressions[0].operator: Invalid value: "Bogus": not a valid selector operator',
      'aggregationRule.clusterRoleSelectors[0]: Invalid value: "null": invalid label selector.',
    ]);
  });
});

describe('ValidateRoleBinding / ValidateClusterRoleBinding', () => {
  it('accepts good bindings', () => {
    assert.deepEqual(create(clusterrolebindings, mk(goodCRB)), []);
    const rb = mk({ roleRef: { kind: 'Role', name: 'r' }, subjects: [{ kind: 'ServiceAccount', name: 'default' }] }, 'ns');
    assert.deepEqual(create(rolebindings, rb), []);
    assert.deepEqual(create(rolebindings, mk({ roleRef: { kind: 'ClusterRole', name: 'view' } }, 'ns')), []);
  });

  it('accepts and keeps a namespace on User and Group subjects', () => {
    const o = mk({ ...goodCRB, subjects: [{ kind: 'Group', name: 'g', namespace: 'ns' }] });
    assert.deepEqual(create(clusterrolebindings, o), []);
    assert.deepEqual(o['subjects'], [{ kind: 'Group', name: 'g', namespace: 'ns', apiGroup: GROUP }]);
  });

  it('rejects a roleRef.apiGroup other than rbac', () => {
    const e = only(create(clusterrolebindings, mk({ ...goodCRB, roleRef: { apiGroup: 'foo', kind: 'ClusterRole', name: 'x' } })));
    assert.equal(e.field, 'roleRef.apiGroup');
    assert.equal(e.type, 'FieldValueNotSupported');
    assert.equal(fieldErrorString(e), 'roleRef.apiGroup: Unsupported value: "foo": supported values: "rbac.authorization.k8s.io"');
  });

  it('only allows ClusterRole refs from cluster role bindings', () => {
    const e = only(create(clusterrolebindings, mk({ ...goodCRB, roleRef: { kind: 'Role', name: 'x' } })));
    assert.equal(fieldErrorString(e), 'roleRef.kind: Unsupported value: "Role": supported values: "ClusterRole"');
  });

  it('allows Role and ClusterRole refs from role bindings', () => {
    const e = only(create(rolebindings, mk({ roleRef: { kind: 'Secret', name: 'x' } }, 'ns')));
    assert.equal(e.field, 'roleRef.kind');
    assert.equal(e.type, 'FieldValueNotSupported');
    assert.equal(e.detail, 'supported values: "Role", "ClusterRole"');
  });

  it('requires roleRef.name and validates it as a path segment', () => {
    const e = only(create(clusterrolebindings, mk({ roleRef: { kind: 'ClusterRole' } })));
    assert.equal(e.field, 'roleRef.name');
    assert.equal(e.type, 'FieldValueRequired');
    assert.equal(e.detail, '');
    const e2 = only(create(clusterrolebindings, mk({ roleRef: { kind: 'ClusterRole', name: 'a%b' } })));
    assert.equal(fieldErrorString(e2), 'roleRef.name: Invalid value: "a%b": may not contain \'%\'');
    const e3 = only(create(rolebindings, mk({ roleRef: { kind: 'Role', name: '..' } }, 'ns')));
    assert.equal(e3.detail, "may not be '..'");
  });

  it('reports every problem of an empty binding', () => {
    const errs = create(clusterrolebindings, mk({}));
    assert.deepEqual(errs.map((e) => [e.field, e.type]), [
      ['roleRef.kind', 'FieldValueNotSupported'],
      ['roleRef.name', 'FieldValueRequired'],
    ]);
  });
});

describe('ValidateRoleBindingSubject', () => {
  const withSubject = (sub: Record<string, unknown>): StoredObject => mk({ ...goodCRB, subjects: [{ kind: 'User', name: 'ok' }, sub] });

  it('requires a name', () => {
    const e = only(create(clusterrolebindings, withSubject({ kind: 'User' })));
    assert.equal(e.field, 'subjects[1].name');
    assert.equal(e.type, 'FieldValueRequired');
  });

  it('requires a DNS-subdomain name for service accounts', () => {
    const e = only(create(rolebindings, mk({ roleRef: { kind: 'Role', name: 'r' }, subjects: [{ kind: 'ServiceAccount', name: 'Bad_Name' }] }, 'ns')));
    assert.equal(e.field, 'subjects[0].name');
    assert.equal(e.type, 'FieldValueInvalid');
    assert.match(e.detail, /^a lowercase RFC 1123 subdomain must consist of/);
  });

  it('requires an empty apiGroup for service accounts', () => {
    const e = only(create(clusterrolebindings, withSubject({ kind: 'ServiceAccount', name: 'sa', namespace: 'ns', apiGroup: GROUP })));
    assert.equal(fieldErrorString(e), 'subjects[1].apiGroup: Unsupported value: "rbac.authorization.k8s.io": supported values: ""');
  });

  it('requires a service account namespace only in cluster role bindings', () => {
    const e = only(create(clusterrolebindings, withSubject({ kind: 'ServiceAccount', name: 'sa' })));
    assert.equal(e.field, 'subjects[1].namespace');
    assert.equal(e.type, 'FieldValueRequired');
    const rb = mk({ roleRef: { kind: 'Role', name: 'r' }, subjects: [{ kind: 'ServiceAccount', name: 'sa' }] }, 'ns');
    assert.deepEqual(create(rolebindings, rb), []);
  });

  it('requires the rbac apiGroup for users and groups', () => {
    for (const kind of ['User', 'Group']) {
      const e = only(create(clusterrolebindings, withSubject({ kind, name: 'n', apiGroup: 'example.com' })));
      assert.equal(e.field, 'subjects[1].apiGroup');
      assert.equal(e.type, 'FieldValueNotSupported');
      assert.equal(e.detail, 'supported values: "rbac.authorization.k8s.io"');
    }
  });

  it('rejects unknown kinds', () => {
    const e = only(create(clusterrolebindings, withSubject({ kind: 'Robot', name: 'r2' })));
    assert.equal(fieldErrorString(e), 'subjects[1].kind: Unsupported value: "Robot": supported values: "ServiceAccount", "User", "Group"');
  });
});

describe('roleRef immutability', () => {
  for (const def of [clusterrolebindings, rolebindings]) {
    it(`${def.kind}: cannot change roleRef`, () => {
      const ns = def.namespaced ? 'ns' : undefined;
      const old = mk({ roleRef: { apiGroup: GROUP, kind: 'ClusterRole', name: 'view' } }, ns);
      const changed = mk({ roleRef: { kind: 'ClusterRole', name: 'edit' } }, ns);
      const e = only(update(def, changed, old));
      assert.equal(e.field, 'roleRef');
      assert.equal(e.type, 'FieldValueInvalid');
      assert.deepEqual(e.value, { apiGroup: GROUP, kind: 'ClusterRole', name: 'edit' });
      assert.equal(e.detail, 'cannot change roleRef');
      // unchanged after defaulting: fine, and subjects may change
      const same = mk({ roleRef: { kind: 'ClusterRole', name: 'view' }, subjects: [{ kind: 'User', name: 'bob' }] }, ns);
      assert.deepEqual(update(def, same, old), []);
    });
  }
});
