import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { JsonObject } from './access.js';
import { validateVolumes } from './volumes.js';
import { type Cause, DNS_LABEL_MSG, causes, createOptions } from './test-fixtures.js';

const vols = (volumes: JsonObject[], podName = 'p'): Cause[] => causes(validateVolumes(volumes, podName, 'spec.volumes', createOptions()).errors);
const v0 = 'spec.volumes[0]';
const MODE_MSG = 'must be a number between 0 and 0777 (octal), both inclusive';

describe('volumes: names and sources (ValidateVolumes, validateVolumeSource)', () => {
  const table: Array<[string, JsonObject[], Cause[]]> = [
    ['emptyDir', [{ name: 'a', emptyDir: {} }], []],
    ['no source', [{ name: 'a' }], [['FieldValueRequired', v0, 'Required value: must specify a volume type']]],
    ['no name', [{ emptyDir: {} }], [['FieldValueRequired', `${v0}.name`, 'Required value']]],
    ['name not a DNS label', [{ name: 'A', emptyDir: {} }], [['FieldValueInvalid', `${v0}.name`, `Invalid value: "A": ${DNS_LABEL_MSG}`]]],
    [
      'a name twice',
      [
        { name: 'a', emptyDir: {} },
        { name: 'a', emptyDir: {} },
      ],
      [['FieldValueDuplicate', 'spec.volumes[1].name', 'Duplicate value: "a"']],
    ],
    [
      'two sources (kube names the second)',
      [{ name: 'a', emptyDir: {}, configMap: { name: 'c' } }],
      [['FieldValueForbidden', `${v0}.configMap`, 'Forbidden: may not specify more than 1 volume type']],
    ],
    ['two sources: kube spells downwardAPI "downwarAPI" here', [{ name: 'a', secret: { secretName: 's' }, downwardAPI: {} }], [['FieldValueForbidden', `${v0}.downwarAPI`, 'Forbidden: may not specify more than 1 volume type']]],
    ['two sources: and cephfs "cephFS"', [{ name: 'a', secret: { secretName: 's' }, cephfs: { monitors: ['m'] } }], [['FieldValueForbidden', `${v0}.cephFS`, 'Forbidden: may not specify more than 1 volume type']]],
    ['persistentVolumeClaim without claimName', [{ name: 'a', persistentVolumeClaim: {} }], [['FieldValueRequired', `${v0}.persistentVolumeClaim.claimName`, 'Required value']]],
    [
      'gitRepo',
      [{ name: 'a', gitRepo: { directory: '../x' } }],
      [
        ['FieldValueRequired', `${v0}.gitRepo.repository`, 'Required value'],
        ['FieldValueInvalid', `${v0}.gitRepo.directory`, "Invalid value: \"../x\": must not contain '..'"],
      ],
    ],
    [
      'iscsi with an initiator name: <volume>:<targetPortal> under 64 characters',
      [{ name: 'a'.repeat(40), iscsi: { targetPortal: '10.0.0.1:3260'.padEnd(30, '0'), iqn: 'iqn.2001-04.com.example:storage', lun: 0, initiatorName: 'iqn.2001-04.com.example:host' } }],
      [['FieldValueInvalid', `${v0}.name`, `Invalid value: "${'a'.repeat(40)}": Total length of <volume name>:<iscsi.targetPortal> must be under 64 characters if iscsi.initiatorName is specified.`]],
    ],
  ];
  for (const [name, volumes, want] of table) it(name, () => assert.deepEqual(vols(volumes), want));
  it('returns the valid volumes by name', () => {
    const r = validateVolumes([{ name: 'ok', emptyDir: {} }, { name: 'bad' }], 'p', 'spec.volumes', createOptions());
    assert.deepEqual([...r.volumes.keys()], ['ok']);
  });
});

describe('volumes: secret, configMap, downwardAPI, projected', () => {
  const table: Array<[string, JsonObject[], Cause[]]> = [
    ['secret and configMap with items', [{ name: 'a', secret: { secretName: 's', defaultMode: 0o644, items: [{ key: 'k', path: 'p', mode: 0o600 }] } }], []],
    [
      'secret without a name, a bad mode, an item without key or path',
      [{ name: 'a', secret: { defaultMode: 0o1000, items: [{}] } }],
      [
        ['FieldValueRequired', `${v0}.secret.secretName`, 'Required value'],
        ['FieldValueInvalid', `${v0}.secret.defaultMode`, `Invalid value: 512: ${MODE_MSG}`],
        ['FieldValueRequired', `${v0}.secret.items[0].key`, 'Required value'],
        ['FieldValueRequired', `${v0}.secret.items[0].path`, 'Required value'],
      ],
    ],
    [
      'configMap item paths: absolute, stepping out, ..-prefixed, bad mode',
      [{ name: 'a', configMap: { name: 'c', items: [{ key: 'a', path: '/etc' }, { key: 'b', path: '..x' }, { key: 'c', path: 'ok', mode: -1 }] } }],
      [
        ['FieldValueInvalid', `${v0}.configMap.items[0].path`, 'Invalid value: "/etc": must be a relative path'],
        ['FieldValueInvalid', `${v0}.configMap.items[1].path`, "Invalid value: \"..x\": must not start with '..'"],
        ['FieldValueInvalid', `${v0}.configMap.items[2].mode`, `Invalid value: -1: ${MODE_MSG}`],
      ],
    ],
    ['configMap without a name', [{ name: 'a', configMap: {} }], [['FieldValueRequired', `${v0}.configMap.name`, 'Required value']]],
    [
      'downwardAPI items: both refs, neither, a path the volume may not read',
      [
        {
          name: 'a',
          downwardAPI: {
            items: [
              { path: 'x', fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.name' }, resourceFieldRef: { containerName: 'c', resource: 'limits.cpu' } },
              { path: 'y' },
              { path: 'z', fieldRef: { apiVersion: 'v1', fieldPath: 'spec.nodeName' } },
            ],
          },
        },
      ],
      [
        ['FieldValueInvalid', `${v0}.downwardAPI`, 'Invalid value: "resource": fieldRef and resourceFieldRef can not be specified simultaneously'],
        ['FieldValueRequired', `${v0}.downwardAPI`, 'Required value: one of fieldRef and resourceFieldRef is required'],
        [
          'FieldValueNotSupported',
          `${v0}.downwardAPI.fieldRef.fieldPath`,
          'Unsupported value: "spec.nodeName": supported values: "metadata.annotations", "metadata.labels", "metadata.name", "metadata.namespace", "metadata.uid"',
        ],
      ],
    ],
    [
      'downwardAPI resourceFieldRef needs a containerName',
      [{ name: 'a', downwardAPI: { items: [{ path: 'x', resourceFieldRef: { resource: 'limits.cpu' } }] } }],
      [['FieldValueRequired', `${v0}.downwardAPI.resourceFieldRef.containerName`, 'Required value']],
    ],
    [
      'projected: two kinds in one source, a path twice, a short token',
      [
        {
          name: 'a',
          projected: {
            sources: [
              { secret: { name: 's', items: [{ key: 'k', path: 'p' }] }, configMap: { name: 'c', items: [{ key: 'k', path: 'p' }] } },
              { serviceAccountToken: { expirationSeconds: 60 } },
            ],
          },
        },
      ],
      [
        ['FieldValueInvalid', `${v0}.projected`, 'Invalid value: "c": conflicting duplicate paths'],
        ['FieldValueForbidden', `${v0}.projected.sources[0]`, 'Forbidden: may not specify more than 1 volume type'],
        ['FieldValueInvalid', `${v0}.projected.sources[1].serviceAccountToken.expirationSeconds`, 'Invalid value: 60: may not specify a duration less than 10 minutes'],
        ['FieldValueRequired', `${v0}.projected.path`, 'Required value'],
      ],
    ],
    [
      'projected: a token valid for more than 2^32 s',
      [{ name: 'a', projected: { sources: [{ serviceAccountToken: { path: 't', expirationSeconds: 2 ** 32 + 1 } }] } }],
      [['FieldValueInvalid', `${v0}.projected.sources[0].serviceAccountToken.expirationSeconds`, 'Invalid value: 4294967297: may not specify a duration larger than 2^32 seconds']],
    ],
  ];
  for (const [name, volumes, want] of table) it(name, () => assert.deepEqual(vols(volumes), want));
});

describe('volumes: the sources shared with PersistentVolumes, through the pod dispatcher', () => {
  const table: Array<[string, JsonObject[], Cause[]]> = [
    ['hostPath without a path', [{ name: 'a', hostPath: { type: '' } }], [['FieldValueRequired', `${v0}.hostPath.path`, 'Required value']]],
    [
      'hostPath type unknown',
      [{ name: 'a', hostPath: { path: '/x', type: 'Dir' } }],
      [['FieldValueNotSupported', `${v0}.hostPath.type`, 'Unsupported value: "Dir": supported values: "", "BlockDevice", "CharDevice", "Directory", "DirectoryOrCreate", "File", "FileOrCreate", "Socket"']],
    ],
    ['gcePersistentDisk errors carry kube\'s "persistentDisk"', [{ name: 'a', gcePersistentDisk: {} }], [['FieldValueRequired', `${v0}.persistentDisk.pdName`, 'Required value']]],
    [
      'nfs with a relative path',
      [{ name: 'a', nfs: { server: 's', path: 'rel' } }],
      [['FieldValueInvalid', `${v0}.nfs.path`, 'Invalid value: "rel": must be an absolute path']],
    ],
    ['persistentVolumeClaim with an empty claimName', [{ name: 'a', persistentVolumeClaim: { claimName: '' } }], [['FieldValueRequired', `${v0}.persistentVolumeClaim.claimName`, 'Required value']]],
  ];
  for (const [name, volumes, want] of table) it(name, () => assert.deepEqual(vols(volumes), want));
});

describe('volumes: csi and ephemeral', () => {
  const template = { spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } };
  const table: Array<[string, JsonObject[], string, Cause[]]> = [
    ['an inline CSI volume', [{ name: 'a', csi: { driver: 'csi.example.com', nodePublishSecretRef: { name: 's' } } }], 'p', []],
    [
      'CSI driver missing, and an empty secret name',
      [{ name: 'a', csi: { nodePublishSecretRef: {} } }],
      'p',
      [
        ['FieldValueRequired', `${v0}.csi.driver`, 'Required value'],
        [
          'FieldValueInvalid',
          `${v0}.csi.driver`,
          "Invalid value: \"\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
        ],
        ['FieldValueRequired', `${v0}.csi.nodePublishSecretRef.name`, 'Required value'],
      ],
    ],
    ['CSI driver too long', [{ name: 'a', csi: { driver: 'a'.repeat(64) } }], 'p', [['FieldValueTooLong', `${v0}.csi.driver`, 'Too long: must have at most 63 bytes']]],
    ['ephemeral without a claim template', [{ name: 'a', ephemeral: {} }], 'p', [['FieldValueRequired', `${v0}.ephemeral.volumeClaimTemplate`, 'Required value']]],
    ['ephemeral', [{ name: 'a', ephemeral: { volumeClaimTemplate: { metadata: { labels: { x: 'y' } }, ...template } } }], 'p', []],
    [
      'ephemeral claim spec is a claim spec',
      [{ name: 'a', ephemeral: { volumeClaimTemplate: { spec: {} } } }],
      'p',
      [
        ['FieldValueRequired', `${v0}.ephemeral.volumeClaimTemplate.spec.accessModes`, 'Required value: at least 1 access mode is required'],
        ['FieldValueRequired', `${v0}.ephemeral.volumeClaimTemplate.spec.resources[storage]`, 'Required value'],
      ],
    ],
    [
      'ephemeral claim template metadata beyond labels and annotations',
      [{ name: 'a', ephemeral: { volumeClaimTemplate: { metadata: { name: 'n', uid: 'u', finalizers: ['f'] }, ...template } } }],
      'p',
      [
        ['FieldValueForbidden', `${v0}.ephemeral.volumeClaimTemplate.metadata.name`, 'Forbidden: cannot be set for an ephemeral volume'],
        ['FieldValueForbidden', `${v0}.ephemeral.volumeClaimTemplate.metadata.uID`, 'Forbidden: cannot be set for an ephemeral volume'],
        ['FieldValueForbidden', `${v0}.ephemeral.volumeClaimTemplate.metadata.finalizers`, 'Forbidden: cannot be set for an ephemeral volume'],
      ],
    ],
    [
      'the PVC name <pod>-<volume> must be a valid name',
      [{ name: 'a', ephemeral: { volumeClaimTemplate: template } }],
      'x'.repeat(252),
      [['FieldValueInvalid', `${v0}.name`, `Invalid value: "a": PVC name "${'x'.repeat(252)}-a": must be no more than 253 characters`]],
    ],
    [
      'a claim that an ephemeral volume creates',
      [
        { name: 'a', ephemeral: { volumeClaimTemplate: template } },
        { name: 'b', persistentVolumeClaim: { claimName: 'p-a' } },
      ],
      'p',
      [['FieldValueInvalid', 'spec.volumes[1].persistentVolumeClaim.claimName', 'Invalid value: "p-a": must not reference a PVC that gets created for an ephemeral volume']],
    ],
    ['templates (no pod name) skip the PVC checks', [{ name: 'a', ephemeral: { volumeClaimTemplate: template } }, { name: 'b', persistentVolumeClaim: { claimName: '-a' } }], '', []],
  ];
  for (const [name, volumes, podName, want] of table) it(name, () => assert.deepEqual(vols(volumes, podName), want));
});
