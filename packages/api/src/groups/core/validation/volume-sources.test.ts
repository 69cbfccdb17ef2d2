import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { fieldErrorString } from '../../../field-errors.js';
import { cleanPath, validateHostPathVolumeSource, validateKeyToPath, validateSecretVolumeSource } from './volume-paths.js';
import {
  isHostPort,
  validateAzureDisk,
  validateCSIDriverName,
  validateCSIPersistentVolumeSource,
  validateFCVolumeSource,
  validateFlexVolumeSource,
  validateISCSIPersistentVolumeSource,
  validateISCSIVolumeSource,
  validateQuobyteVolumeSource,
  validateStorageOSPersistentVolumeSource,
} from './volume-sources.js';

const texts = (errs: ReturnType<typeof validateFCVolumeSource>): string[] => errs.map(fieldErrorString);

describe('path rules', () => {
  it('clean paths as Go does and refuse backsteps', () => {
    assert.equal(cleanPath('//a/./b/..'), '/a');
    assert.equal(cleanPath('/..'), '/');
    assert.equal(cleanPath(''), '.');
    assert.deepEqual(texts(validateHostPathVolumeSource({ path: '/a/../b', type: 'Dir' }, 'v')), [
      "v.path: Invalid value: \"/a/../b\": must not contain '..'",
      'v.type: Unsupported value: "Dir": supported values: "", "BlockDevice", "CharDevice", "Directory", "DirectoryOrCreate", "File", "FileOrCreate", "Socket"',
    ]);
    assert.deepEqual(texts(validateHostPathVolumeSource({}, 'v')), ['v.path: Required value']);
  });

  it('check key-to-path items and file modes', () => {
    assert.deepEqual(texts(validateKeyToPath({ key: 'k', path: '..x', mode: 512 }, 'i')), [
      "i.path: Invalid value: \"..x\": must not start with '..'",
      'i.mode: Invalid value: 512: must be a number between 0 and 0777 (octal), both inclusive',
    ]);
    assert.deepEqual(texts(validateSecretVolumeSource({ items: [{ key: '', path: '/abs' }] }, 's')), [
      's.secretName: Required value',
      's.items[0].key: Required value',
      's.items[0].path: Invalid value: "/abs": must be a relative path',
    ]);
  });
});

describe('storage sources', () => {
  it('iSCSI: names, LUNs, CHAP secrets; the PV variant bounds <pv>:<portal>', () => {
    assert.deepEqual(validateISCSIVolumeSource({ targetPortal: '1.2.3.4:3260', iqn: 'iqn.2001-04.com.example:storage.disk1', lun: 0 }, 'v'), []);
    assert.deepEqual(texts(validateISCSIVolumeSource({ targetPortal: 'p', iqn: 'foo', lun: 256, chapAuthSession: true, initiatorName: 'eui.123' }, 'v')), [
      'v.iqn: Invalid value: "foo": must be valid format starting with iqn, eui, or naa',
      'v.lun: Invalid value: 256: must be between 0 and 255, inclusive',
      'v.secretRef: Required value',
      'v.initiatorname: Invalid value: "eui.123": must be valid format',
    ]);
    assert.deepEqual(texts(validateISCSIPersistentVolumeSource({ targetPortal: 'x'.repeat(60), iqn: 'naa.0', initiatorName: 'iqn.2001-04.com.example:a', secretRef: {} }, 'pv-name', 'spec.iscsi')), [
      `spec.iscsi.targetportal: Invalid value: "${'x'.repeat(60)}": Total length of <volume name>:<iscsi.targetPortal> must be under 64 characters if iscsi.initiatorName is specified.`,
      'spec.iscsi.iqn: Invalid value: "naa.0": must be valid format',
      'spec.iscsi.secretRef.name: Required value',
    ]);
  });

  it('FC: WWNs or WWIDs, and a LUN with WWNs', () => {
    assert.deepEqual(texts(validateFCVolumeSource({}, 'v')), ['v.targetWWNs: Required value: must specify either targetWWNs or wwids, but not both']);
    assert.deepEqual(texts(validateFCVolumeSource({ targetWWNs: ['a'], wwids: ['b'] }, 'v')), [
      'v.targetWWNs: Invalid value: []string{"a"}: targetWWNs and wwids can not be specified simultaneously',
      'v.lun: Required value: lun is required if targetWWNs is specified',
    ]);
  });

  it('Quobyte registries are host:port pairs as Go splits them', () => {
    assert.equal(isHostPort('[::1]:7861'), true);
    assert.equal(isHostPort('::1:7861'), false);
    assert.equal(isHostPort('host'), false);
    assert.deepEqual(texts(validateQuobyteVolumeSource({ registry: 'a:1,b', volume: 'v' }, 'q')), [
      'q.registry: Invalid value: "a:1,b": must be a host:port pair or multiple pairs separated by commas',
    ]);
  });

  it('Azure disks, Flex options, StorageOS and CSI references', () => {
    assert.deepEqual(texts(validateAzureDisk({ diskName: 'd', diskURI: 'http://x', kind: 'Shared', cachingMode: 'Fast' }, 'a')), [
      'a.cachingMode: Unsupported value: "Fast": supported values: "None", "ReadOnly", "ReadWrite"',
      'a.diskURI: Unsupported value: "http://x": supported values: "https://{account-name}.blob.core.windows.net/{container-name}/{disk-name}.vhd"',
    ]);
    assert.deepEqual(texts(validateFlexVolumeSource({ driver: 'd', options: { 'kubernetes.io/x': '1', 'sub.k8s.io': '2', ok: '3' } }, 'f')), [
      'f.options[kubernetes.io/x]: Invalid value: "kubernetes.io/x": kubernetes.io and k8s.io namespaces are reserved',
      'f.options[sub.k8s.io]: Invalid value: "sub.k8s.io": kubernetes.io and k8s.io namespaces are reserved',
    ]);
    assert.deepEqual(texts(validateStorageOSPersistentVolumeSource({ volumeName: 'v', secretRef: { name: 's' } }, 's')), ['s.secretRef.namespace: Required value']);
    assert.deepEqual(texts(validateCSIDriverName('', 'd')), [
      'd: Required value',
      "d: Invalid value: \"\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
    ]);
    assert.deepEqual(texts(validateCSIPersistentVolumeSource({ driver: 'Ebs.CSI.aws.com', volumeHandle: 'h', nodePublishSecretRef: { name: 'S' } }, 'spec.csi')), [
      "spec.csi.name: Invalid value: \"S\": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')",
      'spec.csi.nodePublishSecretRef.namespace: Required value',
    ]);
  });
});
