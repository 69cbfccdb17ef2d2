/**
 * The Go shape of the kube internal types that pod diffs print (pkg/apis/core/types.go at 1.24):
 * each struct's fields in declaration order with their Go types, so a diff lists fields as Go
 * does, zero values included. Embedded structs (`=core.X`) read their fields from the same JSON
 * object.
 */

export type GoKind = 'string' | 'int' | 'bool' | 'ptr' | 'slice' | 'map' | 'struct' | 'embedded';

export interface GoField {
  name: string;
  json: string;
  kind: GoKind;
  /** The Go type as go-cmp prints it (`[]core.Container`, `*core.Probe`, `core.ResourceRequirements`). */
  type: string;
}

const STRUCTS: Record<string, string> = {
  'core.PodSpec':
    'Volumes []core.Volume; InitContainers []core.Container; Containers []core.Container; EphemeralContainers []core.EphemeralContainer; RestartPolicy string; TerminationGracePeriodSeconds *int64; ActiveDeadlineSeconds *int64; DNSPolicy string; NodeSelector map[string]string; ServiceAccountName string; AutomountServiceAccountToken *bool; NodeName string; SecurityContext *core.PodSecurityContext; ImagePullSecrets []core.LocalObjectReference; Hostname string; Subdomain string; SetHostnameAsFQDN *bool; Affinity *core.Affinity; SchedulerName string; Tolerations []core.Toleration; HostAliases []core.HostAlias; PriorityClassName string; Priority *int32; PreemptionPolicy *core.PreemptionPolicy; DNSConfig *core.PodDNSConfig; ReadinessGates []core.PodReadinessGate; RuntimeClassName *string; Overhead core.ResourceList; EnableServiceLinks *bool; TopologySpreadConstraints []core.TopologySpreadConstraint; OS *core.PodOS',
  'core.Container':
    'Name string; Image string; Command []string; Args []string; WorkingDir string; Ports []core.ContainerPort; EnvFrom []core.EnvFromSource; Env []core.EnvVar; Resources core.ResourceRequirements; VolumeMounts []core.VolumeMount; VolumeDevices []core.VolumeDevice; LivenessProbe *core.Probe; ReadinessProbe *core.Probe; StartupProbe *core.Probe; Lifecycle *core.Lifecycle; TerminationMessagePath string; TerminationMessagePolicy string; ImagePullPolicy string; SecurityContext *core.SecurityContext; Stdin bool; StdinOnce bool; TTY bool',
  'core.EphemeralContainer': 'EphemeralContainerCommon =core.EphemeralContainerCommon; TargetContainerName string',
  'core.PodSecurityContext':
    'HostNetwork bool; HostPID bool; HostIPC bool; ShareProcessNamespace *bool; SELinuxOptions *core.SELinuxOptions; WindowsOptions *core.WindowsSecurityContextOptions; RunAsUser *int64; RunAsGroup *int64; RunAsNonRoot *bool; SupplementalGroups []int64; FSGroup *int64; FSGroupChangePolicy *core.PodFSGroupChangePolicy; Sysctls []core.Sysctl; SeccompProfile *core.SeccompProfile',
  'core.SecurityContext':
    'Capabilities *core.Capabilities; Privileged *bool; SELinuxOptions *core.SELinuxOptions; WindowsOptions *core.WindowsSecurityContextOptions; RunAsUser *int64; RunAsGroup *int64; RunAsNonRoot *bool; ReadOnlyRootFilesystem *bool; AllowPrivilegeEscalation *bool; ProcMount *core.ProcMountType; SeccompProfile *core.SeccompProfile',
  'core.Probe': 'ProbeHandler =core.ProbeHandler; InitialDelaySeconds int32; TimeoutSeconds int32; PeriodSeconds int32; SuccessThreshold int32; FailureThreshold int32; TerminationGracePeriodSeconds *int64',
  'core.ProbeHandler': 'Exec *core.ExecAction; HTTPGet *core.HTTPGetAction; TCPSocket *core.TCPSocketAction; GRPC *core.GRPCAction',
  'core.Volume': 'Name string; VolumeSource =core.VolumeSource',
  'core.VolumeSource':
    'HostPath *core.HostPathVolumeSource; EmptyDir *core.EmptyDirVolumeSource; GCEPersistentDisk *core.GCEPersistentDiskVolumeSource; AWSElasticBlockStore *core.AWSElasticBlockStoreVolumeSource; GitRepo *core.GitRepoVolumeSource; Secret *core.SecretVolumeSource; NFS *core.NFSVolumeSource; ISCSI *core.ISCSIVolumeSource; Glusterfs *core.GlusterfsVolumeSource; PersistentVolumeClaim *core.PersistentVolumeClaimVolumeSource; RBD *core.RBDVolumeSource; Quobyte *core.QuobyteVolumeSource; FlexVolume *core.FlexVolumeSource; Cinder *core.CinderVolumeSource; CephFS *core.CephFSVolumeSource; Flocker *core.FlockerVolumeSource; DownwardAPI *core.DownwardAPIVolumeSource; FC *core.FCVolumeSource; AzureFile *core.AzureFileVolumeSource; ConfigMap *core.ConfigMapVolumeSource; VsphereVolume *core.VsphereVirtualDiskVolumeSource; AzureDisk *core.AzureDiskVolumeSource; PhotonPersistentDisk *core.PhotonPersistentDiskVolumeSource; Projected *core.ProjectedVolumeSource; PortworxVolume *core.PortworxVolumeSource; ScaleIO *core.ScaleIOVolumeSource; StorageOS *core.StorageOSVolumeSource; CSI *core.CSIVolumeSource; Ephemeral *core.EphemeralVolumeSource',
  'core.ResourceRequirements': 'Limits core.ResourceList; Requests core.ResourceList',
  'core.ContainerPort': 'Name string; HostPort int32; ContainerPort int32; Protocol string; HostIP string',
  'core.VolumeMount': 'Name string; ReadOnly bool; MountPath string; SubPath string; MountPropagation *core.MountPropagationMode; SubPathExpr string',
  'core.EnvVar': 'Name string; Value string; ValueFrom *core.EnvVarSource',
  'core.Toleration': 'Key string; Operator string; Value string; Effect string; TolerationSeconds *int64',
};

/** The struct's name in EphemeralContainerCommon is Container's field list. */
STRUCTS['core.EphemeralContainerCommon'] = STRUCTS['core.Container']!;

const JSON_NAMES: Record<string, string> = {
  DNSPolicy: 'dnsPolicy',
  DNSConfig: 'dnsConfig',
  OS: 'os',
  TTY: 'tty',
  FSGroup: 'fsGroup',
  FSGroupChangePolicy: 'fsGroupChangePolicy',
  SELinuxOptions: 'seLinuxOptions',
  HTTPGet: 'httpGet',
  TCPSocket: 'tcpSocket',
  GRPC: 'grpc',
  GCEPersistentDisk: 'gcePersistentDisk',
  AWSElasticBlockStore: 'awsElasticBlockStore',
  NFS: 'nfs',
  ISCSI: 'iscsi',
  RBD: 'rbd',
  CephFS: 'cephfs',
  FC: 'fc',
  ScaleIO: 'scaleIO',
  StorageOS: 'storageos',
  CSI: 'csi',
};

function kindOf(type: string): GoKind {
  if (type.startsWith('=')) return 'embedded';
  if (type.startsWith('*')) return 'ptr';
  if (type.startsWith('[]')) return 'slice';
  if (type.startsWith('map[') || type === 'core.ResourceList') return 'map';
  if (type === 'bool') return 'bool';
  if (type === 'int32' || type === 'int64') return 'int';
  if (type.startsWith('core.')) return 'struct';
  return 'string';
}

const parsed = new Map<string, GoField[]>();

/** The fields of a known struct type, or undefined for types plinth does not describe. */
export function goStructFields(type: string): GoField[] | undefined {
  const cached = parsed.get(type);
  if (cached) return cached;
  const spec = STRUCTS[type];
  if (!spec) return undefined;
  const fields = spec.split('; ').map((decl) => {
    const [name, t] = decl.split(' ') as [string, string];
    const kind = kindOf(t);
    return { name, json: JSON_NAMES[name] ?? name.charAt(0).toLowerCase() + name.slice(1), kind, type: kind === 'embedded' ? t.slice(1) : t };
  });
  parsed.set(type, fields);
  return fields;
}

/** The element type of a slice type (`[]core.Container` → `core.Container`). */
export function goElemType(type: string): string {
  return type.startsWith('[]') ? type.slice(2) : type;
}
