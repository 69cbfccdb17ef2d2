import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { ResourceDefinition } from '../../catalog.js';
import { type FieldError, fieldErrorString } from '../../field-errors.js';
import type { StoredObject } from '../../types.js';
import { goJSONMapError, secrets } from './secrets.js';
import { namespaceFinalizeStrategy, namespaceStatusStrategy, namespaces } from './namespaces.js';
import { serviceaccounts } from './serviceaccounts.js';

function mk(fields: Record<string, unknown>, meta: Record<string, unknown> = {}): StoredObject {
  return { metadata: { name: 'x', ...meta }, ...structuredClone(fields) };
}

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

const b64 = (v: string): string => Buffer.from(v).toString('base64');

describe('namespaces', () => {
  it('has the discovery facts kube serves', () => {
    assert.equal(namespaces.namespaced, false);
    assert.deepEqual(namespaces.shortNames, ['ns']);
    assert.deepEqual(namespaces.verbs, ['create', 'delete', 'get', 'list', 'patch', 'update', 'watch']);
    assert.deepEqual(namespaces.subresources.map((sub) => [sub.name, sub.verbs]), [['finalize', ['update']], ['status', ['get', 'patch', 'update']]]);
    assert.equal(namespaces.returnDeletedObject, true);
    assert.equal(namespaces.allowCreateOnUpdate, false);
    assert.equal(namespaces.nameValidator('a.b', false).length, 1); // DNS label, not subdomain
    // spec is a NamespaceSpec; kube 1.24 marks its finalizers with no list type (an atomic list for apply).
    assert.equal(namespaces.schema.properties?.['spec']?.$ref, 'io.k8s.api.core.v1.NamespaceSpec');
  });

  it('prepareForCreate sets phase Active and the kubernetes finalizer', () => {
    const o = mk({ status: { phase: 'Terminating', conditions: [{ type: 'X', status: 'True' }] } });
    assert.deepEqual(create(namespaces, o), []);
    assert.deepEqual(o['status'], { phase: 'Active' });
    assert.deepEqual(o['spec'], { finalizers: ['kubernetes'] });
    assert.equal(o.metadata.labels?.['kubernetes.io/metadata.name'], 'x');
  });

  it('prepareForCreate appends kubernetes to other finalizers once', () => {
    const o = mk({ spec: { finalizers: ['example.com/f'] } });
    namespaces.strategy.prepareForCreate!(o);
    assert.deepEqual(o['spec'], { finalizers: ['example.com/f', 'kubernetes'] });
    const o2 = mk({ spec: { finalizers: ['kubernetes', 'example.com/f'] } });
    namespaces.strategy.prepareForCreate!(o2);
    assert.deepEqual(o2['spec'], { finalizers: ['kubernetes', 'example.com/f'] });
  });

  it('prepareForUpdate keeps old status and spec.finalizers', () => {
    const old = mk({ spec: { finalizers: ['kubernetes'] }, status: { phase: 'Active' } });
    const o = mk({ spec: { finalizers: [] }, status: { phase: 'Terminating' } }, { labels: { a: 'b' } });
    assert.deepEqual(update(namespaces, o, old), []);
    assert.deepEqual(o['spec'], { finalizers: ['kubernetes'] });
    assert.deepEqual(o['status'], { phase: 'Active' });
    assert.deepEqual(o.metadata.labels, { a: 'b', 'kubernetes.io/metadata.name': 'x' });
  });

  it('validates spec.finalizers names', () => {
    const bad = mk({ spec: { finalizers: ['foo'] } });
    const e = only(namespaces.strategy.validate(bad));
    assert.equal(e.field, 'spec.finalizers');
    assert.equal(e.type, 'FieldValueInvalid');
    assert.equal(fieldErrorString(e), 'spec.finalizers: Invalid value: "foo": name is neither a standard finalizer name nor is it fully qualified');
    const bad2 = mk({ spec: { finalizers: ['example.com/-bad'] } });
    const e2 = only(namespaces.strategy.validate(bad2));
    assert.match(e2.detail, /^name part must consist of alphanumeric characters/);
    assert.deepEqual(namespaces.strategy.validate(mk({ spec: { finalizers: ['kubernetes', 'example.com/ok', 'orphan'] } })), []);
  });

  it('status and finalize sub-resource strategies', () => {
    const old = mk({ spec: { finalizers: ['kubernetes'] }, status: { phase: 'Active' } });
    const st = mk({ spec: { finalizers: [] }, status: { phase: 'Terminating' } });
    namespaceStatusStrategy.prepareForUpdate!(st, old);
    assert.deepEqual(st['spec'], { finalizers: ['kubernetes'] });
    const e = only(namespaceStatusStrategy.validateUpdate!(st, old));
    assert.equal(fieldErrorString(e), 'status.Phase: Invalid value: "Terminating": may only be \'Active\' if `deletionTimestamp` is empty');
    const fin = mk({ spec: { finalizers: ['bad'] }, status: { phase: 'Terminating' } });
    namespaceFinalizeStrategy.prepareForUpdate!(fin, old);
    assert.deepEqual(fin['status'], { phase: 'Active' });
    assert.equal(only(namespaceFinalizeStrategy.validateUpdate!(fin, old)).field, 'spec.finalizers[0]');
  });
});

describe('serviceaccounts', () => {
  it('has the discovery facts and schema markers kube serves', () => {
    assert.deepEqual(serviceaccounts.shortNames, ['sa']);
    assert.equal(serviceaccounts.verbs.length, 8);
    assert.equal(serviceaccounts.namespaced, true);
    const secretsField = serviceaccounts.schema.properties?.['secrets'];
    assert.equal(secretsField?.['x-kubernetes-patch-strategy'], 'merge');
    assert.equal(secretsField?.['x-kubernetes-patch-merge-key'], 'name');
    assert.equal(secretsField?.items?.$ref, 'io.k8s.api.core.v1.ObjectReference');
  });

  it('keeps only names in secret references', () => {
    const o = mk({ secrets: [{ name: 's1', namespace: 'other', uid: 'u' }], automountServiceAccountToken: false });
    assert.deepEqual(create(serviceaccounts, o), []);
    assert.deepEqual(o['secrets'], [{ name: 's1' }]);
    assert.equal(o['automountServiceAccountToken'], false);
  });
});

describe('secrets', () => {
  it('defaults type to Opaque', () => {
    const o = mk({});
    assert.deepEqual(create(secrets, o), []);
    assert.equal(o['type'], 'Opaque');
  });

  it('merges stringData into data, stringData winning', () => {
    const o = mk({ data: { a: b64('old'), b: b64('keep') }, stringData: { a: 'new', c: 'héllo' } });
    assert.deepEqual(create(secrets, o), []);
    assert.deepEqual(o['data'], { a: b64('new'), b: b64('keep'), c: Buffer.from('héllo', 'utf8').toString('base64') });
    assert.equal('stringData' in o, false);
  });

  it('validates data keys as config-map keys', () => {
    const errs = create(secrets, mk({ data: { 'bad key': '', '.': '', '..x': '', ok: '' } }));
    assert.deepEqual(errs.map(fieldErrorString), [
      "data[bad key]: Invalid value: \"bad key\": a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')",
      "data[.]: Invalid value: \".\": must not be '.'",
      "data[..x]: Invalid value: \"..x\": must not start with '..'",
    ]);
    const long = 'k'.repeat(254);
    assert.equal(only(create(secrets, mk({ stringData: { [long]: 'v' } }))).detail, 'must be no more than 253 characters');
  });

  it('limits total data size to 1 MiB', () => {
    const half = Buffer.alloc(512 * 1024).toString('base64');
    assert.deepEqual(create(secrets, mk({ data: { a: half, b: half } })), []);
    const e = only(create(secrets, mk({ data: { a: half, b: half, c: b64('1') } })));
    assert.equal(fieldErrorString(e), 'data: Too long: must have at most 1048576 bytes');
  });

  it('requires the service account annotation on token secrets', () => {
    const e = only(create(secrets, mk({ type: 'kubernetes.io/service-account-token' })));
    assert.equal(e.field, 'metadata.annotations[kubernetes.io/service-account.name]');
    assert.equal(e.type, 'FieldValueRequired');
    const ok = mk({ type: 'kubernetes.io/service-account-token' }, { annotations: { 'kubernetes.io/service-account.name': 'default' } });
    assert.deepEqual(create(secrets, ok), []);
  });

  it('requires well-formed docker config keys', () => {
    const e = only(create(secrets, mk({ type: 'kubernetes.io/dockercfg' })));
    assert.equal(fieldErrorString(e), 'data[.dockercfg]: Required value');
    const e2 = only(create(secrets, mk({ type: 'kubernetes.io/dockerconfigjson', data: { '.dockercfg': b64('{}') } })));
    assert.equal(e2.field, 'data[.dockerconfigjson]');
    const e3 = only(create(secrets, mk({ type: 'kubernetes.io/dockerconfigjson', stringData: { '.dockerconfigjson': '[]' } })));
    assert.equal(
      fieldErrorString(e3),
      'data[.dockerconfigjson]: Invalid value: "<secret contents redacted>": json: cannot unmarshal array into Go value of type map[string]interface {}',
    );
    assert.deepEqual(create(secrets, mk({ type: 'kubernetes.io/dockerconfigjson', stringData: { '.dockerconfigjson': '{"auths":{}}' } })), []);
    assert.equal(goJSONMapError(Buffer.from('')), 'unexpected end of JSON input');
    assert.equal(goJSONMapError(Buffer.from('x')), "invalid character 'x' looking for beginning of value");
  });

  it('requires username or password for basic-auth (with kube\'s odd path)', () => {
    const errs = create(secrets, mk({ type: 'kubernetes.io/basic-auth' }));
    assert.deepEqual(errs.map(fieldErrorString), ['data[%s][username]: Required value', 'data[%s][password]: Required value']);
    assert.deepEqual(create(secrets, mk({ type: 'kubernetes.io/basic-auth', data: { password: '' } })), []);
  });

  it('requires a non-empty ssh-privatekey for ssh-auth', () => {
    const e = only(create(secrets, mk({ type: 'kubernetes.io/ssh-auth', data: { 'ssh-privatekey': '' } })));
    assert.equal(e.field, 'data[%s][ssh-privatekey]');
    assert.equal(e.type, 'FieldValueRequired');
    assert.deepEqual(create(secrets, mk({ type: 'kubernetes.io/ssh-auth', stringData: { 'ssh-privatekey': 'k' } })), []);
  });

  it('requires tls.crt and tls.key for tls', () => {
    const errs = create(secrets, mk({ type: 'kubernetes.io/tls' }));
    assert.deepEqual(errs.map((e) => [e.field, e.type]), [
      ['data[tls.crt]', 'FieldValueRequired'],
      ['data[tls.key]', 'FieldValueRequired'],
    ]);
    assert.deepEqual(create(secrets, mk({ type: 'kubernetes.io/tls', data: { 'tls.crt': '', 'tls.key': '' } })), []);
  });

  it('keeps type immutable', () => {
    const old = mk({ type: 'Opaque' });
    const e = only(update(secrets, mk({ type: 'kubernetes.io/tls', data: { 'tls.crt': '', 'tls.key': '' } }), old));
    assert.equal(fieldErrorString(e), 'type: Invalid value: "kubernetes.io/tls": field is immutable');
    // an omitted type defaults to Opaque and is no change
    assert.deepEqual(update(secrets, mk({ data: { a: b64('1') } }), old), []);
  });

  it('freezes data and immutable once immutable is set', () => {
    const old = mk({ type: 'Opaque', immutable: true, data: { a: b64('1') } });
    const errs = update(secrets, mk({ stringData: { a: '2' } }), old);
    assert.deepEqual(errs.map(fieldErrorString), [
      'immutable: Forbidden: field is immutable when `immutable` is set',
      'data: Forbidden: field is immutable when `immutable` is set',
    ]);
    assert.deepEqual(update(secrets, mk({ immutable: true, data: { a: b64('1') } }, { labels: { l: 'v' } }), old), []);
    // a mutable secret may change data and become immutable
    assert.deepEqual(update(secrets, mk({ immutable: true, data: { b: '' } }), mk({ type: 'Opaque', data: { a: '' } })), []);
  });
});
