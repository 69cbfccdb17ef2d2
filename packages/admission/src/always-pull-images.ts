/**
 * kube's AlwaysPullImages plugin (plugin/pkg/admission/alwayspullimages, 1.24), off by default:
 * every container of a created pod, or of an updated pod that names an image it did not have,
 * gets `imagePullPolicy: Always`, so a node's cached image is never used without the registry's
 * say. Validation refuses such a pod whose policy a later plugin changed back.
 */
import { fieldErr, fieldErrorString, StatusError } from '@plinth/api';
import type { AdmissionAttributes, AdmissionPlugin } from './interfaces.js';
import { admissionForbidden, isMainResource } from './forbidden.js';
import { containersWithPath, podSpecOf } from './pod-access.js';

function imagesOf(attrs: AdmissionAttributes, which: 'object' | 'oldObject'): string[] {
  const pod = attrs[which];
  return pod ? containersWithPath(podSpecOf(pod)).map(({ container }) => String(container['image'] ?? '')) : [];
}

/** kube's shouldIgnore: other resources, sub-resources, and updates that bring no new image. */
function ignores(attrs: AdmissionAttributes): boolean {
  if (!isMainResource(attrs, '', 'pods') || !attrs.object) return true;
  if (attrs.operation !== 'UPDATE' || !attrs.oldObject) return false;
  const old = new Set(imagesOf(attrs, 'oldObject'));
  return imagesOf(attrs, 'object').every((image) => old.has(image));
}

export function createAlwaysPullImages(): AdmissionPlugin {
  return {
    name: 'AlwaysPullImages',
    handles: (op) => op === 'CREATE' || op === 'UPDATE',
    admit(attrs) {
      if (ignores(attrs)) return;
      for (const { container } of containersWithPath(podSpecOf(attrs.object!))) container['imagePullPolicy'] = 'Always';
    },
    validate(attrs) {
      if (ignores(attrs)) return;
      const errs: string[] = [];
      for (const { container, path } of containersWithPath(podSpecOf(attrs.object!))) {
        const policy = container['imagePullPolicy'];
        if (policy !== 'Always') errs.push(admissionForbidden(attrs, fieldErrorString(fieldErr.notSupported(`${path}.imagePullPolicy`, policy ?? '', ['Always']))).message);
      }
      if (errs.length === 0) return;
      // kube returns a plain aggregate of Forbidden errors here, which its handler answers as a
      // 500 with no reason.
      const unique = [...new Set(errs)];
      throw new StatusError({ code: 500, reason: '', message: unique.length === 1 ? unique[0]! : `[${unique.join(', ')}]` });
    },
  };
}
