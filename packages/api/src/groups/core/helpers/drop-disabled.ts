/**
 * kube 1.24's `DropDisabledPodFields`/`DropDisabledTemplateFields` (pkg/api/pod) with 1.24's
 * default feature gates: fields of features that are off are cleared unless the old object
 * already uses them. Off in 1.24: ProbeTerminationGracePeriod (probe-level grace periods),
 * ProcMountType (procMount is forced to Default), MinDomainsInPodTopologySpread (minDomains).
 */
import { type JsonObject, asObject, isSet, objects, str, visitContainersWithPath } from '../validation/access.js';

function someContainer(spec: JsonObject | undefined, test: (c: JsonObject) => boolean): boolean {
  if (!spec) return false;
  let found = false;
  visitContainersWithPath(spec, 'spec', (c) => {
    if (!found && test(c)) found = true;
  });
  return found;
}

function probeGracePeriodInUse(spec: JsonObject | undefined): boolean {
  return someContainer(spec, (c) => ['livenessProbe', 'startupProbe'].some((k) => isSet(asObject(c[k])?.['terminationGracePeriodSeconds'])));
}

function procMountInUse(spec: JsonObject | undefined): boolean {
  return someContainer(spec, (c) => {
    const pm = asObject(c['securityContext'])?.['procMount'];
    return isSet(pm) && str(pm) !== 'Default';
  });
}

function minDomainsInUse(spec: JsonObject | undefined): boolean {
  return objects(spec?.['topologySpreadConstraints']).some((c) => isSet(c['minDomains']));
}

/** Clears, in `spec`, what 1.24's disabled gates drop unless `oldSpec` uses it. */
export function dropDisabledSpecFields(spec: JsonObject, oldSpec: JsonObject | undefined): void {
  if (!probeGracePeriodInUse(oldSpec)) {
    visitContainersWithPath(spec, 'spec', (c) => {
      for (const k of ['livenessProbe', 'startupProbe']) {
        const probe = asObject(c[k]);
        if (probe) delete probe['terminationGracePeriodSeconds'];
      }
    });
  }
  if (!procMountInUse(oldSpec)) {
    // kube forces Default rather than nil: nil would differ from what older servers stored.
    visitContainersWithPath(spec, 'spec', (c) => {
      const sc = asObject(c['securityContext']);
      if (sc && isSet(sc['procMount'])) sc['procMount'] = 'Default';
    });
  }
  if (!minDomainsInUse(oldSpec)) {
    for (const c of objects(spec['topologySpreadConstraints'])) delete c['minDomains'];
  }
}

/** kube's `DropDisabledPodFields(pod, oldPod)`, in place (`old` undefined on create). */
export function dropDisabledPodFields(pod: JsonObject, old?: JsonObject): void {
  const spec = asObject(pod['spec']);
  if (spec) dropDisabledSpecFields(spec, asObject(old?.['spec']));
}

/** kube's `DropDisabledTemplateFields(template, oldTemplate)` over PodTemplateSpecs, in place. */
export function dropDisabledTemplateFields(template: unknown, oldTemplate?: unknown): void {
  const spec = asObject(asObject(template)?.['spec']);
  if (spec) dropDisabledSpecFields(spec, asObject(asObject(oldTemplate)?.['spec']));
}
