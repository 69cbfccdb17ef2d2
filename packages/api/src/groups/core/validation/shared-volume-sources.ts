/**
 * Volume sources a pod shares with PersistentVolumes. VOLUME-SOURCES-PENDING: they come from
 * `volume-sources.ts` (another helper's work on issue 24); until it lands they accept everything.
 */
import type { FieldError } from '../../../field-errors.js';
import type { JsonObject } from './access.js';

/** A volume source validator: the source object and its path. */
export type SourceValidator = (source: JsonObject, field: string) => FieldError[];

const pending: SourceValidator = () => [];

export const sharedVolumeSourceValidators: Record<string, SourceValidator> = {
  hostPath: pending,
  gcePersistentDisk: pending,
  awsElasticBlockStore: pending,
  nfs: pending,
  iscsi: pending,
  glusterfs: pending,
  flocker: pending,
  rbd: pending,
  cinder: pending,
  cephfs: pending,
  quobyte: pending,
  fc: pending,
  flexVolume: pending,
  azureFile: pending,
  vsphereVolume: pending,
  photonPersistentDisk: pending,
  portworxVolume: pending,
  azureDisk: pending,
  storageos: pending,
  scaleIO: pending,
};
