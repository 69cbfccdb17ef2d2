/**
 * A pod's volumes as kube 1.24 validates them (ValidateVolumes, validateVolumeSource, the
 * ephemeral source); the other sources' rules are the ones shared with PersistentVolumes
 * (volume-sources.ts, volume-paths.ts) and the projections (volume-projections.ts).
 */
import { type FieldError, fieldErr } from '../../../field-errors.js';
import { nameIsDNSSubdomain } from '../../../validation.js';
import { type JsonObject, asObject, isSet, objects, str } from './access.js';
import { validateDNS1123Label } from './basic.js';
import type { VolumeMap } from './mounts.js';
import type { PodValidationOptions } from './pod-options.js';
import { validatePersistentVolumeClaimTemplate } from './persistentvolumeclaim.js';
import { validateEmptyDirSizeLimit } from './quantities.js';
import { validateDownwardAPIVolumeSource, validateProjectedVolumeSource } from './volume-projections.js';
import { validateConfigMapVolumeSource, validateGitRepoVolumeSource, validateHostPathVolumeSource, validatePersistentClaimVolumeSource, validateSecretVolumeSource } from './volume-paths.js';
import * as shared from './volume-sources.js';

/** kube's `validateEphemeralVolumeSource`. */
export function validateEphemeralVolumeSource(source: JsonObject, field: string): FieldError[] {
  const template = asObject(source['volumeClaimTemplate']);
  if (!template) return [fieldErr.required(`${field}.volumeClaimTemplate`)];
  return validatePersistentVolumeClaimTemplate(template, `${field}.volumeClaimTemplate`);
}

interface SourceContext {
  volName: string;
  podName: string;
  opts: PodValidationOptions;
}

type Check = (source: JsonObject, field: string, ctx: SourceContext) => FieldError[];

/** A source validator that needs only the source and its path. */
const plain = (fn: (source: unknown, field: string) => FieldError[]): Check => (source, field) => fn(source, field);

/**
 * kube's volume sources in the order validateVolumeSource checks them: the member, the path the
 * "more than 1 volume type" error names, and the path its own errors use (kube's spellings differ
 * in three places: `persistentDisk`, `cephFS`/`cephfs`, `downwarAPI`).
 */
const SOURCES: Array<{ key: string; forbidden: string; path: string; check: Check }> = [
  { key: 'hostPath', forbidden: 'hostPath', path: 'hostPath', check: plain(validateHostPathVolumeSource) },
  { key: 'gitRepo', forbidden: 'gitRepo', path: 'gitRepo', check: plain(validateGitRepoVolumeSource) },
  { key: 'gcePersistentDisk', forbidden: 'gcePersistentDisk', path: 'persistentDisk', check: plain(shared.validateGCEPersistentDiskVolumeSource) },
  { key: 'awsElasticBlockStore', forbidden: 'awsElasticBlockStore', path: 'awsElasticBlockStore', check: plain(shared.validateAWSElasticBlockStoreVolumeSource) },
  { key: 'secret', forbidden: 'secret', path: 'secret', check: plain(validateSecretVolumeSource) },
  { key: 'nfs', forbidden: 'nfs', path: 'nfs', check: plain(shared.validateNFSVolumeSource) },
  { key: 'iscsi', forbidden: 'iscsi', path: 'iscsi', check: plain(shared.validateISCSIVolumeSource) },
  { key: 'glusterfs', forbidden: 'glusterfs', path: 'glusterfs', check: plain(shared.validateGlusterfsVolumeSource) },
  { key: 'flocker', forbidden: 'flocker', path: 'flocker', check: plain(shared.validateFlockerVolumeSource) },
  {
    key: 'persistentVolumeClaim',
    forbidden: 'persistentVolumeClaim',
    path: 'persistentVolumeClaim',
    check: plain(validatePersistentClaimVolumeSource),
  },
  { key: 'rbd', forbidden: 'rbd', path: 'rbd', check: plain(shared.validateRBDVolumeSource) },
  { key: 'cinder', forbidden: 'cinder', path: 'cinder', check: plain(shared.validateCinderVolumeSource) },
  { key: 'cephfs', forbidden: 'cephFS', path: 'cephfs', check: plain(shared.validateCephFSVolumeSource) },
  { key: 'quobyte', forbidden: 'quobyte', path: 'quobyte', check: plain(shared.validateQuobyteVolumeSource) },
  { key: 'downwardAPI', forbidden: 'downwarAPI', path: 'downwardAPI', check: (s, f, c) => validateDownwardAPIVolumeSource(s, f, c.opts) },
  { key: 'fc', forbidden: 'fc', path: 'fc', check: plain(shared.validateFCVolumeSource) },
  { key: 'flexVolume', forbidden: 'flexVolume', path: 'flexVolume', check: plain(shared.validateFlexVolumeSource) },
  { key: 'configMap', forbidden: 'configMap', path: 'configMap', check: plain(validateConfigMapVolumeSource) },
  { key: 'azureFile', forbidden: 'azureFile', path: 'azureFile', check: plain(shared.validateAzureFile) },
  { key: 'vsphereVolume', forbidden: 'vsphereVolume', path: 'vsphereVolume', check: plain(shared.validateVsphereVolumeSource) },
  { key: 'photonPersistentDisk', forbidden: 'photonPersistentDisk', path: 'photonPersistentDisk', check: plain(shared.validatePhotonPersistentDiskVolumeSource) },
  { key: 'portworxVolume', forbidden: 'portworxVolume', path: 'portworxVolume', check: plain(shared.validatePortworxVolumeSource) },
  { key: 'azureDisk', forbidden: 'azureDisk', path: 'azureDisk', check: plain(shared.validateAzureDisk) },
  { key: 'storageos', forbidden: 'storageos', path: 'storageos', check: plain(shared.validateStorageOSVolumeSource) },
  { key: 'projected', forbidden: 'projected', path: 'projected', check: (s, f, c) => validateProjectedVolumeSource(s, f, c.opts) },
  { key: 'scaleIO', forbidden: 'scaleIO', path: 'scaleIO', check: plain(shared.validateScaleIOVolumeSource) },
  { key: 'csi', forbidden: 'csi', path: 'csi', check: plain(shared.validateCSIVolumeSource) },
  {
    key: 'ephemeral',
    forbidden: 'ephemeral',
    path: 'ephemeral',
    check: (s, f, c) => {
      const errs = validateEphemeralVolumeSource(s, f);
      // The PVC this creates is named <pod>-<volume>; skipped when either is unknown.
      if (c.podName !== '' && c.volName !== '') {
        const pvcName = `${c.podName}-${c.volName}`;
        const volPath = f.slice(0, f.lastIndexOf('.'));
        for (const m of nameIsDNSSubdomain(pvcName, false)) errs.push(fieldErr.invalid(`${volPath}.name`, c.volName, `PVC name "${pvcName}": ${m}`));
      }
      return errs;
    },
  },
];

/** kube's `validateVolumeSource`: exactly one source, each checked by its own rules. */
export function validateVolumeSource(vol: JsonObject, field: string, ctx: SourceContext): FieldError[] {
  const errs: FieldError[] = [];
  let n = 0;
  const emptyDir = asObject(vol['emptyDir']);
  if (emptyDir) {
    n++;
    errs.push(...validateEmptyDirSizeLimit(emptyDir['sizeLimit'], `${field}.emptyDir.sizeLimit`));
  }
  for (const src of SOURCES) {
    const source = asObject(vol[src.key]);
    if (!source) continue;
    if (n > 0) errs.push(fieldErr.forbidden(`${field}.${src.forbidden}`, 'may not specify more than 1 volume type'));
    else {
      n++;
      errs.push(...src.check(source, `${field}.${src.path}`, ctx));
    }
    if (src.key === 'iscsi' && isSet(source['initiatorName']) && `${ctx.volName}:${str(source['targetPortal'])}`.length > 64) {
      errs.push(fieldErr.invalid(`${field}.name`, ctx.volName, 'Total length of <volume name>:<iscsi.targetPortal> must be under 64 characters if iscsi.initiatorName is specified.'));
    }
  }
  if (n === 0) errs.push(fieldErr.required(field, 'must specify a volume type'));
  return errs;
}

/**
 * kube's `ValidateVolumes`: the valid volumes by name (for mounts and devices) and the errors.
 * `podName` is the pod's name, '' for templates (the ephemeral PVC name checks are then skipped).
 */
export function validateVolumes(volumes: unknown, podName: string, field: string, opts: PodValidationOptions): { volumes: VolumeMap; errors: FieldError[] } {
  const errors: FieldError[] = [];
  const valid: VolumeMap = new Map();
  const all = objects(volumes);
  const createdPVCs = new Set<string>();
  if (podName !== '') for (const vol of all) if (isSet(vol['ephemeral'])) createdPVCs.add(`${podName}-${str(vol['name'])}`);
  all.forEach((vol, i) => {
    const p = `${field}[${i}]`;
    const name = str(vol['name']);
    const el = validateVolumeSource(vol, p, { volName: name, podName, opts });
    if (name.length === 0) el.push(fieldErr.required(`${p}.name`));
    else el.push(...validateDNS1123Label(name, `${p}.name`));
    if (valid.has(name)) el.push(fieldErr.duplicate(`${p}.name`, name));
    if (el.length === 0) valid.set(name, vol);
    else errors.push(...el);
    const claimName = str(asObject(vol['persistentVolumeClaim'])?.['claimName']);
    if (isSet(vol['persistentVolumeClaim']) && createdPVCs.has(claimName)) {
      errors.push(fieldErr.invalid(`${p}.persistentVolumeClaim.claimName`, claimName, 'must not reference a PVC that gets created for an ephemeral volume'));
    }
  });
  return { volumes: valid, errors };
}
