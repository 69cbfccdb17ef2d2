/**
 * The baseline checks of Pod Security Standards, one function per check version, as PSA 1.24's
 * policy/check_*.go (their reasons and details are what clients see in refusals and warnings).
 */
import { ALLOWED, containers, goQuote, joinQuote, list, namedContainers, num, obj, pluralize, sortedSet, str, bool, type CheckResult, type PodView } from './pod.js';

const APPARMOR_PREFIX = 'container.apparmor.security.beta.kubernetes.io/';

/** appArmorProfile 1.0: only runtime/default or localhost/* profiles. */
export function appArmorProfile_1_0(pod: PodView): CheckResult {
  const bad: string[] = [];
  for (const [k, v] of Object.entries(pod.annotations)) {
    if (k.startsWith(APPARMOR_PREFIX) && !(v === '' || v === 'runtime/default' || v.startsWith('localhost/'))) bad.push(`${k}=${goQuote(v)}`);
  }
  if (bad.length === 0) return ALLOWED;
  bad.sort();
  return { allowed: false, reason: pluralize('forbidden AppArmor profile', 'forbidden AppArmor profiles', bad.length), detail: bad.join(', ') };
}

const DEFAULT_CAPABILITIES = new Set(['AUDIT_WRITE', 'CHOWN', 'DAC_OVERRIDE', 'FOWNER', 'FSETID', 'KILL', 'MKNOD', 'NET_BIND_SERVICE', 'SETFCAP', 'SETGID', 'SETPCAP', 'SETUID', 'SYS_CHROOT']);

/** capabilities_baseline 1.0: adds only from the container runtime's default set. */
export function capabilitiesBaseline_1_0(pod: PodView): CheckResult {
  const badContainers: string[] = [];
  const caps: string[] = [];
  for (const c of containers(pod.spec)) {
    const capabilities = obj(obj(c, 'securityContext'), 'capabilities');
    if (!capabilities) continue;
    let valid = true;
    for (const cap of list(capabilities, 'add')) {
      const name = typeof cap === 'string' ? cap : '';
      if (!DEFAULT_CAPABILITIES.has(name)) {
        valid = false;
        caps.push(name);
      }
    }
    if (!valid) badContainers.push(str(c, 'name'));
  }
  if (badContainers.length === 0) return ALLOWED;
  return {
    allowed: false,
    reason: 'non-default capabilities',
    detail: `${namedContainers(badContainers)} must not include ${joinQuote(sortedSet(caps))} in securityContext.capabilities.add`,
  };
}

/** hostNamespaces 1.0: no host network, PID or IPC namespace. */
export function hostNamespaces_1_0(pod: PodView): CheckResult {
  const used: string[] = [];
  if (bool(pod.spec, 'hostNetwork')) used.push('hostNetwork=true');
  if (bool(pod.spec, 'hostPID')) used.push('hostPID=true');
  if (bool(pod.spec, 'hostIPC')) used.push('hostIPC=true');
  return used.length === 0 ? ALLOWED : { allowed: false, reason: 'host namespaces', detail: used.join(', ') };
}

/** hostPathVolumes 1.0: no hostPath volume. */
export function hostPathVolumes_1_0(pod: PodView): CheckResult {
  const names: string[] = [];
  for (const v of list(pod.spec, 'volumes')) if (obj(v, 'hostPath')) names.push(str(v, 'name'));
  if (names.length === 0) return ALLOWED;
  return { allowed: false, reason: 'hostPath volumes', detail: `${pluralize('volume', 'volumes', names.length)} ${joinQuote(names)}` };
}

/** hostPorts 1.0: no container port bound to a host port. */
export function hostPorts_1_0(pod: PodView): CheckResult {
  const badContainers: string[] = [];
  const ports: string[] = [];
  for (const c of containers(pod.spec)) {
    let valid = true;
    for (const p of list(c, 'ports')) {
      const hostPort = num(p, 'hostPort') ?? 0;
      if (hostPort !== 0) {
        valid = false;
        ports.push(String(hostPort));
      }
    }
    if (!valid) badContainers.push(str(c, 'name'));
  }
  if (badContainers.length === 0) return ALLOWED;
  const unique = sortedSet(ports);
  return {
    allowed: false,
    reason: 'hostPort',
    detail: `${namedContainers(badContainers)} ${pluralize('uses', 'use', badContainers.length)} ${pluralize('hostPort', 'hostPorts', unique.length)} ${unique.join(', ')}`,
  };
}

/** privileged 1.0: no privileged container. */
export function privileged_1_0(pod: PodView): CheckResult {
  const bad = containers(pod.spec).filter((c) => bool(obj(c, 'securityContext'), 'privileged') === true).map((c) => str(c, 'name'));
  if (bad.length === 0) return ALLOWED;
  return { allowed: false, reason: 'privileged', detail: `${namedContainers(bad)} must not set securityContext.privileged=true` };
}

/** procMount 1.0: the default /proc masks only. */
export function procMount_1_0(pod: PodView): CheckResult {
  const bad: string[] = [];
  const types: string[] = [];
  for (const c of containers(pod.spec)) {
    const sc = obj(c, 'securityContext');
    if (!sc || typeof sc['procMount'] !== 'string') continue;
    if (sc['procMount'] !== 'Default') {
      bad.push(str(c, 'name'));
      types.push(sc['procMount']);
    }
  }
  if (bad.length === 0) return ALLOWED;
  return { allowed: false, reason: 'procMount', detail: `${namedContainers(bad)} must not set securityContext.procMount to ${joinQuote(sortedSet(types))}` };
}

const SELINUX_TYPES = new Set(['', 'container_t', 'container_init_t', 'container_kvm_t']);

/** seLinuxOptions 1.0: only the container types, and no user or role. */
export function seLinuxOptions_1_0(pod: PodView): CheckResult {
  const setters: string[] = [];
  const badTypes: string[] = [];
  let setUser = false;
  let setRole = false;
  const valid = (opts: Record<string, unknown>): boolean => {
    let ok = true;
    const type = str(opts, 'type');
    if (!SELINUX_TYPES.has(type)) {
      ok = false;
      badTypes.push(type);
    }
    if (str(opts, 'user') !== '') {
      ok = false;
      setUser = true;
    }
    if (str(opts, 'role') !== '') {
      ok = false;
      setRole = true;
    }
    return ok;
  };
  const podOpts = obj(obj(pod.spec, 'securityContext'), 'seLinuxOptions');
  if (podOpts && !valid(podOpts)) setters.push('pod');
  const bad: string[] = [];
  for (const c of containers(pod.spec)) {
    const opts = obj(obj(c, 'securityContext'), 'seLinuxOptions');
    if (opts && !valid(opts)) bad.push(str(c, 'name'));
  }
  if (bad.length > 0) setters.push(namedContainers(bad));
  if (setters.length === 0) return ALLOWED;
  const data: string[] = [];
  // PSA 1.24 names a set user or role only alongside a forbidden type (its check nests them so).
  if (badTypes.length > 0) {
    const types = sortedSet(badTypes);
    data.push(`${pluralize('type', 'types', types.length)} ${joinQuote(types)}`);
    if (setUser) data.push('user may not be set');
    if (setRole) data.push('role may not be set');
  }
  return { allowed: false, reason: 'seLinuxOptions', detail: `${setters.join(' and ')} set forbidden securityContext.seLinuxOptions: ${data.join('; ')}` };
}

const SECCOMP_POD_ANNOTATION = 'seccomp.security.alpha.kubernetes.io/pod';
const SECCOMP_CONTAINER_PREFIX = 'container.seccomp.security.alpha.kubernetes.io/';

const validSeccompAnnotation = (v: string): boolean => v === 'runtime/default' || v === 'docker/default' || v.startsWith('localhost/');

/** Whether a seccompProfile.type is one the profiles allow. */
export const validSeccompType = (t: string): boolean => t === 'Localhost' || t === 'RuntimeDefault';

/** seccompProfile_baseline 1.0: the seccomp annotations (before the field existed) name allowed profiles. */
export function seccompProfileBaseline_1_0(pod: PodView): CheckResult {
  const bad: string[] = [];
  const podValue = pod.annotations[SECCOMP_POD_ANNOTATION];
  if (podValue !== undefined && !validSeccompAnnotation(podValue)) bad.push(`${SECCOMP_POD_ANNOTATION}=${goQuote(podValue)}`);
  for (const c of containers(pod.spec)) {
    const key = SECCOMP_CONTAINER_PREFIX + str(c, 'name');
    const v = pod.annotations[key];
    if (v !== undefined && !validSeccompAnnotation(v)) bad.push(`${key}=${goQuote(v)}`);
  }
  if (bad.length === 0) return ALLOWED;
  const unique = sortedSet(bad);
  return { allowed: false, reason: 'seccompProfile', detail: `forbidden ${pluralize('annotation', 'annotations', unique.length)} ${unique.join(', ')}` };
}

/** seccompProfile_baseline 1.19: a seccompProfile.type, where set, is RuntimeDefault or Localhost. */
export function seccompProfileBaseline_1_19(pod: PodView): CheckResult {
  const setters: string[] = [];
  const values: string[] = [];
  const podProfile = obj(obj(pod.spec, 'securityContext'), 'seccompProfile');
  if (podProfile && !validSeccompType(str(podProfile, 'type'))) {
    setters.push('pod');
    values.push(str(podProfile, 'type'));
  }
  const bad: string[] = [];
  for (const c of containers(pod.spec)) {
    const profile = obj(obj(c, 'securityContext'), 'seccompProfile');
    if (profile && !validSeccompType(str(profile, 'type'))) {
      bad.push(str(c, 'name'));
      values.push(str(profile, 'type'));
    }
  }
  if (bad.length > 0) setters.push(namedContainers(bad));
  if (setters.length === 0) return ALLOWED;
  return { allowed: false, reason: 'seccompProfile', detail: `${setters.join(' and ')} must not set securityContext.seccompProfile.type to ${joinQuote(sortedSet(values))}` };
}

const SAFE_SYSCTLS = new Set(['kernel.shm_rmid_forced', 'net.ipv4.ip_local_port_range', 'net.ipv4.tcp_syncookies', 'net.ipv4.ping_group_range', 'net.ipv4.ip_unprivileged_port_start']);

/** sysctls 1.0: only the namespaced, isolated ("safe") sysctls. */
export function sysctls_1_0(pod: PodView): CheckResult {
  const bad = list(obj(pod.spec, 'securityContext'), 'sysctls')
    .map((s) => str(s, 'name'))
    .filter((n) => !SAFE_SYSCTLS.has(n));
  return bad.length === 0 ? ALLOWED : { allowed: false, reason: 'forbidden sysctls', detail: bad.join(', ') };
}

/** windowsHostProcess 1.0: no Windows host process, for the pod or a container. */
export function windowsHostProcess_1_0(pod: PodView): CheckResult {
  const hostProcess = (sc: unknown): boolean => bool(obj(sc, 'windowsOptions'), 'hostProcess') === true;
  const bad = containers(pod.spec).filter((c) => hostProcess(obj(c, 'securityContext'))).map((c) => str(c, 'name'));
  const setters: string[] = [];
  if (hostProcess(obj(pod.spec, 'securityContext'))) setters.push('pod');
  if (bad.length > 0) setters.push(namedContainers(bad));
  if (setters.length === 0) return ALLOWED;
  return { allowed: false, reason: 'hostProcess', detail: `${setters.join(' and ')} must not set securityContext.windowsOptions.hostProcess=true` };
}
