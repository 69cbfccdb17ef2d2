import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parse as parseYaml } from 'yaml';
import { Catalog, builtinResources } from '@plinth/api';
import { requireMessage } from '../protobuf/loader.js';
import { encodeGnostic } from './gnostic.js';
import { buildSwagger } from './v2.js';
import type { JSONObject } from './names.js';

interface NamedAny {
  name: string;
  value: { yaml: string };
}
interface PBSchema {
  _ref?: string;
  description?: string;
  type?: { value: string[] };
  required?: string[];
  properties?: { additional_properties: Array<{ name: string; value: PBSchema }> };
  items?: { schema: PBSchema[] };
  vendor_extension?: NamedAny[];
}
interface PBParam {
  parameter?: { body_parameter?: { name: string; schema: PBSchema }; non_body_parameter?: Record<string, { name: string; in: string; type: string; required?: boolean }> };
}
interface PBOperation {
  operation_id: string;
  parameters?: PBParam[];
  vendor_extension?: NamedAny[];
  responses: { response_code: Array<{ name: string; value: { response?: { description: string; schema?: { schema: PBSchema } } } }> };
}
interface PBDocument {
  swagger: string;
  info: { title: string; version: string };
  paths: { path: Array<{ name: string; value: Record<string, PBOperation | PBParam[]> }> };
  definitions: { additional_properties: Array<{ name: string; value: PBSchema }> };
}

const swagger = buildSwagger(new Catalog(builtinResources()));

function decode(): PBDocument {
  const type = requireMessage('openapi.v2.Document');
  return type.toObject(type.decode(encodeGnostic(swagger)), { defaults: false, arrays: true }) as PBDocument;
}

test('gnostic: the protobuf document decodes with OpenAPIv2.proto and keeps every definition and path', () => {
  const doc = decode();
  assert.equal(doc.swagger, '2.0');
  assert.equal(doc.info.title, 'Kubernetes');
  assert.deepEqual(doc.definitions.additional_properties.map((d) => d.name), Object.keys(swagger['definitions'] as JSONObject));
  assert.deepEqual(doc.paths.path.map((p) => p.name), Object.keys(swagger['paths'] as JSONObject));
});

test('gnostic: schemas map $ref to _ref and x- keys to YAML vendor extensions', () => {
  const doc = decode();
  const defs = new Map(doc.definitions.additional_properties.map((d) => [d.name, d.value]));
  const crb = defs.get('io.k8s.api.rbac.v1.ClusterRoleBinding')!;
  assert.deepEqual(crb.type?.value, ['object']);
  assert.deepEqual(crb.required, ['roleRef']);
  const gvk = crb.vendor_extension!.find((e) => e.name === 'x-kubernetes-group-version-kind')!;
  assert.deepEqual(parseYaml(gvk.value.yaml), [{ group: 'rbac.authorization.k8s.io', kind: 'ClusterRoleBinding', version: 'v1' }]);
  const props = new Map(crb.properties!.additional_properties.map((p) => [p.name, p.value]));
  assert.equal(props.get('roleRef')!._ref, '#/definitions/io.k8s.api.rbac.v1.RoleRef');
  assert.equal(crb.description, 'A ClusterRoleBinding grants a ClusterRole to subjects across the cluster.');
  const subjects = props.get('subjects')!;
  assert.equal(subjects.items!.schema[0]!._ref, '#/definitions/io.k8s.api.rbac.v1.Subject');
  const secrets = new Map(defs.get('io.k8s.api.core.v1.ServiceAccount')!.properties!.additional_properties.map((p) => [p.name, p.value])).get('secrets')!;
  assert.equal(parseYaml(secrets.vendor_extension!.find((e) => e.name === 'x-kubernetes-patch-merge-key')!.value.yaml), 'name');
  // gnostic keeps `type` as a one-element list and the GVK's empty core group as "".
  const sa = defs.get('io.k8s.api.core.v1.ServiceAccount')!;
  assert.deepEqual(parseYaml(sa.vendor_extension![0]!.value.yaml), [{ group: '', kind: 'ServiceAccount', version: 'v1' }]);
});

test('gnostic: operations keep ids, parameter oneofs, responses and extensions', () => {
  const doc = decode();
  const item = doc.paths.path.find((p) => p.name === '/api/v1/namespaces/{namespace}/serviceaccounts')!.value;
  const list = item['get'] as PBOperation;
  assert.equal(list.operation_id, 'listCoreV1NamespacedServiceAccount');
  assert.equal(parseYaml(list.vendor_extension!.find((e) => e.name === 'x-kubernetes-action')!.value.yaml), 'list');
  assert.deepEqual(parseYaml(list.vendor_extension!.find((e) => e.name === 'x-kubernetes-group-version-kind')!.value.yaml), { group: '', kind: 'ServiceAccount', version: 'v1' });
  const limit = list.parameters!.map((p) => p.parameter!.non_body_parameter!['query_parameter_sub_schema']).find((q) => q?.name === 'limit')!;
  assert.equal(limit.type, 'integer');
  const ok = list.responses.response_code.find((r) => r.name === '200')!;
  assert.equal(ok.value.response!.schema!.schema._ref, '#/definitions/io.k8s.api.core.v1.ServiceAccountList');
  const post = item['post'] as PBOperation;
  assert.equal(post.parameters![0]!.parameter!.body_parameter!.schema._ref, '#/definitions/io.k8s.api.core.v1.ServiceAccount');
  const pathParams = item['parameters'] as PBParam[];
  const ns = pathParams[0]!.parameter!.non_body_parameter!['path_parameter_sub_schema']!;
  assert.deepEqual([ns.name, ns.in, ns.required], ['namespace', 'path', true]);
});
