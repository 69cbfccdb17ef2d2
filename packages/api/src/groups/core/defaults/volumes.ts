/**
 * The volume part of kube 1.24's generated pod defaulting (zz_generated.defaults.go over
 * pkg/apis/core/v1/defaults.go): a volume without a source is an emptyDir; file modes 0644;
 * hostPath type ""; iSCSI, RBD, ScaleIO, AzureDisk and projected token defaults.
 */
import { type JsonObject, asObject } from '../validation/access.js';
import { defaultNil, defaultZero, eachObject, withObject } from './pod-json.js';
import { setDefaultsResourceList } from './resource-list.js';

/** 0644, the default mode of secret, configMap, downwardAPI and projected volumes. */
export const DEFAULT_VOLUME_MODE = 0o644;

/** The v1 VolumeSource members: a volume with none of them set gets an emptyDir. */
const VOLUME_SOURCES = [
  'hostPath',
  'emptyDir',
  'gcePersistentDisk',
  'awsElasticBlockStore',
  'gitRepo',
  'secret',
  'nfs',
  'iscsi',
  'glusterfs',
  'persistentVolumeClaim',
  'rbd',
  'flexVolume',
  'cinder',
  'cephfs',
  'flocker',
  'downwardAPI',
  'fc',
  'azureFile',
  'configMap',
  'vsphereVolume',
  'quobyte',
  'azureDisk',
  'photonPersistentDisk',
  'projected',
  'portworxVolume',
  'scaleIO',
  'storageos',
  'csi',
  'ephemeral',
];

function defaultFieldRefs(items: JsonObject): void {
  eachObject(items, 'items', (item) => withObject(item, 'fieldRef', (ref) => defaultZero(ref, 'apiVersion', 'v1')));
}

/** One volume's defaults (SetDefaults_Volume and the source defaults under it), in kube's order. */
export function setDefaultsVolume(vol: JsonObject): void {
  if (!VOLUME_SOURCES.some((k) => vol[k] !== undefined && vol[k] !== null)) vol['emptyDir'] = {};
  withObject(vol, 'hostPath', (s) => defaultNil(s, 'type', ''));
  withObject(vol, 'secret', (s) => defaultNil(s, 'defaultMode', DEFAULT_VOLUME_MODE));
  withObject(vol, 'iscsi', (s) => defaultZero(s, 'iscsiInterface', 'default'));
  withObject(vol, 'rbd', (s) => {
    defaultZero(s, 'pool', 'rbd');
    defaultZero(s, 'user', 'admin');
    defaultZero(s, 'keyring', '/etc/ceph/keyring');
  });
  withObject(vol, 'downwardAPI', (s) => {
    defaultNil(s, 'defaultMode', DEFAULT_VOLUME_MODE);
    defaultFieldRefs(s);
  });
  withObject(vol, 'configMap', (s) => defaultNil(s, 'defaultMode', DEFAULT_VOLUME_MODE));
  withObject(vol, 'azureDisk', (s) => {
    defaultNil(s, 'cachingMode', 'ReadWrite');
    defaultNil(s, 'kind', 'Shared');
    defaultNil(s, 'fsType', 'ext4');
    defaultNil(s, 'readOnly', false);
  });
  withObject(vol, 'projected', (s) => {
    defaultNil(s, 'defaultMode', DEFAULT_VOLUME_MODE);
    eachObject(s, 'sources', (src) => {
      withObject(src, 'downwardAPI', defaultFieldRefs);
      withObject(src, 'serviceAccountToken', (t) => defaultNil(t, 'expirationSeconds', 3600));
    });
  });
  withObject(vol, 'scaleIO', (s) => {
    defaultZero(s, 'storageMode', 'ThinProvisioned');
    defaultZero(s, 'fsType', 'xfs');
  });
  withObject(vol, 'ephemeral', (s) =>
    withObject(s, 'volumeClaimTemplate', (t) => {
      if (!asObject(t['spec'])) t['spec'] = {};
      const spec = t['spec'] as JsonObject;
      defaultNil(spec, 'volumeMode', 'Filesystem');
      const resources = asObject(spec['resources']);
      if (resources) {
        setDefaultsResourceList(resources['limits']);
        setDefaultsResourceList(resources['requests']);
      }
    }),
  );
}
