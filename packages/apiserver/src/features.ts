/**
 * Feature gates (kube's component-base featuregate): a table of known gates with their stage,
 * default and lock, and `--feature-gates` validated against it. Components read a gate through
 * `FeatureGates.enabled(name)` on the completed options — never from a global.
 */

export type FeatureStage = 'ALPHA' | 'BETA' | 'GA' | 'DEPRECATED';

export interface FeatureSpec {
  stage: FeatureStage;
  default: boolean;
  /** A locked gate cannot be set to anything but its default. */
  lockToDefault?: boolean;
  /** False: declared (accepted, listed) but plinth does not change behaviour on it. */
  implemented: boolean;
}

/**
 * The gates plinth knows, by kube's name, with kube 1.24's stage, default and lock. Besides
 * k8s.io/apiserver's generic gates, kube-apiserver 1.24's other gates are declared (accepted, so an
 * operator's kube flags work) but change nothing (`implemented: false`; `--help` says so).
 * `AllAlpha` and `AllBeta` set every Alpha (Beta) gate not set explicitly.
 */
export const FEATURE_GATES = {
  AllAlpha: { stage: 'ALPHA', default: false, implemented: true },
  AllBeta: { stage: 'BETA', default: false, implemented: true },
  // k8s.io/apiserver's generic gates (kube 1.24).
  /** `limit`/`continue` on lists; off → the whole list, no continue token. */
  APIListChunking: { stage: 'BETA', default: true, implemented: true },
  APIPriorityAndFairness: { stage: 'BETA', default: true, implemented: true },
  APIResponseCompression: { stage: 'BETA', default: true, implemented: false },
  APIServerIdentity: { stage: 'ALPHA', default: false, implemented: false },
  APIServerTracing: { stage: 'ALPHA', default: false, implemented: false },
  AdvancedAuditing: { stage: 'GA', default: true, implemented: false },
  CustomResourceValidationExpressions: { stage: 'ALPHA', default: false, implemented: false },
  /** Always on in plinth (dryRun=All is served). */
  DryRun: { stage: 'GA', default: true, implemented: false },
  EfficientWatchResumption: { stage: 'GA', default: true, lockToDefault: true, implemented: false },
  OpenAPIEnums: { stage: 'BETA', default: true, implemented: false },
  OpenAPIV3: { stage: 'BETA', default: true, implemented: false },
  RemainingItemCount: { stage: 'BETA', default: true, implemented: false },
  RemoveSelfLink: { stage: 'GA', default: true, lockToDefault: true, implemented: false },
  /** Off → apply patches get 415 and managedFields are neither tracked nor returned. */
  ServerSideApply: { stage: 'GA', default: true, implemented: true },
  /** The `fieldValidation` parameter (Strict, Warn, Ignore) on create, update and patch. */
  ServerSideFieldValidation: { stage: 'ALPHA', default: false, implemented: true },
  StorageVersionAPI: { stage: 'ALPHA', default: false, implemented: false },
  StorageVersionHash: { stage: 'BETA', default: true, implemented: false },
  WarningHeaders: { stage: 'GA', default: true, lockToDefault: true, implemented: false },
  WatchBookmark: { stage: 'GA', default: true, lockToDefault: true, implemented: true },
  /** plinth's own: consistent reads (resourceVersion unset) answered from the watch cache; off → from etcd. */
  ConsistentListFromCache: { stage: 'BETA', default: true, implemented: true },
  /**
   * kube 1.26's gate (not in 1.24): serves authentication.k8s.io/v1 selfsubjectreviews (`kubectl
   * auth whoami`) and grants it to system:basic-user. Off by default, so discovery is 1.24's.
   */
  APISelfSubjectReview: { stage: 'ALPHA', default: false, implemented: true },
  // kube-apiserver 1.24's other gates: declared, not implemented.
  AnyVolumeDataSource: { stage: 'BETA', default: true, implemented: false },
  AppArmor: { stage: 'BETA', default: true, implemented: false },
  CPUManager: { stage: 'BETA', default: true, implemented: false },
  CPUManagerPolicyAlphaOptions: { stage: 'ALPHA', default: false, implemented: false },
  CPUManagerPolicyBetaOptions: { stage: 'BETA', default: true, implemented: false },
  CPUManagerPolicyOptions: { stage: 'BETA', default: true, implemented: false },
  CSIInlineVolume: { stage: 'BETA', default: true, implemented: false },
  CSIMigration: { stage: 'BETA', default: true, implemented: false },
  CSIMigrationAWS: { stage: 'BETA', default: true, implemented: false },
  CSIMigrationAzureDisk: { stage: 'GA', default: true, implemented: false },
  CSIMigrationAzureFile: { stage: 'BETA', default: true, implemented: false },
  CSIMigrationGCE: { stage: 'BETA', default: true, implemented: false },
  CSIMigrationOpenStack: { stage: 'GA', default: true, lockToDefault: true, implemented: false },
  CSIMigrationPortworx: { stage: 'ALPHA', default: false, implemented: false },
  CSIMigrationRBD: { stage: 'ALPHA', default: false, implemented: false },
  CSIMigrationvSphere: { stage: 'BETA', default: false, implemented: false },
  CSIStorageCapacity: { stage: 'GA', default: true, implemented: false },
  CSIVolumeHealth: { stage: 'ALPHA', default: false, implemented: false },
  ContextualLogging: { stage: 'ALPHA', default: false, implemented: false },
  ControllerManagerLeaderMigration: { stage: 'GA', default: true, lockToDefault: true, implemented: false },
  CronJobTimeZone: { stage: 'ALPHA', default: false, implemented: false },
  CustomCPUCFSQuotaPeriod: { stage: 'ALPHA', default: false, implemented: false },
  DaemonSetUpdateSurge: { stage: 'BETA', default: true, implemented: false },
  DefaultPodTopologySpread: { stage: 'GA', default: true, lockToDefault: true, implemented: false },
  DelegateFSGroupToCSIDriver: { stage: 'BETA', default: true, implemented: false },
  DevicePlugins: { stage: 'BETA', default: true, implemented: false },
  DisableAcceleratorUsageMetrics: { stage: 'BETA', default: true, implemented: false },
  DisableCloudProviders: { stage: 'ALPHA', default: false, implemented: false },
  DisableKubeletCloudCredentialProviders: { stage: 'ALPHA', default: false, implemented: false },
  DownwardAPIHugePages: { stage: 'BETA', default: true, implemented: false },
  DynamicKubeletConfig: { stage: 'DEPRECATED', default: false, implemented: false },
  EndpointSliceTerminatingCondition: { stage: 'BETA', default: true, implemented: false },
  EphemeralContainers: { stage: 'BETA', default: true, implemented: false },
  ExecProbeTimeout: { stage: 'GA', default: true, implemented: false },
  ExpandCSIVolumes: { stage: 'GA', default: true, implemented: false },
  ExpandInUsePersistentVolumes: { stage: 'GA', default: true, implemented: false },
  ExpandPersistentVolumes: { stage: 'GA', default: true, implemented: false },
  ExpandedDNSConfig: { stage: 'ALPHA', default: false, implemented: false },
  ExperimentalHostUserNamespaceDefaulting: { stage: 'BETA', default: false, implemented: false },
  GRPCContainerProbe: { stage: 'BETA', default: true, implemented: false },
  GracefulNodeShutdown: { stage: 'BETA', default: true, implemented: false },
  GracefulNodeShutdownBasedOnPodPriority: { stage: 'BETA', default: true, implemented: false },
  HPAContainerMetrics: { stage: 'ALPHA', default: false, implemented: false },
  HPAScaleToZero: { stage: 'ALPHA', default: false, implemented: false },
  HonorPVReclaimPolicy: { stage: 'ALPHA', default: false, implemented: false },
  IdentifyPodOS: { stage: 'BETA', default: true, implemented: false },
  InTreePluginAWSUnregister: { stage: 'ALPHA', default: false, implemented: false },
  InTreePluginAzureDiskUnregister: { stage: 'ALPHA', default: false, implemented: false },
  InTreePluginAzureFileUnregister: { stage: 'ALPHA', default: false, implemented: false },
  InTreePluginGCEUnregister: { stage: 'ALPHA', default: false, implemented: false },
  InTreePluginOpenStackUnregister: { stage: 'ALPHA', default: false, implemented: false },
  InTreePluginPortworxUnregister: { stage: 'ALPHA', default: false, implemented: false },
  InTreePluginRBDUnregister: { stage: 'ALPHA', default: false, implemented: false },
  InTreePluginvSphereUnregister: { stage: 'ALPHA', default: false, implemented: false },
  IndexedJob: { stage: 'GA', default: true, lockToDefault: true, implemented: false },
  JobMutableNodeSchedulingDirectives: { stage: 'BETA', default: true, implemented: false },
  JobReadyPods: { stage: 'BETA', default: true, implemented: false },
  JobTrackingWithFinalizers: { stage: 'BETA', default: false, implemented: false },
  KubeletCredentialProviders: { stage: 'BETA', default: true, implemented: false },
  KubeletInUserNamespace: { stage: 'ALPHA', default: false, implemented: false },
  KubeletPodResources: { stage: 'BETA', default: true, implemented: false },
  KubeletPodResourcesGetAllocatable: { stage: 'BETA', default: true, implemented: false },
  LegacyServiceAccountTokenNoAutoGeneration: { stage: 'BETA', default: true, implemented: false },
  LocalStorageCapacityIsolation: { stage: 'BETA', default: true, implemented: false },
  LocalStorageCapacityIsolationFSQuotaMonitoring: { stage: 'ALPHA', default: false, implemented: false },
  LogarithmicScaleDown: { stage: 'BETA', default: true, implemented: false },
  MaxUnavailableStatefulSet: { stage: 'ALPHA', default: false, implemented: false },
  MemoryManager: { stage: 'BETA', default: true, implemented: false },
  MemoryQoS: { stage: 'ALPHA', default: false, implemented: false },
  MinDomainsInPodTopologySpread: { stage: 'ALPHA', default: false, implemented: false },
  MixedProtocolLBService: { stage: 'BETA', default: true, implemented: false },
  NetworkPolicyEndPort: { stage: 'BETA', default: true, implemented: false },
  NetworkPolicyStatus: { stage: 'ALPHA', default: false, implemented: false },
  NodeOutOfServiceVolumeDetach: { stage: 'ALPHA', default: false, implemented: false },
  NodeSwap: { stage: 'ALPHA', default: false, implemented: false },
  NonPreemptingPriority: { stage: 'GA', default: true, lockToDefault: true, implemented: false },
  PodAffinityNamespaceSelector: { stage: 'GA', default: true, lockToDefault: true, implemented: false },
  PodAndContainerStatsFromCRI: { stage: 'ALPHA', default: false, implemented: false },
  PodDeletionCost: { stage: 'BETA', default: true, implemented: false },
  PodOverhead: { stage: 'GA', default: true, lockToDefault: true, implemented: false },
  PodSecurity: { stage: 'BETA', default: true, implemented: true },
  PreferNominatedNode: { stage: 'GA', default: true, lockToDefault: true, implemented: false },
  ProbeTerminationGracePeriod: { stage: 'BETA', default: false, implemented: false },
  ProcMountType: { stage: 'ALPHA', default: false, implemented: false },
  ProxyTerminatingEndpoints: { stage: 'ALPHA', default: false, implemented: false },
  QOSReserved: { stage: 'ALPHA', default: false, implemented: false },
  ReadWriteOncePod: { stage: 'ALPHA', default: false, implemented: false },
  RecoverVolumeExpansionFailure: { stage: 'ALPHA', default: false, implemented: false },
  RotateKubeletServerCertificate: { stage: 'BETA', default: true, implemented: false },
  SeccompDefault: { stage: 'ALPHA', default: false, implemented: false },
  ServiceIPStaticSubrange: { stage: 'ALPHA', default: false, implemented: false },
  ServiceInternalTrafficPolicy: { stage: 'BETA', default: true, implemented: false },
  ServiceLBNodePortControl: { stage: 'GA', default: true, lockToDefault: true, implemented: false },
  ServiceLoadBalancerClass: { stage: 'GA', default: true, lockToDefault: true, implemented: false },
  SizeMemoryBackedVolumes: { stage: 'BETA', default: true, implemented: false },
  StatefulSetAutoDeletePVC: { stage: 'ALPHA', default: false, implemented: false },
  StatefulSetMinReadySeconds: { stage: 'BETA', default: true, implemented: false },
  SuspendJob: { stage: 'GA', default: true, lockToDefault: true, implemented: false },
  TopologyAwareHints: { stage: 'BETA', default: true, implemented: false },
  TopologyManager: { stage: 'BETA', default: true, implemented: false },
  VolumeCapacityPriority: { stage: 'ALPHA', default: false, implemented: false },
  WinDSR: { stage: 'ALPHA', default: false, implemented: false },
  WinOverlay: { stage: 'BETA', default: true, implemented: false },
  WindowsHostProcessContainers: { stage: 'BETA', default: true, implemented: false },
} satisfies Record<string, FeatureSpec>;

export type FeatureName = keyof typeof FEATURE_GATES;

/** The effective value of every known gate. */
export class FeatureGates {
  readonly #values: Map<string, boolean>;

  constructor(values: ReadonlyMap<string, boolean> = new Map()) {
    this.#values = new Map(values);
  }

  enabled(name: FeatureName): boolean {
    return this.#values.get(name) ?? (FEATURE_GATES[name] as FeatureSpec).default;
  }
}

/**
 * Validates `--feature-gates` values against the table: unknown gates and a locked gate set away
 * from its default are errors; `warn` receives kube's warnings (GA or deprecated gates set).
 */
export function featureGatesFrom(given: Record<string, boolean>, errs: string[], warn: (msg: string) => void): FeatureGates {
  const values = new Map<string, boolean>();
  for (const [name, value] of Object.entries(given)) {
    const spec = Object.hasOwn(FEATURE_GATES, name) ? (FEATURE_GATES as Record<string, FeatureSpec>)[name] : undefined;
    if (!spec) {
      errs.push(`unrecognized feature gate: ${name}`);
      continue;
    }
    if (spec.lockToDefault && value !== spec.default) {
      errs.push(`cannot set feature gate ${name} to ${value}, feature is locked to ${spec.default}`);
      continue;
    }
    if (spec.stage === 'GA') warn(`Setting GA feature gate ${name}=${value}. It will be removed in a future release.`);
    else if (spec.stage === 'DEPRECATED') warn(`Setting deprecated feature gate ${name}=${value}. It will be removed in a future release.`);
    values.set(name, value);
  }
  // kube's special gates: AllAlpha / AllBeta set every gate of their stage not set explicitly.
  const all: Array<[string, FeatureStage]> = [['AllAlpha', 'ALPHA'], ['AllBeta', 'BETA']];
  for (const [special, stage] of all) {
    const value = values.get(special);
    if (value === undefined) continue;
    for (const [name, spec] of Object.entries(FEATURE_GATES) as Array<[string, FeatureSpec]>) {
      if (spec.stage === stage && name !== 'AllAlpha' && name !== 'AllBeta' && !Object.hasOwn(given, name)) values.set(name, value);
    }
  }
  return new FeatureGates(values);
}

/**
 * The gates as `--help` lists them, kube's way (`Name=true|false (BETA - default=true)`, sorted);
 * kube hides GA and deprecated gates from the list, plinth lists them after, and marks the gates
 * that change nothing in plinth.
 */
export function featureGatesUsage(): string[] {
  const line = (name: string, spec: FeatureSpec): string =>
    `${name}=true|false (${spec.stage} - default=${spec.default}${spec.lockToDefault ? ', locked' : ''})${spec.implemented ? '' : ' [declared, not implemented]'}`;
  const entries = (Object.entries(FEATURE_GATES) as Array<[string, FeatureSpec]>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return [
    ...entries.filter(([, s]) => s.stage === 'ALPHA' || s.stage === 'BETA').map(([n, s]) => line(n, s)),
    ...entries.filter(([, s]) => s.stage === 'GA' || s.stage === 'DEPRECATED').map(([n, s]) => line(n, s)),
  ];
}
