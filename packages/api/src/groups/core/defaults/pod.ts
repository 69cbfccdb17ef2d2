/**
 * kube 1.24's defaulting of pods, pod templates and replication controllers: the generated call
 * tree (zz_generated.defaults.go SetObjectDefaults_Pod/PodTemplate/ReplicationController) over the
 * rules of pkg/apis/core/v1/defaults.go, applied in place to decoded v1 JSON.
 */
import { type JsonObject, asObject, bool, num, str } from '../validation/access.js';
import { imageTag } from './image.js';
import { defaultNil, defaultZero, eachObject, withObject } from './pod-json.js';
import { setDefaultsResourceList } from './resource-list.js';
import { setDefaultsVolume } from './volumes.js';

export const DEFAULT_TERMINATION_GRACE_PERIOD_SECONDS = 30;
export const DEFAULT_SCHEDULER_NAME = 'default-scheduler';
export const TERMINATION_MESSAGE_PATH_DEFAULT = '/dev/termination-log';

/** SetDefaults_HTTPGetAction. */
function setDefaultsHTTPGet(h: JsonObject): void {
  defaultZero(h, 'path', '/');
  defaultZero(h, 'scheme', 'HTTP');
}

/** SetDefaults_Probe and its handler's defaults. */
function setDefaultsProbe(p: JsonObject): void {
  defaultZero(p, 'timeoutSeconds', 1);
  defaultZero(p, 'periodSeconds', 10);
  defaultZero(p, 'successThreshold', 1);
  defaultZero(p, 'failureThreshold', 3);
  withObject(p, 'httpGet', setDefaultsHTTPGet);
  withObject(p, 'grpc', (g) => defaultNil(g, 'service', ''));
}

/** SetDefaults_Container: pull policy by tag (`Always` for `latest` or no tag), termination message. */
export function setDefaultsContainer(c: JsonObject): void {
  if (str(c['imagePullPolicy']) === '') c['imagePullPolicy'] = imageTag(str(c['image'])) === 'latest' ? 'Always' : 'IfNotPresent';
  defaultZero(c, 'terminationMessagePath', TERMINATION_MESSAGE_PATH_DEFAULT);
  defaultZero(c, 'terminationMessagePolicy', 'File');
}

/** A container's whole default tree (containers, init and ephemeral containers alike). */
function setDefaultsContainerTree(c: JsonObject): void {
  setDefaultsContainer(c);
  eachObject(c, 'ports', (p) => defaultZero(p, 'protocol', 'TCP'));
  eachObject(c, 'env', (e) => withObject(e, 'valueFrom', (from) => withObject(from, 'fieldRef', (ref) => defaultZero(ref, 'apiVersion', 'v1'))));
  const resources = asObject(c['resources']);
  if (resources) {
    setDefaultsResourceList(resources['limits']);
    setDefaultsResourceList(resources['requests']);
  }
  for (const k of ['livenessProbe', 'readinessProbe', 'startupProbe']) withObject(c, k, setDefaultsProbe);
  withObject(c, 'lifecycle', (l) => {
    for (const hook of ['postStart', 'preStop']) withObject(l, hook, (h) => withObject(h, 'httpGet', setDefaultsHTTPGet));
  });
}

/** With hostNetwork, an unset hostPort takes the containerPort (defaultHostNetworkPorts). */
function defaultHostNetworkPorts(spec: JsonObject, key: 'containers' | 'initContainers'): void {
  eachObject(spec, key, (c) =>
    eachObject(c, 'ports', (p) => {
      if (num(p['hostPort']) === 0) p['hostPort'] = p['containerPort'] ?? 0;
    }),
  );
}

/** SetDefaults_PodSpec. */
export function setDefaultsPodSpec(spec: JsonObject): void {
  defaultZero(spec, 'dnsPolicy', 'ClusterFirst');
  defaultZero(spec, 'restartPolicy', 'Always');
  if (bool(spec['hostNetwork'])) {
    defaultHostNetworkPorts(spec, 'containers');
    defaultHostNetworkPorts(spec, 'initContainers');
  }
  defaultNil(spec, 'securityContext', {});
  defaultNil(spec, 'terminationGracePeriodSeconds', DEFAULT_TERMINATION_GRACE_PERIOD_SECONDS);
  defaultZero(spec, 'schedulerName', DEFAULT_SCHEDULER_NAME);
}

/** The generated tree under a PodSpec: SetDefaults_PodSpec, volumes, every container, overhead. */
export function setDefaultsPodSpecTree(spec: JsonObject): void {
  setDefaultsPodSpec(spec);
  eachObject(spec, 'volumes', setDefaultsVolume);
  eachObject(spec, 'initContainers', setDefaultsContainerTree);
  eachObject(spec, 'containers', setDefaultsContainerTree);
  eachObject(spec, 'ephemeralContainers', setDefaultsContainerTree);
  setDefaultsResourceList(spec['overhead']);
}

/** SetDefaults_Pod: requests default to limits (containers and init containers), service links on. */
function setDefaultsPodOnly(spec: JsonObject): void {
  for (const key of ['containers', 'initContainers']) {
    eachObject(spec, key, (c) => {
      const resources = asObject(c['resources']);
      const limits = asObject(resources?.['limits']);
      // An empty limits map changes nothing (Go would add an empty requests map, which encodes to nothing).
      if (!resources || !limits || Object.keys(limits).length === 0) return;
      const requests = asObject(resources['requests']) ?? {};
      for (const [name, q] of Object.entries(limits)) if (!Object.hasOwn(requests, name)) requests[name] = q;
      resources['requests'] = requests;
    });
  }
  defaultNil(spec, 'enableServiceLinks', true);
}

/** kube's SetObjectDefaults_Pod. */
export function setDefaultsPod(pod: JsonObject): void {
  if (!asObject(pod['spec'])) pod['spec'] = {};
  const spec = pod['spec'] as JsonObject;
  setDefaultsPodOnly(spec);
  setDefaultsPodSpecTree(spec);
}

/** kube's SetObjectDefaults_PodTemplate: the spec tree only (no SetDefaults_Pod). */
export function setDefaultsPodTemplate(podTemplate: JsonObject): void {
  if (!asObject(podTemplate['template'])) podTemplate['template'] = {};
  const template = podTemplate['template'] as JsonObject;
  if (!asObject(template['spec'])) template['spec'] = {};
  setDefaultsPodSpecTree(template['spec'] as JsonObject);
}

/**
 * kube's SetObjectDefaults_ReplicationController: selector and labels from the template's labels
 * when empty, one replica, then the template's spec tree.
 */
export function setDefaultsReplicationController(rc: JsonObject): void {
  if (!asObject(rc['spec'])) rc['spec'] = {};
  const spec = rc['spec'] as JsonObject;
  const template = asObject(spec['template']);
  const labels = asObject(asObject(template?.['metadata'])?.['labels']);
  if (labels) {
    if (Object.keys(asObject(spec['selector']) ?? {}).length === 0) spec['selector'] = { ...labels };
    if (!asObject(rc['metadata'])) rc['metadata'] = {};
    const meta = rc['metadata'] as JsonObject;
    if (Object.keys(asObject(meta['labels']) ?? {}).length === 0) meta['labels'] = { ...labels };
  }
  defaultNil(spec, 'replicas', 1);
  if (template) {
    if (!asObject(template['spec'])) template['spec'] = {};
    setDefaultsPodSpecTree(template['spec'] as JsonObject);
  }
}
