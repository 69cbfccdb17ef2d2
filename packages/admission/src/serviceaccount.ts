/**
 * kube's ServiceAccount plugin (plugin/pkg/admission/serviceaccount, 1.24.17: with the
 * ephemeral-container check of the CVE-2023-2728 fix). On pod create: `spec.serviceAccountName` defaults to
 * `default`; the account must exist; unless the pod (first) or the account says
 * `automountServiceAccountToken: false`, the projected `kube-api-access-<5 chars>` volume (bound
 * token, the `kube-root-ca.crt` ConfigMap, the namespace) is added and mounted read-only at
 * /var/run/secrets/kubernetes.io/serviceaccount in every init and regular container that does not
 * mount that path already; the account's imagePullSecrets are copied to a pod that has none.
 * A mirror pod is left as the kubelet wrote it, but may not name an account, a Secret or a token
 * projection. With the account's `kubernetes.io/enforce-mountable-secrets: "true"`, a pod may only
 * use the Secrets the account lists (also for ephemeral containers added later).
 */
import { randomInt } from 'node:crypto';
import { isPlainObject, StatusError, type StoredObject } from '@plinth/api';
import type { AdmissionAttributes, AdmissionPlugin } from './interfaces.js';
import { admissionForbidden, isMainResource } from './forbidden.js';
import { podSecretNames } from './pod-secret-names.js';

export const DEFAULT_SERVICE_ACCOUNT_NAME = 'default';
export const ENFORCE_MOUNTABLE_SECRETS_ANNOTATION = 'kubernetes.io/enforce-mountable-secrets';
export const SERVICE_ACCOUNT_VOLUME_PREFIX = 'kube-api-access-';
export const SERVICE_ACCOUNT_MOUNT_PATH = '/var/run/secrets/kubernetes.io/serviceaccount';
export const MIRROR_POD_ANNOTATION = 'kubernetes.io/config.mirror';
/** kube's WarnOnlyBoundTokenExpirationSeconds: 1 h + 7 s, so the kubelet's refresh is observable. */
export const BOUND_TOKEN_EXPIRATION_SECONDS = 3607;

/** A ServiceAccount as the informer has it, or as etcd has it now (`fresh`); undefined when absent. */
export type ServiceAccountGetter = (namespace: string, name: string, fresh: boolean) => Promise<StoredObject | undefined>;

export interface ServiceAccountPluginOptions {
  getServiceAccount: ServiceAccountGetter;
  /** The volume's name (kube's SimpleNameGenerator); replaceable for tests. */
  generateName?: (prefix: string) => string;
  /** Waits between live lookups of a missing `default` account. */
  sleep?: (ms: number) => Promise<void>;
}

type Obj = Record<string, unknown>;
const objects = (v: unknown): Obj[] => (Array.isArray(v) ? v.filter(isPlainObject) : []);
const NAME_CHARS = 'bcdfghjklmnpqrstvwxz2456789';

function simpleName(prefix: string): string {
  let suffix = '';
  for (let i = 0; i < 5; i++) suffix += NAME_CHARS[randomInt(NAME_CHARS.length)];
  return prefix + suffix;
}

/** The projected volume source kube's TokenVolumeSource builds, in its v1 form (defaultMode 0644). */
export function tokenVolumeSource(): Obj {
  return {
    defaultMode: 420,
    sources: [
      { serviceAccountToken: { expirationSeconds: BOUND_TOKEN_EXPIRATION_SECONDS, path: 'token' } },
      { configMap: { name: 'kube-root-ca.crt', items: [{ key: 'ca.crt', path: 'ca.crt' }] } },
      { downwardAPI: { items: [{ path: 'namespace', fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.namespace' } }] } },
    ],
  };
}

/** kube's shouldAutomount: the pod's setting, else the account's, else true. */
function shouldAutomount(sa: StoredObject, spec: Obj): boolean {
  if (typeof spec['automountServiceAccountToken'] === 'boolean') return spec['automountServiceAccountToken'];
  if (typeof sa['automountServiceAccountToken'] === 'boolean') return sa['automountServiceAccountToken'];
  return true;
}

/** kube's enforceMountableSecrets: the annotation parsed as Go's strconv.ParseBool. */
function enforcesMountableSecrets(sa: StoredObject): boolean {
  const v = sa.metadata.annotations?.[ENFORCE_MOUNTABLE_SECRETS_ANNOTATION];
  return v === '1' || v === 't' || v === 'T' || v === 'true' || v === 'TRUE' || v === 'True';
}

const namesOf = (refs: unknown): Set<string> => new Set(objects(refs).map((r) => String(r['name'] ?? '')));

/** The first env var of `containers` naming a Secret outside `allowed`, with its container. */
function disallowedEnvSecret(containers: unknown, allowed: Set<string>): { container: Obj; env: Obj; secret: string } | undefined {
  for (const container of objects(containers)) {
    for (const env of objects(container['env'])) {
      const ref = isPlainObject(env['valueFrom']) ? env['valueFrom']['secretKeyRef'] : undefined;
      if (!isPlainObject(ref)) continue;
      const secret = typeof ref['name'] === 'string' ? ref['name'] : '';
      if (!allowed.has(secret)) return { container, env, secret };
    }
  }
  return undefined;
}

/** kube's limitSecretReferences: the first reference the account does not allow, as kube words it. */
function secretReferenceProblem(sa: StoredObject, spec: Obj): string | undefined {
  const saName = sa.metadata.name;
  const mountable = namesOf(sa['secrets']);
  for (const v of objects(spec['volumes'])) {
    if (!isPlainObject(v['secret'])) continue;
    const name = typeof v['secret']['secretName'] === 'string' ? v['secret']['secretName'] : '';
    if (!mountable.has(name)) return `volume with secret.secretName="${name}" is not allowed because service account ${saName} does not reference that secret`;
  }
  for (const [key, what] of [['initContainers', 'init container'], ['containers', 'container']] as const) {
    const bad = disallowedEnvSecret(spec[key], mountable);
    if (bad) return `${what} ${String(bad.container['name'])} with envVar ${String(bad.env['name'])} referencing secret.secretName="${bad.secret}" is not allowed because service account ${saName} does not reference that secret`;
  }
  const pullable = namesOf(sa['imagePullSecrets']);
  const pulls = objects(spec['imagePullSecrets']);
  for (let i = 0; i < pulls.length; i++) {
    const name = String(pulls[i]!['name'] ?? '');
    if (!pullable.has(name)) return `imagePullSecrets[${i}].name="${name}" is not allowed because service account ${saName} does not reference that imagePullSecret`;
  }
  return undefined;
}

/** With the account's enforce annotation, the first disallowed Secret reference refuses the pod. */
function checkSecretReferences(attrs: AdmissionAttributes, sa: StoredObject, spec: Obj): void {
  if (!enforcesMountableSecrets(sa)) return;
  const problem = secretReferenceProblem(sa, spec);
  if (problem) throw admissionForbidden(attrs, problem);
}

/** kube's refusal of a pod with no account at validation (a mutating webhook may have cleared it). */
function noServiceAccount(attrs: AdmissionAttributes, pod: StoredObject): StatusError {
  return admissionForbidden(attrs, `no service account specified for pod ${attrs.namespace}/${pod.metadata.name ?? ''}`);
}

/** kube's mountServiceAccountToken: the mount in every init and regular container, the volume once. */
function mountToken(spec: Obj, generate: (prefix: string) => string): void {
  const volumes = objects(spec['volumes']);
  const existing = volumes.find((v) => typeof v['name'] === 'string' && v['name'].startsWith(SERVICE_ACCOUNT_VOLUME_PREFIX));
  const volumeName = existing ? (existing['name'] as string) : generate(SERVICE_ACCOUNT_VOLUME_PREFIX);
  let needed = false;
  for (const key of ['initContainers', 'containers']) {
    for (const c of objects(spec[key])) {
      const mounts = Array.isArray(c['volumeMounts']) ? (c['volumeMounts'] as unknown[]) : (c['volumeMounts'] = []);
      if (objects(mounts).some((m) => m['mountPath'] === SERVICE_ACCOUNT_MOUNT_PATH)) continue;
      mounts.push({ name: volumeName, readOnly: true, mountPath: SERVICE_ACCOUNT_MOUNT_PATH });
      needed = true;
    }
  }
  if (!existing && needed) {
    if (!Array.isArray(spec['volumes'])) spec['volumes'] = [];
    (spec['volumes'] as unknown[]).push({ name: volumeName, projected: tokenVolumeSource() });
  }
}

export function createServiceAccount(opts: ServiceAccountPluginOptions): AdmissionPlugin {
  const generate = opts.generateName ?? simpleName;
  const sleep = opts.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms).unref()));

  /**
   * kube's getServiceAccount: the informer, then live reads — ten of them, 100–200 ms apart, for
   * `default`, which the namespace's controller creates a moment after the namespace.
   */
  const lookup = async (attrs: AdmissionAttributes, name: string): Promise<StoredObject> => {
    const ns = attrs.namespace;
    let sa: StoredObject | undefined;
    try {
      sa = await opts.getServiceAccount(ns, name, false);
      const attempts = name === DEFAULT_SERVICE_ACCOUNT_NAME ? 10 : 1;
      const interval = 100 + randomInt(100);
      for (let i = 0; !sa && i < attempts; i++) {
        if (i > 0) await sleep(interval);
        sa = await opts.getServiceAccount(ns, name, true);
      }
    } catch (e) {
      throw admissionForbidden(attrs, `error looking up service account ${ns}/${name}: ${e instanceof Error ? e.message : String(e)}`);
    }
    if (!sa) throw admissionForbidden(attrs, `error looking up service account ${ns}/${name}: serviceaccount "${name}" not found`);
    return sa;
  };

  /** kube's Validate for a mirror pod: no account, no Secret, no token projection. */
  const validateMirrorPod = (attrs: AdmissionAttributes, pod: StoredObject, spec: Obj): void => {
    if (typeof spec['serviceAccountName'] === 'string' && spec['serviceAccountName'] !== '') throw admissionForbidden(attrs, 'a mirror pod may not reference service accounts');
    if (!podSecretNames(pod).next().done) throw admissionForbidden(attrs, 'a mirror pod may not reference secrets');
    for (const v of objects(spec['volumes'])) {
      const projected = v['projected'];
      if (isPlainObject(projected) && objects(projected['sources']).some((s) => s['serviceAccountToken'] != null)) {
        throw admissionForbidden(attrs, 'a mirror pod may not use ServiceAccountToken volume projections');
      }
    }
  };

  /** kube's limitEphemeralContainerSecretReferences (pods/ephemeralcontainers updates). */
  const validateEphemeralContainers = async (attrs: AdmissionAttributes, pod: StoredObject, spec: Obj): Promise<void> => {
    const name = typeof spec['serviceAccountName'] === 'string' ? spec['serviceAccountName'] : '';
    if (!name) throw noServiceAccount(attrs, pod);
    const sa = await lookup(attrs, name);
    if (!enforcesMountableSecrets(sa)) return;
    const bad = disallowedEnvSecret(spec['ephemeralContainers'], namesOf(sa['secrets']));
    if (bad) {
      // kube returns this one unwrapped (not NewForbidden): the client gets a 500 without a reason.
      throw new StatusError({
        code: 500,
        reason: '',
        message: `ephemeral container ${String(bad.container['name'])} with envVar ${String(bad.env['name'])} referencing secret.secretName="${bad.secret}" is not allowed because service account ${sa.metadata.name} does not reference that secret`,
      });
    }
  };

  const specOf = (pod: StoredObject): Obj => {
    if (!isPlainObject(pod['spec'])) pod['spec'] = {};
    return pod['spec'] as Obj;
  };
  const isMirrorPod = (pod: StoredObject): boolean => pod.metadata.annotations?.[MIRROR_POD_ANNOTATION] !== undefined;
  /** kube's shouldIgnore: pods only, the main resource or (since the CVE fix) ephemeralcontainers. */
  const isPodWrite = (attrs: AdmissionAttributes): boolean =>
    attrs.resource.group === '' && attrs.resource.plural === 'pods' && (attrs.subresource === '' || attrs.subresource === 'ephemeralcontainers') && !!attrs.object;

  return {
    name: 'ServiceAccount',
    handles: (op) => op === 'CREATE' || op === 'UPDATE',
    async admit(attrs) {
      if (attrs.operation !== 'CREATE' || !isMainResource(attrs, '', 'pods') || !attrs.object) return;
      const pod = attrs.object;
      const spec = specOf(pod);
      // A mirror pod's spec must stay as the kubelet wrote it; kube's Admit only validates it.
      if (isMirrorPod(pod)) return validateMirrorPod(attrs, pod, spec);
      if (typeof spec['serviceAccountName'] !== 'string' || spec['serviceAccountName'] === '') {
        // The deprecated alias follows, as kube's conversion back to v1 writes it.
        spec['serviceAccountName'] = spec['serviceAccount'] = DEFAULT_SERVICE_ACCOUNT_NAME;
      }
      const sa = await lookup(attrs, spec['serviceAccountName'] as string);
      if (shouldAutomount(sa, spec)) mountToken(spec, generate);
      const own = spec['imagePullSecrets'];
      if (!Array.isArray(own) || own.length === 0) {
        const pulls = objects(sa['imagePullSecrets']).map((r) => ({ name: r['name'] ?? '' }));
        if (pulls.length > 0) spec['imagePullSecrets'] = pulls;
      }
      // kube's Admit ends with its Validate: a disallowed Secret is refused before pod validation.
      checkSecretReferences(attrs, sa, spec);
    },
    async validate(attrs) {
      if (!isPodWrite(attrs)) return;
      const pod = attrs.object!;
      const spec: Obj = isPlainObject(pod['spec']) ? pod['spec'] : {};
      if (attrs.operation === 'UPDATE') {
        if (attrs.subresource === 'ephemeralcontainers') await validateEphemeralContainers(attrs, pod, spec);
        return;
      }
      if (attrs.subresource !== '') return;
      if (isMirrorPod(pod)) {
        validateMirrorPod(attrs, pod, spec);
        return;
      }
      const name = typeof spec['serviceAccountName'] === 'string' ? spec['serviceAccountName'] : '';
      if (!name) throw noServiceAccount(attrs, pod);
      checkSecretReferences(attrs, await lookup(attrs, name), spec);
    },
  };
}
