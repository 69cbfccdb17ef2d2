/**
 * kube's `PodValidationOptions` and how the 1.24 pod strategies compute them from the new and old
 * objects (`pkg/api/pod` GetValidationOptionsFromPodSpecAndMeta): with 1.24's default feature gates
 * (DownwardAPIHugePages, PodDeletionCost, WindowsHostProcessContainers, IdentifyPodOS on;
 * ExpandedDNSConfig off), most options are fixed; the rest keep what an old object already uses.
 */
import { type JsonObject, asObject, stringMap, strings } from './access.js';
import { deletionCostError } from './pod-annotations.js';
import { usesIndivisibleHugePagesValues } from './quantities.js';
import { capabilities } from '../../../capabilities.js';

export interface PodValidationOptions {
  /** Downward API may expose hugepages (gate DownwardAPIHugePages, on in 1.24). */
  allowDownwardAPIHugePages: boolean;
  /** An invalid `controller.kubernetes.io/pod-deletion-cost` is tolerated (an old object had one). */
  allowInvalidPodDeletionCost: boolean;
  /** Hugepages that are not a multiple of their page size (an old object had them). */
  allowIndivisibleHugePagesValues: boolean;
  /** `windowsOptions.hostProcess` may be set (gate WindowsHostProcessContainers, on in 1.24). */
  allowWindowsHostProcessField: boolean;
  /** 32 search paths / 2048 characters instead of 6 / 256 (gate ExpandedDNSConfig, off in 1.24). */
  allowExpandedDNSConfig: boolean;
  /** `spec.os` may be set (gate IdentifyPodOS, on in 1.24). */
  allowOSField: boolean;
  /** Sysctl names may use `/` as separator (always in 1.24). */
  allowSysctlRegexContainSlash: boolean;
  /** kube-apiserver's `--allow-privileged` (kube's `capabilities.AllowPrivileged`); kube's default is false. */
  allowPrivileged: boolean;
}

/** 1.24's legacy DNS search limits (what ExpandedDNSConfig lifts). */
export const MAX_DNS_SEARCH_PATHS_LEGACY = 6;
export const MAX_DNS_SEARCH_LIST_CHARS_LEGACY = 256;

/** Options for a create: every gate at its 1.24 default, nothing inherited. */
export function defaultPodValidationOptions(allowPrivileged = capabilities().allowPrivileged): PodValidationOptions {
  return {
    allowDownwardAPIHugePages: true,
    allowInvalidPodDeletionCost: false,
    allowIndivisibleHugePagesValues: false,
    allowWindowsHostProcessField: true,
    allowExpandedDNSConfig: false,
    allowOSField: true,
    allowSysctlRegexContainSlash: true,
    allowPrivileged,
  };
}

/** The old spec used more DNS search paths than the legacy limits and the new spec keeps them unchanged. */
function haveSameExpandedDNSConfig(spec: JsonObject | undefined, oldSpec: JsonObject | undefined): boolean {
  const oldDNS = asObject(oldSpec?.['dnsConfig']);
  const newDNS = asObject(spec?.['dnsConfig']);
  if (!oldDNS || !newDNS) return false;
  const oldSearches = strings(oldDNS['searches']);
  const newSearches = strings(newDNS['searches']);
  if (oldSearches.length <= MAX_DNS_SEARCH_PATHS_LEGACY && oldSearches.join(' ').length <= MAX_DNS_SEARCH_LIST_CHARS_LEGACY) return false;
  return oldSearches.length === newSearches.length && oldSearches.every((s, i) => newSearches[i] === s);
}

/** What GetValidationOptionsFromPodSpecAndMeta needs: the new and (on update) old spec and metadata. */
export interface PodOptionsSource {
  spec?: unknown;
  oldSpec?: unknown;
  meta?: unknown;
  oldMeta?: unknown;
  /** kube-apiserver's `--allow-privileged`. */
  allowPrivileged?: boolean;
}

/** kube 1.24's `GetValidationOptionsFromPodSpecAndMeta`. */
export function podValidationOptions(src: PodOptionsSource): PodValidationOptions {
  const spec = asObject(src.spec);
  const oldSpec = asObject(src.oldSpec);
  const opts = defaultPodValidationOptions(src.allowPrivileged ?? false);
  opts.allowExpandedDNSConfig = haveSameExpandedDNSConfig(spec, oldSpec);
  if (oldSpec) opts.allowIndivisibleHugePagesValues = usesIndivisibleHugePagesValues(oldSpec);
  const oldMeta = asObject(src.oldMeta);
  if (oldMeta) opts.allowInvalidPodDeletionCost = deletionCostError(stringMap(oldMeta['annotations'])) !== undefined;
  return opts;
}

/** kube's `GetValidationOptionsFromPodTemplate`: the same, from pod template specs (`--allow-privileged` as the server runs). */
export function podTemplateValidationOptions(template: unknown, oldTemplate: unknown, allowPrivileged = capabilities().allowPrivileged): PodValidationOptions {
  const t = asObject(template);
  const o = asObject(oldTemplate);
  return podValidationOptions({ spec: t?.['spec'], oldSpec: o?.['spec'], meta: t?.['metadata'], oldMeta: o?.['metadata'], allowPrivileged });
}
