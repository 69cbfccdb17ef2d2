/**
 * Containers, init containers and ephemeral containers as kube 1.24 validates them
 * (validateContainers, validateInitContainers, validateEphemeralContainers, validateContainerPorts,
 * validatePullPolicy, checkHostPortConflicts, validateContainersOnlyForPod).
 */
import { type FieldError, fieldErr } from '../../../field-errors.js';
import { type JsonObject, asObject, isSet, num, objects, str } from './access.js';
import { isValidPortName, isValidPortNum, validateDNS1123Label } from './basic.js';
import { validateEnv, validateEnvFrom } from './env.js';
import { type VolumeMap, pathsByName, validateVolumeDevices, validateVolumeMounts } from './mounts.js';
import type { PodValidationOptions } from './pod-options.js';
import { validateLifecycle, validateProbe } from './probes.js';
import { validateContainerResources } from './quantities.js';
import { validateSecurityContext } from './security.js';

const PORT_PROTOCOLS = ['SCTP', 'TCP', 'UDP'];
const PULL_POLICIES = ['Always', 'IfNotPresent', 'Never'];

/** kube's `validateContainerPorts`. */
export function validateContainerPorts(ports: unknown, field: string): FieldError[] {
  const errs: FieldError[] = [];
  const names = new Set<string>();
  objects(ports).forEach((port, i) => {
    const p = `${field}[${i}]`;
    const name = str(port['name']);
    if (name.length > 0) {
      const msgs = isValidPortName(name);
      if (msgs.length > 0) errs.push(...msgs.map((m) => fieldErr.invalid(`${p}.name`, name, m)));
      else if (names.has(name)) errs.push(fieldErr.duplicate(`${p}.name`, name));
      else names.add(name);
    }
    const containerPort = num(port['containerPort']);
    if (containerPort === 0) errs.push(fieldErr.required(`${p}.containerPort`));
    else errs.push(...isValidPortNum(containerPort).map((m) => fieldErr.invalid(`${p}.containerPort`, port['containerPort'], m)));
    const hostPort = num(port['hostPort']);
    if (hostPort !== 0) errs.push(...isValidPortNum(hostPort).map((m) => fieldErr.invalid(`${p}.hostPort`, port['hostPort'], m)));
    const protocol = str(port['protocol']);
    if (protocol.length === 0) errs.push(fieldErr.required(`${p}.protocol`));
    else if (!PORT_PROTOCOLS.includes(protocol)) errs.push(fieldErr.notSupported(`${p}.protocol`, protocol, PORT_PROTOCOLS));
  });
  return errs;
}

/** kube's `validatePullPolicy`. */
export function validatePullPolicy(policy: string, field: string): FieldError[] {
  if (PULL_POLICIES.includes(policy)) return [];
  return policy === '' ? [fieldErr.required(field)] : [fieldErr.notSupported(field, policy, PULL_POLICIES)];
}

/** kube's `AccumulateUniqueHostPorts`: protocol/hostIP/hostPort may appear once. */
export function accumulateUniqueHostPorts(containers: JsonObject[], seen: Set<string>, field: string): FieldError[] {
  const errs: FieldError[] = [];
  containers.forEach((c, ci) => {
    objects(c['ports']).forEach((port, pi) => {
      const hostPort = num(port['hostPort']);
      if (hostPort === 0) return;
      const key = `${str(port['protocol'])}/${str(port['hostIP'])}/${hostPort}`;
      if (seen.has(key)) errs.push(fieldErr.duplicate(`${field}[${ci}].ports[${pi}].hostPort`, key));
      else seen.add(key);
    });
  });
  return errs;
}

function validateOneContainer(ctr: JsonObject, p: string, volumes: VolumeMap, opts: PodValidationOptions): FieldError[] {
  const errs: FieldError[] = [];
  if (str(ctr['image']).length === 0) errs.push(fieldErr.required(`${p}.image`));
  const lifecycle = asObject(ctr['lifecycle']);
  if (lifecycle) errs.push(...validateLifecycle(lifecycle, `${p}.lifecycle`));
  const liveness = asObject(ctr['livenessProbe']);
  const readiness = asObject(ctr['readinessProbe']);
  const startup = asObject(ctr['startupProbe']);
  errs.push(...validateProbe(liveness, `${p}.livenessProbe`));
  if (readiness && isSet(readiness['terminationGracePeriodSeconds'])) {
    errs.push(fieldErr.invalid(`${p}.readinessProbe.terminationGracePeriodSeconds`, readiness['terminationGracePeriodSeconds'], 'must not be set for readinessProbes'));
  }
  // kube 1.24 validates the startup probe twice, so its errors come twice.
  errs.push(...validateProbe(startup, `${p}.startupProbe`));
  if (liveness && num(liveness['successThreshold']) !== 1) errs.push(fieldErr.invalid(`${p}.livenessProbe.successThreshold`, liveness['successThreshold'] ?? 0, 'must be 1'));
  errs.push(...validateProbe(startup, `${p}.startupProbe`));
  if (startup && num(startup['successThreshold']) !== 1) errs.push(fieldErr.invalid(`${p}.startupProbe.successThreshold`, startup['successThreshold'] ?? 0, 'must be 1'));
  const policy = str(ctr['terminationMessagePolicy']);
  if (policy === '') errs.push(fieldErr.required(`${p}.terminationMessagePolicy`, "must be 'File' or 'FallbackToLogsOnError'"));
  else if (policy !== 'File' && policy !== 'FallbackToLogsOnError') {
    errs.push(fieldErr.invalid(`${p}.terminationMessagePolicy`, policy, "must be 'File' or 'FallbackToLogsOnError'"));
  }
  errs.push(...validateProbe(readiness, `${p}.readinessProbe`));
  errs.push(...validateContainerPorts(ctr['ports'], `${p}.ports`));
  errs.push(...validateEnv(ctr['env'], `${p}.env`, opts));
  errs.push(...validateEnvFrom(ctr['envFrom'], `${p}.envFrom`));
  const mounts = pathsByName(ctr['volumeMounts'], 'mountPath');
  const devices = pathsByName(ctr['volumeDevices'], 'devicePath');
  errs.push(...validateVolumeMounts(ctr['volumeMounts'], devices, volumes, ctr, `${p}.volumeMounts`));
  errs.push(...validateVolumeDevices(ctr['volumeDevices'], mounts, volumes, `${p}.volumeDevices`));
  errs.push(...validatePullPolicy(str(ctr['imagePullPolicy']), `${p}.imagePullPolicy`));
  errs.push(...validateContainerResources(ctr['resources'], `${p}.resources`, opts));
  errs.push(...validateSecurityContext(ctr['securityContext'], `${p}.securityContext`, opts));
  return errs;
}

/** kube's `validateContainers`: at least one, named, unique, each valid; host ports unique. */
export function validateContainers(containers: unknown, isInit: boolean, volumes: VolumeMap, field: string, opts: PodValidationOptions): FieldError[] {
  const all = objects(containers);
  if (all.length === 0) return [fieldErr.required(field)];
  const errs: FieldError[] = [];
  const names = new Set<string>();
  all.forEach((ctr, i) => {
    const p = `${field}[${i}]`;
    const name = str(ctr['name']);
    if (name.length === 0) errs.push(fieldErr.required(`${p}.name`));
    else errs.push(...validateDNS1123Label(name, `${p}.name`));
    if (names.has(name)) errs.push(fieldErr.duplicate(`${p}.name`, name));
    else names.add(name);
    errs.push(...validateOneContainer(ctr, p, volumes, opts));
  });
  if (isInit) {
    // Init containers run one at a time, so only ports within one of them can conflict; kube checks
    // each as a one-element list, so the path always reads [0].
    for (const c of all) errs.push(...accumulateUniqueHostPorts([c], new Set(), field));
  } else {
    errs.push(...accumulateUniqueHostPorts(all, new Set(), field));
  }
  return errs;
}

/** kube's `validateInitContainers`: as containers, plus names unique across both lists, no probes or lifecycle. */
export function validateInitContainers(containers: unknown, others: unknown, volumes: VolumeMap, field: string, opts: PodValidationOptions): FieldError[] {
  const all = objects(containers);
  const errs: FieldError[] = all.length > 0 ? validateContainers(all, true, volumes, field, opts) : [];
  const names = new Set(objects(others).map((c) => str(c['name'])));
  all.forEach((ctr, i) => {
    const p = `${field}[${i}]`;
    const name = str(ctr['name']);
    if (names.has(name)) errs.push(fieldErr.duplicate(`${p}.name`, name));
    if (name.length > 0) names.add(name);
    for (const k of ['lifecycle', 'livenessProbe', 'readinessProbe', 'startupProbe']) {
      if (isSet(ctr[k])) errs.push(fieldErr.invalid(`${p}.${k}`, ctr[k], 'must not be set for init containers'));
    }
  });
  return errs;
}

/** kube's `validateContainersOnlyForPod`: a pod's images have no surrounding whitespace. */
export function validateContainersOnlyForPod(containers: unknown, field: string): FieldError[] {
  const errs: FieldError[] = [];
  objects(containers).forEach((c, i) => {
    const image = str(c['image']);
    if (image.length !== image.trim().length) errs.push(fieldErr.invalid(`${field}[${i}].image`, image, 'must not have leading or trailing whitespace'));
  });
  return errs;
}

/** Members of EphemeralContainerCommon an ephemeral container may not set, in kube's struct order. */
const EPHEMERAL_FORBIDDEN = ['ports', 'resources', 'livenessProbe', 'readinessProbe', 'startupProbe', 'lifecycle'];

/** Whether a member differs from its Go zero value (a struct of nil maps is zero; an empty list is not). */
function isNonZero(key: string, v: unknown): boolean {
  if (!isSet(v)) return false;
  if (key === 'resources') {
    const r = asObject(v) ?? {};
    return isSet(r['limits']) || isSet(r['requests']);
  }
  return true;
}

/** kube's `validateEphemeralContainers`. Each is validated as a one-element container list, so paths read `[i][0]`. */
export function validateEphemeralContainers(ephemeral: unknown, containers: unknown, initContainers: unknown, volumes: VolumeMap, field: string, opts: PodValidationOptions): FieldError[] {
  const all = objects(ephemeral);
  if (all.length === 0) return [];
  const errs: FieldError[] = [];
  const names = new Set<string>([...objects(containers), ...objects(initContainers)].map((c) => str(c['name'])));
  all.forEach((ec, i) => {
    const p = `${field}[${i}]`;
    const target = str(ec['targetContainerName']);
    if (target !== '' && !names.has(target)) errs.push(fieldErr.notFound(`${p}.targetContainerName`, target));
    const name = str(ec['name']);
    if (name === '') {
      errs.push(fieldErr.required(p, 'ephemeralContainer requires a name'));
      return;
    }
    errs.push(...validateContainers([ec], false, volumes, p, opts));
    errs.push(...validateContainersOnlyForPod([ec], p));
    if (names.has(name)) errs.push(fieldErr.duplicate(`${p}.name`, name));
    else names.add(name);
    for (const k of EPHEMERAL_FORBIDDEN) if (isNonZero(k, ec[k])) errs.push(fieldErr.forbidden(`${p}.${k}`, 'cannot be set for an Ephemeral Container'));
    objects(ec['volumeMounts']).forEach((vm, j) => {
      if (str(vm['subPath']) !== '') errs.push(fieldErr.forbidden(`${p}.volumeMounts[${j}].subPath`, 'cannot be set for an Ephemeral Container'));
      if (str(vm['subPathExpr']) !== '') errs.push(fieldErr.forbidden(`${p}.volumeMounts[${j}].subPathExpr`, 'cannot be set for an Ephemeral Container'));
    });
  });
  return errs;
}
