/**
 * A diff of two decoded objects in the shape of go-cmp's `cmp.Diff`, which kube prints in the
 * "pod updates may not change fields" error. go-cmp's output is unstable by design (it varies its
 * spacing between runs), so plinth keeps its form, not its bytes: a Go-like literal of the old
 * value with `-`/`+` lines where values differ, two equal records of context around a change and
 * `... // N identical fields` for the rest. Member names are the Go names kube's types use.
 */
import { asObject } from './access.js';
import { isZeroValue, semanticEqual } from './semantic.js';

const CONTEXT = 2;

/** JSON member → Go field name, where Go's is not the JSON name with a capital first letter. */
const GO_NAMES: Record<string, string> = {
  dnsPolicy: 'DNSPolicy',
  dnsConfig: 'DNSConfig',
  os: 'OS',
  tty: 'TTY',
  uid: 'UID',
  hostIP: 'HostIP',
  fsGroup: 'FSGroup',
  fsGroupChangePolicy: 'FSGroupChangePolicy',
  seLinuxOptions: 'SELinuxOptions',
  httpGet: 'HTTPGet',
  httpHeaders: 'HTTPHeaders',
  tcpSocket: 'TCPSocket',
  grpc: 'GRPC',
  iscsi: 'ISCSI',
  nfs: 'NFS',
  rbd: 'RBD',
  fc: 'FC',
  csi: 'CSI',
  awsElasticBlockStore: 'AWSElasticBlockStore',
  gcePersistentDisk: 'GCEPersistentDisk',
  cephfs: 'CephFS',
  storageos: 'StorageOS',
  ip: 'IP',
  serviceAccount: 'DeprecatedServiceAccount',
  apiVersion: 'APIVersion',
  gmsaCredentialSpec: 'GMSACredentialSpec',
  gmsaCredentialSpecName: 'GMSACredentialSpecName',
};

/** Go types of the composite members of a pod spec (go-cmp prints them on changed composites). */
const GO_TYPES: Record<string, string> = {
  volumes: '[]core.Volume',
  initContainers: '[]core.Container',
  containers: '[]core.Container',
  ephemeralContainers: '[]core.EphemeralContainer',
  tolerations: '[]core.Toleration',
  hostAliases: '[]core.HostAlias',
  imagePullSecrets: '[]core.LocalObjectReference',
  readinessGates: '[]core.PodReadinessGate',
  topologySpreadConstraints: '[]core.TopologySpreadConstraint',
  ports: '[]core.ContainerPort',
  env: '[]core.EnvVar',
  envFrom: '[]core.EnvFromSource',
  volumeMounts: '[]core.VolumeMount',
  volumeDevices: '[]core.VolumeDevice',
  command: '[]string',
  args: '[]string',
  nodeSelector: 'map[string]string',
  securityContext: '*core.SecurityContext',
  affinity: '*core.Affinity',
  dnsConfig: '*core.PodDNSConfig',
  resources: 'core.ResourceRequirements',
  livenessProbe: '*core.Probe',
  readinessProbe: '*core.Probe',
  startupProbe: '*core.Probe',
  lifecycle: '*core.Lifecycle',
};

function goName(key: string): string {
  return GO_NAMES[key] ?? key.charAt(0).toUpperCase() + key.slice(1);
}

/** go-cmp's compact form of a value: zero struct fields elided, strings quoted, nil for none. */
function formatValue(v: unknown, pointerish = false): string {
  if (v === undefined || v === null) return 'nil';
  if (typeof v === 'string') return JSON.stringify(v);
  if (typeof v === 'number' || typeof v === 'bigint' || typeof v === 'boolean') return String(v);
  if (Array.isArray(v)) return `{${v.map((x) => formatValue(x)).join(', ')}}`;
  const o = asObject(v) ?? {};
  const members = Object.entries(o)
    .filter(([, x]) => !isZeroValue(x))
    .map(([k, x]) => `${goName(k)}: ${formatValue(x)}`);
  return `${pointerish ? '&' : ''}{${members.join(', ')}}`;
}

interface Line {
  mark: ' ' | '-' | '+';
  depth: number;
  text: string;
}

function isComposite(v: unknown): boolean {
  return Array.isArray(v) || asObject(v) !== undefined;
}

/** The longest common subsequence of two lists under semantic equality, as index pairs. */
function lcs(a: unknown[], b: unknown[]): Array<[number, number]> {
  const n = a.length;
  const m = b.length;
  const t: number[][] = Array.from({ length: n + 1 }, () => new Array<number>(m + 1).fill(0));
  for (let i = n - 1; i >= 0; i--) for (let j = m - 1; j >= 0; j--) t[i]![j] = semanticEqual(a[i], b[j]) ? t[i + 1]![j + 1]! + 1 : Math.max(t[i + 1]![j]!, t[i]![j + 1]!);
  const out: Array<[number, number]> = [];
  let i = 0;
  let j = 0;
  while (i < n && j < m) {
    if (semanticEqual(a[i], b[j])) {
      out.push([i, j]);
      i++;
      j++;
    } else if (t[i + 1]![j]! >= t[i]![j + 1]!) i++;
    else j++;
  }
  return out;
}

type DiffRecord = { kind: 'equal'; key: string; value: unknown } | { kind: 'changed'; key: string; x: unknown; y: unknown } | { kind: 'removed'; key: string; x: unknown } | { kind: 'added'; key: string; y: unknown };

function records(x: unknown, y: unknown): { recs: DiffRecord[]; name: string } {
  if (Array.isArray(x) || Array.isArray(y)) {
    const a = Array.isArray(x) ? x : [];
    const b = Array.isArray(y) ? y : [];
    const recs: DiffRecord[] = [];
    if (a.length === b.length) {
      a.forEach((v, i) => recs.push(semanticEqual(v, b[i]) ? { kind: 'equal', key: '', value: v } : { kind: 'changed', key: '', x: v, y: b[i] }));
    } else {
      let i = 0;
      let j = 0;
      for (const [mi, mj] of [...lcs(a, b), [a.length, b.length] as [number, number]]) {
        while (i < mi) recs.push({ kind: 'removed', key: '', x: a[i++] });
        while (j < mj) recs.push({ kind: 'added', key: '', y: b[j++] });
        if (mi < a.length) recs.push({ kind: 'equal', key: '', value: a[mi] });
        i = mi + 1;
        j = mj + 1;
      }
    }
    return { recs, name: 'elements' };
  }
  const ox = asObject(x) ?? {};
  const oy = asObject(y) ?? {};
  const keys = [...Object.keys(ox), ...Object.keys(oy).filter((k) => !Object.hasOwn(ox, k))];
  const recs: DiffRecord[] = keys.map((k) => (semanticEqual(ox[k], oy[k]) ? { kind: 'equal', key: k, value: ox[k] ?? oy[k] } : { kind: 'changed', key: k, x: ox[k], y: oy[k] }));
  return { recs, name: 'fields' };
}

function emitDiff(x: unknown, y: unknown, depth: number, lines: Line[], isStruct: boolean): void {
  const { recs, name } = records(x, y);
  const label = (k: string): string => (isStruct && k !== '' ? `${goName(k)}: ` : '');
  let i = 0;
  const firstGroup = recs.length > 0 && recs[0]!.kind === 'equal';
  while (i < recs.length) {
    if (recs[i]!.kind === 'equal') {
      let end = i;
      while (end < recs.length && recs[end]!.kind === 'equal') end++;
      const n = end - i;
      const lo = i === 0 && firstGroup ? 0 : Math.min(CONTEXT, n);
      let hi = end === recs.length ? 0 : Math.min(CONTEXT, n - lo);
      if (n - (lo + hi) === 1) hi++;
      for (let k = i; k < i + lo; k++) lines.push({ mark: ' ', depth, text: `${label(recs[k]!.key)}${formatValue((recs[k] as { value: unknown }).value)},` });
      if (n > lo + hi) lines.push({ mark: ' ', depth, text: `... // ${n - lo - hi} identical ${name}` });
      for (let k = end - hi; k < end; k++) lines.push({ mark: ' ', depth, text: `${label(recs[k]!.key)}${formatValue((recs[k] as { value: unknown }).value)},` });
      i = end;
      continue;
    }
    const r = recs[i]!;
    i++;
    if (r.kind === 'equal') continue;
    const key = label(r.key);
    if (r.kind === 'removed') lines.push({ mark: '-', depth, text: `${key}${formatValue(r.x)},` });
    else if (r.kind === 'added') lines.push({ mark: '+', depth, text: `${key}${formatValue(r.y)},` });
    else if (isComposite(r.x) && isComposite(r.y) && Array.isArray(r.x) === Array.isArray(r.y)) {
      const type = isStruct ? (GO_TYPES[r.key] ?? '') : '';
      const ptr = !Array.isArray(r.x) && type.startsWith('*') ? '&' : '';
      lines.push({ mark: ' ', depth, text: `${key}${ptr}${type.replace(/^\*/, '')}{` });
      emitDiff(r.x, r.y, depth + 1, lines, !Array.isArray(r.x) && !type.startsWith('map'));
      lines.push({ mark: ' ', depth, text: '},' });
    } else {
      lines.push({ mark: '-', depth, text: `${key}${formatValue(r.x)},` });
      lines.push({ mark: '+', depth, text: `${key}${formatValue(r.y)},` });
    }
  }
}

/** go-cmp's `Diff(old, new)` of two structs of the named Go type, as kube prints it. */
export function goDiff(oldValue: unknown, newValue: unknown, typeName: string): string {
  const lines: Line[] = [{ mark: ' ', depth: 0, text: `${typeName}{` }];
  emitDiff(oldValue, newValue, 1, lines, true);
  lines.push({ mark: ' ', depth: 0, text: '}' });
  return `${lines.map((l) => `${l.mark} ${'\t'.repeat(l.depth)}${l.text}`).join('\n')}\n`;
}
