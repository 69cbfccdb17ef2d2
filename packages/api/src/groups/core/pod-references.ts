/**
 * The API objects a pod or a PersistentVolume names, as kube 1.24 walks them
 * (pkg/api/v1/pod VisitPodSecretNames / VisitPodConfigmapNames, pkg/api/v1/persistentvolume
 * VisitPVSecretNames): what the Node authorizer's graph links to a pod, and what NodeRestriction
 * refuses in a mirror pod. Empty names are skipped, as kube's skipEmptyNames.
 */
import type { StoredObject } from '../../types.js';

/** kube's MirrorPodAnnotationKey: set by a kubelet on the API copy of a static pod. */
export { MIRROR_POD_ANNOTATION as MIRROR_POD_ANNOTATION_KEY } from './validation/pod-annotations.js';

type Obj = Record<string, unknown>;

const obj = (v: unknown): Obj | undefined => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Obj) : undefined);
const arr = (v: unknown): Obj[] => (Array.isArray(v) ? v.map(obj).filter((x): x is Obj => !!x) : []);
const str = (v: unknown): string => (typeof v === 'string' ? v : '');

/** Containers, then init containers' order as kube's VisitContainers: init, regular, ephemeral. */
function allContainers(spec: Obj): Obj[] {
  return [...arr(spec.initContainers), ...arr(spec.containers), ...arr(spec.ephemeralContainers)];
}

/** The first volume source kube's switch would pick, by its key order (one source per volume in practice). */
function sourceOf(volume: Obj, keys: readonly string[]): [string, Obj] | undefined {
  for (const k of keys) {
    const s = obj(volume[k]);
    if (s) return [k, s];
  }
  return undefined;
}

const POD_SECRET_SOURCES = ['azureFile', 'cephfs', 'cinder', 'flexVolume', 'projected', 'rbd', 'secret', 'scaleIO', 'iscsi', 'storageos', 'csi'] as const;

/** Every secret name the pod spec references (imagePullSecrets, env, envFrom, volumes), in kube's order, duplicates included. */
export function podSecretNames(pod: StoredObject): string[] {
  const spec = obj(pod.spec) ?? {};
  const out: string[] = [];
  const add = (n: string): void => {
    if (n) out.push(n);
  };
  for (const r of arr(spec.imagePullSecrets)) add(str(r.name));
  for (const c of allContainers(spec)) {
    for (const e of arr(c.envFrom)) {
      const ref = obj(e.secretRef);
      if (ref) add(str(ref.name));
    }
    for (const e of arr(c.env)) {
      const ref = obj(obj(e.valueFrom)?.secretKeyRef);
      if (ref) add(str(ref.name));
    }
  }
  for (const v of arr(spec.volumes)) {
    const src = sourceOf(v, POD_SECRET_SOURCES);
    if (!src) continue;
    const [kind, s] = src;
    switch (kind) {
      case 'azureFile':
        add(str(s.secretName));
        break;
      case 'secret':
        add(str(s.secretName));
        break;
      case 'projected':
        for (const p of arr(s.sources)) {
          const sec = obj(p.secret);
          if (sec) add(str(sec.name));
        }
        break;
      case 'csi':
        add(str(obj(s.nodePublishSecretRef)?.name));
        break;
      default:
        add(str(obj(s.secretRef)?.name));
    }
  }
  return out;
}

/** Every ConfigMap name the pod spec references (env, envFrom, configMap and projected volumes). */
export function podConfigMapNames(pod: StoredObject): string[] {
  const spec = obj(pod.spec) ?? {};
  const out: string[] = [];
  const add = (n: string): void => {
    if (n) out.push(n);
  };
  for (const c of allContainers(spec)) {
    for (const e of arr(c.envFrom)) {
      const ref = obj(e.configMapRef);
      if (ref) add(str(ref.name));
    }
    for (const e of arr(c.env)) {
      const ref = obj(obj(e.valueFrom)?.configMapKeyRef);
      if (ref) add(str(ref.name));
    }
  }
  for (const v of arr(spec.volumes)) {
    const src = sourceOf(v, ['projected', 'configMap']);
    if (!src) continue;
    const [kind, s] = src;
    if (kind === 'configMap') add(str(s.name));
    else for (const p of arr(s.sources)) {
      const cm = obj(p.configMap);
      if (cm) add(str(cm.name));
    }
  }
  return out;
}

/**
 * The PVC names the pod uses: `persistentVolumeClaim.claimName`, and for a generic ephemeral
 * volume the claim kube creates for it, `<pod>-<volume>` (GenericEphemeralVolume is GA in 1.24).
 */
export function podClaimNames(pod: StoredObject): string[] {
  const spec = obj(pod.spec) ?? {};
  const out: string[] = [];
  for (const v of arr(spec.volumes)) {
    const pvc = obj(v.persistentVolumeClaim);
    if (pvc) {
      const n = str(pvc.claimName);
      if (n) out.push(n);
    } else if (obj(v.ephemeral)) out.push(`${pod.metadata.name ?? ''}-${str(v.name)}`);
  }
  return out;
}

/** A secret a PersistentVolume names; `kubeletVisible`: the kubelet itself reads it (not the controller-side CSI secrets). */
export interface PVSecretRef {
  namespace: string;
  name: string;
  kubeletVisible: boolean;
}

const PV_SECRET_SOURCES = ['azureFile', 'cephfs', 'cinder', 'flexVolume', 'rbd', 'scaleIO', 'iscsi', 'storageos', 'csi'] as const;

/** kube's VisitPVSecretNames: sources whose secret has no namespace of its own use the claim's (older objects). */
export function pvSecretRefs(pv: StoredObject): PVSecretRef[] {
  const spec = obj(pv.spec) ?? {};
  const claimNs = str(obj(spec.claimRef)?.namespace);
  const out: PVSecretRef[] = [];
  const add = (namespace: string, name: string, kubeletVisible = true): void => {
    if (name) out.push({ namespace, name, kubeletVisible });
  };
  const src = sourceOf(spec, PV_SECRET_SOURCES);
  if (!src) return out;
  const [kind, s] = src;
  const ref = obj(s.secretRef);
  switch (kind) {
    case 'azureFile':
      add(str(s.secretNamespace) || claimNs, str(s.secretName));
      break;
    case 'cinder':
    case 'storageos':
      if (ref) add(str(ref.namespace), str(ref.name));
      break;
    case 'csi':
      for (const [field, visible] of [['controllerPublishSecretRef', false], ['controllerExpandSecretRef', false], ['nodePublishSecretRef', true], ['nodeStageSecretRef', true]] as const) {
        const r = obj(s[field]);
        if (r) add(str(r.namespace), str(r.name), visible);
      }
      break;
    default:
      if (ref) add(str(ref.namespace) || claimNs, str(ref.name));
  }
  return out;
}
