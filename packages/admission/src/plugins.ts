/**
 * The admission plugins by kube's names, in kube-apiserver 1.24's recommended order
 * (pkg/kubeapiserver/options/plugins.go AllOrderedPlugins), with kube's default-on set
 * (DefaultOffAdmissionPlugins) and `--enable-admission-plugins` / `--disable-admission-plugins`
 * resolved as kube's AdmissionOptions does (k8s.io/apiserver/pkg/server/options/admission.go).
 *
 * Every kube name is known, so a typo fails with kube's "is unknown" message. A name plinth does
 * not implement (they admit Pods, Nodes, PersistentVolumes, ... which plinth does not serve) is
 * off, and enabling it fails start-up: accepting it would promise a check that never runs.
 */
import type { StoredObject } from '@plinth/api';
import type { AdmissionChain, AdmissionPlugin } from './interfaces.js';
import { createAdmissionChain } from './interfaces.js';
import { alwaysAdmit, alwaysDeny } from './always.js';
import { createNamespaceLifecycle, type NamespaceLookup } from './namespace-lifecycle.js';
import { createNamespaceExists } from './namespace-exists.js';
import { createCertificateApproval, createCertificateSigning, createCertificateSubjectRestriction, type SignerAuthorizer } from './certificates.js';
import { createDefaultStorageClass, createPersistentVolumeClaimResize, createStorageObjectInUseProtection, type StorageClassLister } from './storage.js';
import { createPriority } from './priority.js';
import { createRuntimeClass } from './runtimeclass.js';
import { createDefaultIngressClass } from './default-ingress-class.js';
import { createNodeRestriction } from './node-restriction.js';
import { createLimitRanger } from './limitranger.js';
import { createEventRateLimit } from './eventratelimit.js';
import { createAlwaysPullImages } from './always-pull-images.js';
import { createSecurityContextDeny } from './security-context-deny.js';
import { createLimitPodHardAntiAffinityTopology } from './anti-affinity.js';
import { createDenyServiceExternalIPs } from './deny-service-external-ips.js';
import { createExtendedResourceToleration } from './extended-resource-toleration.js';
import { createPodNodeSelector } from './pod-node-selector.js';
import { createNamespaceAutoProvision, type NamespaceCreator } from './namespace-autoprovision.js';
import { createPodTolerationRestriction } from './pod-toleration-restriction.js';
import { createPodSecurity, loadPodSecurityConfig, type PodSecurityMetrics } from './podsecurity/index.js';
import { createResourceQuota, type QuotaAccess } from './resourcequota/admission.js';
import { parseQuotaConfiguration } from './resourcequota/config.js';
import { createServiceAccount } from './serviceaccount.js';
import { createDefaultTolerationSeconds } from './default-toleration-seconds.js';
import { createTaintNodesByCondition } from './node-taint.js';
import { createOwnerReferencesPermissionEnforcement, type OwnerReferencesDeps } from './owner-references.js';

/** What plugins are built from; the apiserver config fills it. */
export interface PluginDeps {
  /** A namespace by name (the watch cache, then a quorum read), or undefined. */
  getNamespace: NamespaceLookup;
  /**
   * kube's generic webhook plugins, built by the apiserver config. Unset: no webhook dispatcher is
   * built, and the plugin (still enabled) runs nothing — as kube's does with no configurations.
   */
  mutatingWebhook?: () => AdmissionPlugin;
  validatingWebhook?: () => AdmissionPlugin;
  /** The StorageClasses (DefaultStorageClass, PersistentVolumeClaimResize); unset: those plugins run nothing. */
  listStorageClasses?: StorageClassLister;
  /** The authorizer's answer about `signers` (CertificateApproval, CertificateSigning); unset: those plugins run nothing. */
  authorizeSigner?: SignerAuthorizer;
  /**
   * The objects of a cluster-scoped built-in resource as the watch cache has them (kube's
   * informer listers: PriorityClasses, RuntimeClasses, IngressClasses). Unset: the plugins that
   * read them are not built.
   */
  listObjects?: (group: string, version: string, plural: string, opts?: { fresh?: boolean; namespace?: string }) => Promise<StoredObject[]>;
  /** The ResourceQuotas and their status writes (ResourceQuota); unset: that plugin runs nothing. */
  quotas?: QuotaAccess;
  /**
   * One object of a built-in resource as kube's informer listers read it: the watch cache with a
   * miss confirmed by a quorum read, or as etcd has it now (`fresh`); undefined when absent
   * (namespace '' for cluster-scoped). Unset: the plugins that read one object (ServiceAccount,
   * NodeRestriction) are not built.
   */
  getObject?: (group: string, version: string, plural: string, namespace: string, name: string, opts?: { fresh?: boolean }) => Promise<StoredObject | undefined>;
  /** `--default-not-ready-toleration-seconds` / `--default-unreachable-toleration-seconds` (kube's 300 each when unset). */
  defaultTolerationSeconds?: { notReady: number; unreachable: number };
  /** The plugin's configuration from `--admission-control-config-file` (kube's AdmissionConfiguration), if any. */
  pluginConfig?: (name: string) => Record<string, unknown> | undefined;
  /** Creates a namespace as kube's loopback client (NamespaceAutoProvision); unset: that plugin is not built. */
  createNamespace?: NamespaceCreator;
  /** Whether a feature gate is on (`--feature-gates`); unset: every gate at its default. */
  featureGate?: (name: string) => boolean;
  /** The PodSecurity plugin's counters (PSA's metrics); unset: not counted. */
  podSecurityMetrics?: PodSecurityMetrics;
  /**
   * The authorizer and the served resources (kube's REST mapper) for
   * OwnerReferencesPermissionEnforcement; unset: that plugin is not built.
   */
  ownerReferences?: OwnerReferencesDeps;
}

/** Builds a plugin; undefined when there is nothing to run. */
type Factory = (deps: PluginDeps) => AdmissionPlugin | undefined;

interface Registration {
  name: string;
  /** In kube's default-on set. */
  on: boolean;
  /** Undefined: a kube plugin plinth does not implement. */
  build?: Factory;
}

const on = true;
const off = false;

/** One line per plugin, in kube 1.24's AllOrderedPlugins order. */
const REGISTRY: readonly Registration[] = [
  { name: 'AlwaysAdmit', on: off, build: () => alwaysAdmit },
  { name: 'NamespaceAutoProvision', on: off, build: (d) => d.createNamespace && createNamespaceAutoProvision({ getNamespace: d.getNamespace, createNamespace: d.createNamespace }) },
  { name: 'NamespaceLifecycle', on, build: (d) => createNamespaceLifecycle(d.getNamespace) },
  { name: 'NamespaceExists', on: off, build: (d) => createNamespaceExists(d.getNamespace) },
  { name: 'SecurityContextDeny', on: off, build: () => createSecurityContextDeny() },
  { name: 'LimitPodHardAntiAffinityTopology', on: off, build: () => createLimitPodHardAntiAffinityTopology() },
  { name: 'LimitRanger', on, build: (d) => d.listObjects && createLimitRanger({ list: (namespace, fresh) => d.listObjects!('', 'v1', 'limitranges', { namespace, fresh }) }) },
  {
    name: 'ServiceAccount',
    on,
    build: (d) => d.getObject && createServiceAccount({ getServiceAccount: (ns, name, fresh) => d.getObject!('', 'v1', 'serviceaccounts', ns, name, { fresh }) }),
  },
  {
    name: 'NodeRestriction',
    on: off,
    build: (d) => d.getObject && createNodeRestriction({ getPod: (ns, n) => d.getObject!('', 'v1', 'pods', ns, n), getNode: (n) => d.getObject!('', 'v1', 'nodes', '', n) }),
  },
  { name: 'TaintNodesByCondition', on, build: () => createTaintNodesByCondition() },
  { name: 'AlwaysPullImages', on: off, build: () => createAlwaysPullImages() },
  { name: 'ImagePolicyWebhook', on: off },
  {
    name: 'PodSecurity',
    on,
    build: (d) =>
      createPodSecurity({
        config: loadPodSecurityConfig(d.pluginConfig?.('PodSecurity')),
        getNamespace: d.getNamespace,
        listPods: async (namespace) => (d.listObjects ? d.listObjects('', 'v1', 'pods', { namespace }) : []),
        enabled: d.featureGate?.('PodSecurity') ?? true,
        ...(d.podSecurityMetrics ? { metrics: d.podSecurityMetrics } : {}),
      }),
  },
  { name: 'PodSecurityPolicy', on: off },
  { name: 'PodNodeSelector', on: off, build: (d) => createPodNodeSelector({ getNamespace: d.getNamespace, config: d.pluginConfig?.('PodNodeSelector') }) },
  { name: 'Priority', on, build: (d) => d.listObjects && createPriority((fresh) => d.listObjects!('scheduling.k8s.io', 'v1', 'priorityclasses', { fresh })) },
  {
    name: 'DefaultTolerationSeconds',
    on,
    build: (d) => createDefaultTolerationSeconds({ notReadySeconds: d.defaultTolerationSeconds?.notReady ?? 300, unreachableSeconds: d.defaultTolerationSeconds?.unreachable ?? 300 }),
  },
  { name: 'PodTolerationRestriction', on: off, build: (d) => createPodTolerationRestriction({ getNamespace: d.getNamespace, config: d.pluginConfig?.('PodTolerationRestriction') }) },
  { name: 'EventRateLimit', on: off, build: (d) => createEventRateLimit({ config: d.pluginConfig?.('EventRateLimit') }) },
  { name: 'ExtendedResourceToleration', on: off, build: () => createExtendedResourceToleration() },
  { name: 'PersistentVolumeLabel', on: off },
  { name: 'DefaultStorageClass', on, build: (d) => (d.listStorageClasses ? createDefaultStorageClass(d.listStorageClasses) : undefined) },
  { name: 'StorageObjectInUseProtection', on, build: () => createStorageObjectInUseProtection() },
  { name: 'OwnerReferencesPermissionEnforcement', on: off, build: (d) => d.ownerReferences && createOwnerReferencesPermissionEnforcement(d.ownerReferences) },
  { name: 'PersistentVolumeClaimResize', on, build: (d) => (d.listStorageClasses ? createPersistentVolumeClaimResize(d.listStorageClasses) : undefined) },
  { name: 'RuntimeClass', on, build: (d) => d.listObjects && createRuntimeClass((fresh) => d.listObjects!('node.k8s.io', 'v1', 'runtimeclasses', { fresh })) },
  { name: 'CertificateApproval', on, build: (d) => (d.authorizeSigner ? createCertificateApproval(d.authorizeSigner) : undefined) },
  { name: 'CertificateSigning', on, build: (d) => (d.authorizeSigner ? createCertificateSigning(d.authorizeSigner) : undefined) },
  { name: 'CertificateSubjectRestriction', on, build: () => createCertificateSubjectRestriction() },
  { name: 'DefaultIngressClass', on, build: (d) => d.listObjects && createDefaultIngressClass((fresh) => d.listObjects!('networking.k8s.io', 'v1', 'ingressclasses', { fresh })) },
  { name: 'DenyServiceExternalIPs', on: off, build: () => createDenyServiceExternalIPs() },
  // webhook, resourcequota and deny plugins go at the end (kube's comment).
  { name: 'MutatingAdmissionWebhook', on, build: (d) => d.mutatingWebhook?.() },
  { name: 'ValidatingAdmissionWebhook', on, build: (d) => d.validatingWebhook?.() },
  { name: 'ResourceQuota', on, build: (d) => d.quotas && createResourceQuota(d.quotas, { limitedResources: parseQuotaConfiguration(d.pluginConfig?.('ResourceQuota')) }) },
  { name: 'AlwaysDeny', on: off, build: () => alwaysDeny },
];

const BY_NAME = new Map(REGISTRY.map((r) => [r.name, r]));

/** kube's recommended order of every plugin name. */
export const ALL_ORDERED_PLUGINS: readonly string[] = REGISTRY.map((r) => r.name);

/** Plugins on when no flag says otherwise: kube's default-on set, less what plinth does not implement. */
export const DEFAULT_ON_PLUGINS: readonly string[] = REGISTRY.filter((r) => r.on && r.build).map((r) => r.name);

export interface PluginSelection {
  enable: readonly string[];
  disable: readonly string[];
}

/** Every problem with the flags (kube's AdmissionOptions.Validate, then plinth's own check). */
export function validateAdmissionPlugins(sel: PluginSelection): string[] {
  const errs: string[] = [];
  for (const n of sel.enable) if (!BY_NAME.has(n)) errs.push(`enable-admission-plugins plugin "${n}" is unknown`);
  for (const n of sel.disable) if (!BY_NAME.has(n)) errs.push(`disable-admission-plugins plugin "${n}" is unknown`);
  const both = [...new Set(sel.enable.filter((n) => sel.disable.includes(n)))].sort();
  if (both.length > 0) errs.push(`[${both.join(' ')}] in enable-admission-plugins and disable-admission-plugins overlapped`);
  for (const n of sel.enable) {
    if (BY_NAME.has(n) && !BY_NAME.get(n)!.build) {
      errs.push(`enable-admission-plugins plugin "${n}" is not implemented by plinth (it admits resources plinth does not serve)`);
    }
  }
  return errs;
}

/** kube's enabledPluginNames: default-on plus enabled, less disabled, in the recommended order. */
export function enabledAdmissionPlugins(sel: PluginSelection): string[] {
  const wanted = (r: Registration): boolean => sel.enable.includes(r.name) || (r.on && !sel.disable.includes(r.name));
  return REGISTRY.filter((r) => r.build && wanted(r)).map((r) => r.name);
}

/** The chain of the named plugins (validated names, as `enabledAdmissionPlugins` returns them). */
export function createAdmission(names: readonly string[], deps: PluginDeps): AdmissionChain {
  for (const name of names) {
    if (!BY_NAME.get(name)?.build) throw new Error(`admission plugin "${name}" is unknown or not implemented by plinth`);
  }
  const plugins: AdmissionPlugin[] = [];
  for (const r of REGISTRY) {
    const p = names.includes(r.name) ? r.build!(deps) : undefined;
    if (p) plugins.push(p);
  }
  return createAdmissionChain(plugins);
}
