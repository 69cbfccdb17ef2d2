import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { validateEnv, validateEnvFrom } from './env.js';
import { type Cause, DNS_SUBDOMAIN_MSG, causes, createOptions } from './test-fixtures.js';

const ENV_NAME_MSG =
  "a valid environment variable name must consist of alphabetic characters, digits, '_', '-', or '.', and must not start with a digit (e.g. 'my.env-name',  or 'MY_ENV.NAME',  or 'MyEnvName1', regex used for validation is '[-._a-zA-Z][-._a-zA-Z0-9]*')";
const KEY_MSG =
  "a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')";
const ENV_FIELD_PATHS = '"metadata.name", "metadata.namespace", "metadata.uid", "spec.nodeName", "spec.serviceAccountName", "status.hostIP", "status.podIP", "status.podIPs"';

const env = (vars: unknown[]): Cause[] => causes(validateEnv(vars, 'env', createOptions()));
const fieldRef = (fieldPath: string, apiVersion = 'v1'): unknown[] => [{ name: 'X', valueFrom: { fieldRef: { apiVersion, fieldPath } } }];
const resourceRef = (resource: string): unknown[] => [{ name: 'X', valueFrom: { resourceFieldRef: { resource } } }];

describe('env: names and sources (ValidateEnv)', () => {
  const table: Array<[string, unknown[], Cause[]]> = [
    ['plain values', [{ name: 'A', value: '1' }, { name: 'a.b-c_d' }], []],
    ['name missing', [{ value: '1' }], [['FieldValueRequired', 'env[0].name', 'Required value']]],
    ['name starting with a digit', [{ name: '1A' }], [['FieldValueInvalid', 'env[0].name', `Invalid value: "1A": ${ENV_NAME_MSG}`]]],
    ['name ..', [{ name: '..' }], [['FieldValueInvalid', 'env[0].name', 'Invalid value: "..": must not be \'..\'']]],
    [
      'valueFrom with no source',
      [{ name: 'A', valueFrom: {} }],
      [['FieldValueInvalid', 'env[0].valueFrom', 'Invalid value: "": must specify one of: `fieldRef`, `resourceFieldRef`, `configMapKeyRef` or `secretKeyRef`']],
    ],
    [
      'valueFrom beside a value',
      [{ name: 'A', value: 'x', valueFrom: { secretKeyRef: { name: 's', key: 'k' } } }],
      [['FieldValueInvalid', 'env[0].valueFrom', 'Invalid value: "": may not be specified when `value` is not empty']],
    ],
    [
      'two sources',
      [{ name: 'A', valueFrom: { secretKeyRef: { name: 's', key: 'k' }, configMapKeyRef: { name: 'c', key: 'k' } } }],
      [['FieldValueInvalid', 'env[0].valueFrom', 'Invalid value: "": may not have more than one field specified at a time']],
    ],
    [
      'key selector name and key',
      [{ name: 'A', valueFrom: { configMapKeyRef: { name: 'Bad', key: '' } } }, { name: 'B', valueFrom: { secretKeyRef: { name: 's', key: 'a/b' } } }],
      [
        ['FieldValueInvalid', 'env[0].valueFrom.configMapKeyRef.name', `Invalid value: "Bad": ${DNS_SUBDOMAIN_MSG}`],
        ['FieldValueRequired', 'env[0].valueFrom.configMapKeyRef.key', 'Required value'],
        ['FieldValueInvalid', 'env[1].valueFrom.secretKeyRef.key', `Invalid value: "a/b": ${KEY_MSG}`],
      ],
    ],
  ];
  for (const [name, vars, want] of table) it(name, () => assert.deepEqual(env(vars), want));
});

describe('env: downward API fieldRef (validateObjectFieldSelector)', () => {
  const table: Array<[string, unknown[], Cause[]]> = [
    ['every supported path', ENV_FIELD_PATHS.split(', ').map((p) => ({ name: 'X', valueFrom: { fieldRef: { apiVersion: 'v1', fieldPath: JSON.parse(p) as string } } })), []],
    ['spec.host is spec.nodeName', fieldRef('spec.host'), []],
    ['apiVersion missing', fieldRef('metadata.name', ''), [['FieldValueRequired', 'env[0].valueFrom.fieldRef.apiVersion', 'Required value']]],
    ['fieldPath missing', fieldRef(''), [['FieldValueRequired', 'env[0].valueFrom.fieldRef.fieldPath', 'Required value']]],
    [
      'another apiVersion',
      fieldRef('metadata.name', 'v2'),
      [['FieldValueInvalid', 'env[0].valueFrom.fieldRef.fieldPath', 'Invalid value: "metadata.name": error converting fieldPath: unsupported pod version: v2']],
    ],
    [
      'an unknown path',
      fieldRef('spec.containers'),
      [['FieldValueInvalid', 'env[0].valueFrom.fieldRef.fieldPath', 'Invalid value: "spec.containers": error converting fieldPath: field label not supported: spec.containers']],
    ],
    [
      'a path pods have but env may not read',
      fieldRef('status.phase'),
      [['FieldValueNotSupported', 'env[0].valueFrom.fieldRef.fieldPath', `Unsupported value: "status.phase": supported values: ${ENV_FIELD_PATHS}`]],
    ],
    ['metadata.labels without subscript', fieldRef('metadata.labels'), [['FieldValueNotSupported', 'env[0].valueFrom.fieldRef.fieldPath', `Unsupported value: "metadata.labels": supported values: ${ENV_FIELD_PATHS}`]]],
    ['a label by key', fieldRef("metadata.labels['app.kubernetes.io/name']"), []],
    ['an annotation by key, case-insensitively', fieldRef("metadata.annotations['Example.COM/Key']"), []],
    [
      'a subscript on another path',
      fieldRef("spec.nodeName['x']"),
      [['FieldValueInvalid', 'env[0].valueFrom.fieldRef.fieldPath', "Invalid value: \"spec.nodeName['x']\": error converting fieldPath: field label does not support subscript: spec.nodeName['x']"]],
    ],
    [
      'an invalid label key',
      fieldRef("metadata.labels['a b']"),
      [
        [
          'FieldValueInvalid',
          'env[0].valueFrom.fieldRef',
          "Invalid value: \"a b\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
        ],
      ],
    ],
  ];
  for (const [name, vars, want] of table) it(name, () => assert.deepEqual(env(vars), want));
});

describe('env: resourceFieldRef (validateContainerResourceFieldSelector)', () => {
  const RESOURCES = '"limits.cpu", "limits.ephemeral-storage", "limits.memory", "requests.cpu", "requests.ephemeral-storage", "requests.memory"';
  it('accepts the container resources and hugepages', () => {
    for (const r of ['limits.cpu', 'requests.memory', 'limits.ephemeral-storage', 'requests.hugepages-2Mi', 'limits.hugepages-1Gi']) assert.deepEqual(env(resourceRef(r)), []);
  });
  it('requires a resource', () => assert.deepEqual(env(resourceRef('')), [['FieldValueRequired', 'env[0].valueFrom.resourceFieldRef.resource', 'Required value']]));
  it('rejects another resource', () =>
    assert.deepEqual(env(resourceRef('limits.gpu')), [['FieldValueNotSupported', 'env[0].valueFrom.resourceFieldRef.resource', `Unsupported value: "limits.gpu": supported values: ${RESOURCES}`]]));
  it('rejects hugepages when DownwardAPIHugePages is off', () =>
    assert.deepEqual(causes(validateEnv(resourceRef('limits.hugepages-2Mi'), 'env', createOptions({ allowDownwardAPIHugePages: false }))), [
      ['FieldValueNotSupported', 'env[0].valueFrom.resourceFieldRef.resource', `Unsupported value: "limits.hugepages-2Mi": supported values: ${RESOURCES}`],
    ]));
});

describe('envFrom (ValidateEnvFrom)', () => {
  const table: Array<[string, unknown[], Cause[]]> = [
    ['a config map and a secret', [{ configMapRef: { name: 'c' }, prefix: 'P_' }, { secretRef: { name: 's' } }], []],
    ['a name with a trailing dash (checked as a prefix)', [{ configMapRef: { name: 'c-' } }], []],
    ['no source (the list is named)', [{ prefix: 'P' }], [['FieldValueInvalid', 'envFrom', 'Invalid value: "": must specify one of: `configMapRef` or `secretRef`']]],
    [
      'two sources',
      [{ configMapRef: { name: 'c' }, secretRef: { name: 's' } }],
      [['FieldValueInvalid', 'envFrom', 'Invalid value: "": may not have more than one field specified at a time']],
    ],
    ['a name missing', [{ secretRef: {} }], [['FieldValueRequired', 'envFrom[0].secretRef.name', 'Required value']]],
    ['a prefix that is no env name', [{ prefix: '1', configMapRef: { name: 'c' } }], [['FieldValueInvalid', 'envFrom[0].prefix', `Invalid value: "1": ${ENV_NAME_MSG}`]]],
  ];
  for (const [name, vars, want] of table) it(name, () => assert.deepEqual(causes(validateEnvFrom(vars, 'envFrom')), want));
});
