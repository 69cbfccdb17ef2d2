/**
 * The Secrets a pod names (kube's podutil.VisitPodSecretNames, pkg/api/v1/pod/util.go, 1.24):
 * image pull secrets, every container's (init, regular, ephemeral) envFrom/env secret references,
 * then the volume sources that carry a secret reference. Empty names are skipped.
 */
import { isPlainObject, type StoredObject } from '@plinth/api';

type Obj = Record<string, unknown>;
const objects = (v: unknown): Obj[] => (Array.isArray(v) ? v.filter(isPlainObject) : []);
const nameAt = (o: unknown, key: string): unknown => (isPlainObject(o) ? o[key] : undefined);

/**
 * kube's switch over a volume's source, in its order: the first source present decides (a valid
 * volume has one). `secretRef`-style sources name the Secret in `secretRef.name`.
 */
const VOLUME_SECRET: readonly [string, (src: Obj) => unknown[]][] = [
  ['azureFile', (s) => [s['secretName']]],
  ['cephfs', (s) => [nameAt(s['secretRef'], 'name')]],
  ['cinder', (s) => [nameAt(s['secretRef'], 'name')]],
  ['flexVolume', (s) => [nameAt(s['secretRef'], 'name')]],
  ['projected', (s) => objects(s['sources']).map((p) => nameAt(p['secret'], 'name'))],
  ['rbd', (s) => [nameAt(s['secretRef'], 'name')]],
  ['secret', (s) => [s['secretName']]],
  ['scaleIO', (s) => [nameAt(s['secretRef'], 'name')]],
  ['iscsi', (s) => [nameAt(s['secretRef'], 'name')]],
  ['storageos', (s) => [nameAt(s['secretRef'], 'name')]],
  ['csi', (s) => [nameAt(s['nodePublishSecretRef'], 'name')]],
];

function containerSecretNames(c: Obj): unknown[] {
  const out: unknown[] = [];
  for (const from of objects(c['envFrom'])) if (isPlainObject(from['secretRef'])) out.push(from['secretRef']['name']);
  for (const env of objects(c['env'])) out.push(nameAt(nameAt(env['valueFrom'], 'secretKeyRef'), 'name'));
  return out;
}

function volumeSecretNames(v: Obj): unknown[] {
  for (const [key, names] of VOLUME_SECRET) if (isPlainObject(v[key])) return names(v[key]);
  return [];
}

/** Every non-empty Secret name `pod` refers to, in kube's visiting order (repeats included). */
export function* podSecretNames(pod: StoredObject): Generator<string> {
  const spec = isPlainObject(pod['spec']) ? pod['spec'] : {};
  const all: unknown[][] = [objects(spec['imagePullSecrets']).map((r) => r['name'])];
  for (const key of ['initContainers', 'containers', 'ephemeralContainers']) for (const c of objects(spec[key])) all.push(containerSecretNames(c));
  for (const v of objects(spec['volumes'])) all.push(volumeSecretNames(v));
  for (const names of all) for (const n of names) if (typeof n === 'string' && n !== '') yield n;
}
