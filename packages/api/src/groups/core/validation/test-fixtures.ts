/**
 * Shared fixtures of the pod validation unit tests: a valid, defaulted pod to mutate, and the
 * causes as a 422 lists them. Not used at run time.
 */
import { type FieldError, fieldErrorBody } from '../../../field-errors.js';
import type { JsonObject } from './access.js';
import { type PodValidationOptions, defaultPodValidationOptions } from './pod-options.js';

/** [reason, field, message] as the 422's causes list them. */
export type Cause = [string, string, string];

export function causes(errs: FieldError[]): Cause[] {
  return errs.map((e) => [e.type, e.field, fieldErrorBody(e)]);
}

/** A container as kube stores it after defaulting. */
export function containerFixture(name = 'c', image = 'nginx:1.21'): JsonObject {
  return { name, image, imagePullPolicy: 'IfNotPresent', terminationMessagePath: '/dev/termination-log', terminationMessagePolicy: 'File' };
}

/** A pod as kube stores it after defaulting: valid, one container. */
export function podFixture(spec: JsonObject = {}): JsonObject {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'p', namespace: 'ns' },
    spec: {
      containers: [containerFixture()],
      restartPolicy: 'Always',
      terminationGracePeriodSeconds: 30,
      dnsPolicy: 'ClusterFirst',
      securityContext: {},
      schedulerName: 'default-scheduler',
      enableServiceLinks: true,
      ...spec,
    },
  };
}

/** The pod's spec, to mutate. */
export function specOf(pod: JsonObject): JsonObject {
  return pod['spec'] as JsonObject;
}

/** The pod's first container, to mutate. */
export function firstContainer(pod: JsonObject): JsonObject {
  return (specOf(pod)['containers'] as JsonObject[])[0]!;
}

/** Options as a 1.24 create computes them. */
export function createOptions(overrides: Partial<PodValidationOptions> = {}): PodValidationOptions {
  return { ...defaultPodValidationOptions(), ...overrides };
}

export const DNS_LABEL_MSG =
  "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";
export const DNS_SUBDOMAIN_MSG =
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
export const QUALIFIED_NAME_MSG =
  "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";
