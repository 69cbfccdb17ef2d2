import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fieldErrorString } from '../field-errors.js';
import type { StoredObject } from '../types.js';
import { customresourcedefinitions as crds, customResourceDefinitionStatusStrategy } from '../groups/apiextensions/customresourcedefinitions.js';

type Obj = Record<string, unknown>;

const schema = (props: Obj = { spec: { type: 'object', properties: { size: { type: 'integer' } } } }): Obj => ({ openAPIV3Schema: { type: 'object', properties: props } });
const version = (name: string, extra: Obj = {}): Obj => ({ name, served: true, storage: true, schema: schema(), ...extra });
const goodSpec = (): Obj => ({ group: 'example.com', scope: 'Namespaced', names: { plural: 'foos', kind: 'Foo' }, versions: [version('v1')] });

function crd(mutate: (spec: Obj) => void = () => {}, name = 'foos.example.com'): StoredObject {
  const spec = goodSpec();
  mutate(spec);
  return { apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', metadata: { name }, spec };
}

/** What a create of `obj` reports: defaults, prepareForCreate, then validation, as the store runs them. */
function createErrors(obj: StoredObject): string[] {
  crds.strategy.defaults!(obj);
  crds.strategy.prepareForCreate!(obj);
  return crds.strategy.validate(obj).map(fieldErrorString);
}

test('the resource entry is kube 1.24\'s', () => {
  assert.equal(crds.group, 'apiextensions.k8s.io');
  assert.equal(crds.namespaced, false);
  assert.deepEqual(crds.shortNames, ['crd', 'crds']);
  assert.deepEqual(crds.categories, ['api-extensions']);
  // No printer of its own: the default table (Name, Created At).
  assert.equal(crds.table, undefined);
  assert.deepEqual(crds.subresources.map((s) => s.name), ['status']);
});

test('a valid CRD is defaulted and gets its stored version and generation', () => {
  const obj = crd();
  assert.deepEqual(createErrors(obj), []);
  const spec = obj['spec'] as Obj;
  assert.deepEqual(spec['names'], { plural: 'foos', kind: 'Foo', singular: 'foo', listKind: 'FooList' });
  assert.deepEqual(spec['conversion'], { strategy: 'None' });
  assert.deepEqual(obj['status'], { conditions: [], acceptedNames: { plural: '', kind: '' }, storedVersions: ['v1'] });
  assert.equal(obj.metadata.generation, 1);
});

test('CRD validation table: each rule gives kube\'s cause', () => {
  const cases: Array<[string, StoredObject, string[]]> = [
    ['name must be plural.group', crd(undefined, 'bars.example.com'), ['metadata.name: Invalid value: "bars.example.com": must be spec.names.plural+"."+spec.group']],
    ['group needs a dot', crd((s) => (s['group'] = 'example'), 'foos.example'), ['spec.group: Invalid value: "example": should be a domain with at least one dot']],
    ['scope required', crd((s) => delete s['scope']), ['spec.scope: Required value']],
    ['scope value', crd((s) => (s['scope'] = 'Global')), ['spec.scope: Unsupported value: "Global": supported values: "Cluster", "Namespaced"']],
    ['schema required', crd((s) => (s['versions'] = [{ name: 'v1', served: true, storage: true }])), ['spec.versions[0].schema.openAPIV3Schema: Required value: schemas are required']],
    [
      'exactly one storage version',
      crd((s) => (s['versions'] = [version('v1'), version('v2', { schema: schema({ spec: { type: 'object' } }) })])),
      ['spec.versions: Invalid value: []interface {}{map[string]interface {}{"name":"v1", "schema":map[string]interface {}{"openAPIV3Schema":map[string]interface {}{"properties":map[string]interface {}{"spec":map[string]interface {}{"properties":map[string]interface {}{"size":map[string]interface {}{"type":"integer"}}, "type":"object"}}, "type":"object"}}, "served":true, "storage":true}, map[string]interface {}{"name":"v2", "schema":map[string]interface {}{"openAPIV3Schema":map[string]interface {}{"properties":map[string]interface {}{"spec":map[string]interface {}{"type":"object"}}, "type":"object"}}, "served":true, "storage":true}}: must have exactly one version marked as storage version',
        // kube's PrepareForCreate records the first storage version only.
        'status.storedVersions: Invalid value: map[string]interface {}{"name":"v2", "schema":map[string]interface {}{"openAPIV3Schema":map[string]interface {}{"properties":map[string]interface {}{"spec":map[string]interface {}{"type":"object"}}, "type":"object"}}, "served":true, "storage":true}: must have the storage version v2',
      ],
    ],
    ['version name', crd((s) => (s['versions'] = [version('V1')])), [
      `spec.versions[0].name: Invalid value: "V1": a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')`,
    ]],
    ['kind required (singular and listKind default from it)', crd((s) => (s['names'] = { plural: 'foos' })), ['spec.names.singular: Required value', 'spec.names.kind: Required value', 'spec.names.listKind: Required value']],
    ['kind and listKind differ', crd((s) => (s['names'] = { plural: 'foos', kind: 'Foo', listKind: 'Foo' })), ['spec.names.listKind: Invalid value: "Foo": kind and listKind may not be the same']],
    ['preserveUnknownFields', crd((s) => (s['preserveUnknownFields'] = true)), ['spec.preserveUnknownFields: Invalid value: true: cannot set to true, set x-preserve-unknown-fields to true in spec.versions[*].schema instead']],
    ['webhook conversion with a url is accepted', crd((s) => (s['conversion'] = { strategy: 'Webhook', webhook: { clientConfig: { url: 'https://conv.example.com/convert' }, conversionReviewVersions: ['v1'] } })), []],
    ['webhook conversion with a service is accepted (port defaults to 443)', crd((s) => (s['conversion'] = { strategy: 'Webhook', webhook: { clientConfig: { service: { namespace: 'ns', name: 'conv', path: '/convert' } }, conversionReviewVersions: ['v1beta1', 'v1'] } })), []],
    ['webhook needs a client config', crd((s) => (s['conversion'] = { strategy: 'Webhook', webhook: { conversionReviewVersions: ['v1'] } })), [
      'spec.conversion.webhookClientConfig: Required value: required when strategy is set to Webhook',
    ]],
    ['webhook needs url or service, not both', crd((s) => (s['conversion'] = { strategy: 'Webhook', webhook: { clientConfig: { url: 'https://a', service: { namespace: 'ns', name: 'conv' } }, conversionReviewVersions: ['v1'] } })), [
      'spec.conversion.webhookClientConfig: Required value: exactly one of url or service is required',
    ]],
    ['webhook url must be https without query', crd((s) => (s['conversion'] = { strategy: 'Webhook', webhook: { clientConfig: { url: 'http://conv.example.com/x?a=b' }, conversionReviewVersions: ['v1'] } })), [
      `spec.conversion.webhookClientConfig.url: Invalid value: "http": 'https' is the only allowed URL scheme; desired format: https://host[/path]`,
      'spec.conversion.webhookClientConfig.url: Invalid value: "a=b": query parameters are not permitted in the URL',
    ]],
    // kube 1.24 passes the service's name and namespace swapped to ValidateWebhookService.
    ['webhook service name and namespace (kube swaps the fields)', crd((s) => (s['conversion'] = { strategy: 'Webhook', webhook: { clientConfig: { service: { namespace: 'ns', name: '', port: 0, path: 'x//' } }, conversionReviewVersions: ['v1'] } })), [
      'spec.conversion.webhookClientConfig.service.namespace: Required value: service namespace is required',
      'spec.conversion.webhookClientConfig.service.port: Invalid value: 0: port is not valid: must be between 1 and 65535, inclusive',
      `spec.conversion.webhookClientConfig.service.path: Invalid value: "x//": must start with a '/'`,
      'spec.conversion.webhookClientConfig.service.path: Invalid value: "x//": segment[0] may not be empty',
      'spec.conversion.webhookClientConfig.service.path: Invalid value: "x//": segment[1] may not be empty',
    ]],
    ['conversionReviewVersions required', crd((s) => (s['conversion'] = { strategy: 'Webhook', webhook: { clientConfig: { url: 'https://a/c' } } })), ['spec.conversion.conversionReviewVersions: Required value']],
    ['conversionReviewVersions must name a known version, once', crd((s) => (s['conversion'] = { strategy: 'Webhook', webhook: { clientConfig: { url: 'https://a/c' }, conversionReviewVersions: ['v2', 'v2'] } })), [
      'spec.conversion.conversionReviewVersions[1]: Invalid value: "v2": duplicate version',
      'spec.conversion.conversionReviewVersions: Invalid value: []string{"v2", "v2"}: must include at least one of v1, v1beta1',
    ]],
    ['strategy None forbids a webhook', crd((s) => (s['conversion'] = { strategy: 'None', webhook: { clientConfig: { url: 'https://a/c' }, conversionReviewVersions: ['v1'] } })), [
      'spec.conversion.webhookClientConfig: Forbidden: should not be set when strategy is not set to Webhook',
      'spec.conversion.conversionReviewVersions: Forbidden: should not be set when strategy is not set to Webhook',
    ]],
    ['conversion strategy value', crd((s) => (s['conversion'] = { strategy: 'Magic' })), ['spec.conversion.strategy: Unsupported value: "Magic": supported values: "None", "Webhook"']],
    ['printer column type and path', crd((s) => ((s['versions'] as Obj[])[0]!['additionalPrinterColumns'] = [{ name: 'Size', type: 'int', jsonPath: 'spec.size' }])), [
      'spec.additionalPrinterColumns[0].type: Invalid value: "int": must be one of boolean,date,integer,number,string',
      'spec.additionalPrinterColumns[0].JSONPath: Invalid value: "spec.size": must be a simple json path starting with .',
    ]],
    ['scale paths', crd((s) => ((s['versions'] as Obj[])[0]!['subresources'] = { scale: { specReplicasPath: '.status.replicas', statusReplicasPath: '' } })), [
      'spec.subresources.scale.specReplicasPath: Invalid value: ".status.replicas": should be a json path under .spec',
      'spec.subresources.scale.statusReplicasPath: Required value',
    ]],
    ['deprecationWarning needs deprecated', crd((s) => ((s['versions'] as Obj[])[0]!['deprecationWarning'] = 'old')), ['spec.versions[0].deprecationWarning: Invalid value: "old": can only be set for deprecated versions']],
    ['protected group needs approval', crd((s) => (s['group'] = 'things.k8s.io'), 'foos.things.k8s.io'), [
      'metadata.annotations[api-approved.kubernetes.io]: Required value: protected groups must have approval annotation "api-approved.kubernetes.io", see https://github.com/kubernetes/enhancements/pull/1111',
    ]],
  ];
  for (const [name, obj, want] of cases) assert.deepEqual(createErrors(obj), want, name);
});

test('structural schema rules, with kube\'s paths (identical per-version schemas are spec.validation)', () => {
  const withSchema = (openAPIV3Schema: Obj, status = false): StoredObject =>
    crd((s) => (s['versions'] = [version('v1', { schema: { openAPIV3Schema }, ...(status ? { subresources: { status: {} } } : {}) })]));
  const cases: Array<[string, Obj, string[], boolean?]> = [
    ['type required at root and fields', { properties: { spec: { properties: { a: { type: 'string' } } } } }, [
      'spec.validation.openAPIV3Schema.properties[spec].type: Required value: must not be empty for specified object fields',
      'spec.validation.openAPIV3Schema.type: Required value: must not be empty at the root',
    ]],
    ['type not needed under preserve-unknown-fields or int-or-string', { type: 'object', properties: { a: { 'x-kubernetes-preserve-unknown-fields': true }, b: { 'x-kubernetes-int-or-string': true } } }, []],
    ['array items required', { type: 'object', properties: { l: { type: 'array' } } }, ['spec.validation.openAPIV3Schema.properties[l].items: Required value: must be specified']],
    ['item type required', { type: 'object', properties: { l: { type: 'array', items: {} } } }, ['spec.validation.openAPIV3Schema.properties[l].items.type: Required value: must not be empty for specified array items']],
    ['root must be object', { type: 'string' }, ['spec.validation.openAPIV3Schema.type: Invalid value: "string": must be object at the root']],
    ['metadata restricted to name', { type: 'object', properties: { metadata: { type: 'object', properties: { labels: { type: 'object' } } } } }, [
      'spec.validation.openAPIV3Schema.properties[metadata]: Forbidden: must not specify anything other than name and generateName, but metadata is implicitly specified',
    ]],
    ['metadata name constraints allowed', { type: 'object', properties: { metadata: { type: 'object', properties: { name: { type: 'string', maxLength: 10 } } } } }, []],
    ['value validation may not set type', { type: 'object', properties: { a: { type: 'string', anyOf: [{ type: 'string' }] } } }, [
      'spec.validation.openAPIV3Schema.properties[a].anyOf[0].type: Forbidden: must be empty to be structural',
    ]],
    ['pattern: Go syntax is valid', { type: 'object', properties: { p: { type: 'string', pattern: '(?i)^(?P<a>x)|(?P<a>y)\\z' } } }, []],
    ['pattern: what Go refuses, in Go\'s words', { type: 'object', properties: { p: { type: 'string', pattern: '^(?<n>x)$' }, q: { type: 'string', pattern: '(abc' } } }, [
      'spec.validation.openAPIV3Schema.properties[p].pattern: Invalid value: "^(?<n>x)$": must be a valid regular expression, but isn\'t: error parsing regexp: invalid or unsupported Perl syntax: `(?<`',
      'spec.validation.openAPIV3Schema.properties[q].pattern: Invalid value: "(abc": must be a valid regular expression, but isn\'t: error parsing regexp: missing closing ): `(abc`',
    ]],
    ['int-or-string anyOf pattern allowed', { type: 'object', properties: { p: { 'x-kubernetes-int-or-string': true, anyOf: [{ type: 'integer' }, { type: 'string' }] } } }, []],
    ['completeness', { type: 'object', properties: { a: { type: 'string' } }, allOf: [{ properties: { b: { maxLength: 2 } } }] }, [
      'spec.validation.openAPIV3Schema.properties[b]: Required value: because it is defined in spec.validation.openAPIV3Schema.allOf[0].properties[b]',
    ]],
    ['uniqueItems forbidden', { type: 'object', properties: { l: { type: 'array', uniqueItems: true, items: { type: 'string' } } } }, [
      'spec.validation.openAPIV3Schema.properties[l].uniqueItems: Forbidden: uniqueItems cannot be set to true since the runtime complexity becomes quadratic',
    ]],
    ['$ref and additionalProperties with properties', { type: 'object', properties: { a: { type: 'object', $ref: '#/x', properties: { b: { type: 'string' } }, additionalProperties: { type: 'string' } } } }, [
      'spec.validation.openAPIV3Schema.properties[a].$ref: Forbidden: $ref is not supported',
      'spec.validation.openAPIV3Schema.properties[a].additionalProperties: Forbidden: additionalProperties and properties are mutual exclusive',
    ]],
    ['list-type map needs keys that are required or defaulted', { type: 'object', properties: { l: { type: 'array', 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['name'], items: { type: 'object', properties: { name: { type: 'string' } } } } } }, [
      'spec.validation.openAPIV3Schema.properties[l].items.properties[name].default: Required value: this property is in x-kubernetes-list-map-keys, so it must have a default or be a required property',
    ]],
    ['list-type on a non-array', { type: 'object', properties: { l: { type: 'string', 'x-kubernetes-list-type': 'set' } } }, [
      'spec.validation.openAPIV3Schema.properties[l].type: Invalid value: "string": must be array if x-kubernetes-list-type is specified',
    ]],
    ['preserve-unknown-fields false', { type: 'object', 'x-kubernetes-preserve-unknown-fields': false }, [
      'spec.validation.openAPIV3Schema.x-kubernetes-preserve-unknown-fields: Invalid value: false: must be true or undefined',
    ]],
    ['embedded resource must be an object', { type: 'object', properties: { t: { type: 'string', 'x-kubernetes-embedded-resource': true } } }, [
      'spec.validation.openAPIV3Schema.properties[t].properties: Required value: must not be empty if x-kubernetes-embedded-resource is true without x-kubernetes-preserve-unknown-fields',
      'spec.validation.openAPIV3Schema.properties[t].type: Invalid value: "string": must be object if x-kubernetes-embedded-resource is true',
    ]],
    ['default must match its schema', { type: 'object', properties: { n: { type: 'integer', default: 'many' } } }, [
      'spec.validation.openAPIV3Schema.properties[n].default: Invalid value: "string":  in body must be of type integer: "string"',
    ]],
    ['default must be pruned', { type: 'object', properties: { o: { type: 'object', properties: { a: { type: 'string' } }, default: { a: 'x', b: 'y' } } } }, [
      'spec.validation.openAPIV3Schema.properties[o].default: Invalid value: map[string]interface {}{"a":"x", "b":"y"}: must not have unknown fields',
    ]],
    ['no defaults in top-level metadata', { type: 'object', properties: { metadata: { type: 'object', default: {} } } }, [
      'spec.validation.openAPIV3Schema.properties[metadata].default: Forbidden: must not be set in top-level metadata',
    ]],
    ['status subresource: only some root fields', { type: 'object', properties: { spec: { type: 'object' } }, anyOf: [{ required: ['spec'] }] }, [
      'spec.validation.openAPIV3Schema: Invalid value: map[string]interface {}{"anyOf":[]interface {}{map[string]interface {}{"required":[]interface {}{"spec"}}}, "properties":map[string]interface {}{"spec":map[string]interface {}{"type":"object"}}, "type":"object"}: only [Description Type Format Title Maximum ExclusiveMaximum Minimum ExclusiveMinimum MaxLength MinLength Pattern MaxItems MinItems UniqueItems MultipleOf Required Items Properties ExternalDocs Example XPreserveUnknownFields XValidations] fields are allowed at the root of the schema if the status subresource is enabled',
    ], true],
  ];
  for (const [name, s, want, status] of cases) assert.deepEqual(createErrors(withSchema(s, status)), want, name);

  const perVersion = crd((s) => (s['versions'] = [version('v1', { storage: false }), version('v2', { schema: { openAPIV3Schema: { properties: {} } } })]));
  assert.deepEqual(createErrors(perVersion), ['spec.versions[1].schema.openAPIV3Schema.type: Required value: must not be empty at the root']);
});

test('updates: stored versions, immutable fields, generation, status-only writes', () => {
  const old = crd();
  createErrors(old);
  old.metadata.generation = 1;
  (old['status'] as Obj)['conditions'] = [{ type: 'Established', status: 'True' }];

  const next = crd((s) => (s['versions'] = [version('v1', { storage: false }), version('v2')]));
  crds.strategy.defaults!(next);
  crds.strategy.prepareForUpdate!(next, old);
  assert.equal(next.metadata.generation, 2);
  assert.deepEqual((next['status'] as Obj)['storedVersions'], ['v1', 'v2']);
  assert.deepEqual([...crds.strategy.validate(next), ...crds.strategy.validateUpdate!(next, old)].map(fieldErrorString), []);

  const dropped = crd((s) => (s['versions'] = [version('v2')]));
  crds.strategy.defaults!(dropped);
  crds.strategy.prepareForUpdate!(dropped, next);
  assert.deepEqual(crds.strategy.validate(dropped).map(fieldErrorString), ['status.storedVersions[0]: Invalid value: "v1": must appear in spec.versions']);

  const rescoped = crd((s) => {
    s['scope'] = 'Cluster';
    (s['names'] as Obj)['kind'] = 'Bar';
  });
  crds.strategy.defaults!(rescoped);
  crds.strategy.prepareForUpdate!(rescoped, old);
  assert.deepEqual(crds.strategy.validateUpdate!(rescoped, old).map(fieldErrorString), [
    'spec.scope: Invalid value: "Cluster": field is immutable',
    'spec.names.kind: Invalid value: "Bar": field is immutable',
  ]);

  const statusWrite = crd((s) => (s['scope'] = 'Cluster'));
  statusWrite['status'] = { acceptedNames: { plural: 'foos', kind: 'Foo' }, storedVersions: ['v1'], conditions: [] };
  statusWrite.metadata.labels = { sneaky: 'yes' };
  customResourceDefinitionStatusStrategy.prepareForUpdate!(statusWrite, old);
  assert.equal((statusWrite['spec'] as Obj)['scope'], 'Namespaced');
  assert.equal(statusWrite.metadata.labels, undefined);
  assert.deepEqual((statusWrite['status'] as Obj)['acceptedNames'], { plural: 'foos', kind: 'Foo' });
});

test('CEL rules are dropped (kube 1.24: the CustomResourceValidationExpressions gate is off)', () => {
  const obj = crd((s) => (s['versions'] = [version('v1', { schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-validations': [{ rule: 'self.x > 0' }], properties: { spec: { type: 'object', 'x-kubernetes-validations': [{ rule: 'true' }] } } } } })]));
  assert.deepEqual(createErrors(obj), []);
  assert.ok(!JSON.stringify(obj).includes('x-kubernetes-validations'));
});
