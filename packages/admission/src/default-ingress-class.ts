/**
 * kube's DefaultIngressClass plugin (plugin/pkg/admission/network/defaultingressclass, 1.24): a
 * created Ingress with neither `spec.ingressClassName` nor the legacy `kubernetes.io/ingress.class`
 * annotation gets the IngressClass annotated `ingressclass.kubernetes.io/is-default-class: "true"`;
 * more than one such class refuses the Ingress.
 */
import type { StoredObject } from '@plinth/api';
import type { AdmissionPlugin } from './interfaces.js';
import { admissionForbidden, isMainResource } from './forbidden.js';

/** The IngressClasses as the informer has them, or as etcd has them now (`fresh`). */
export type IngressClassLister = (fresh?: boolean) => Promise<StoredObject[]>;

export const ANNOTATION_IS_DEFAULT_INGRESS_CLASS = 'ingressclass.kubernetes.io/is-default-class';
const ANNOTATION_INGRESS_CLASS = 'kubernetes.io/ingress.class';

export function createDefaultIngressClass(list: IngressClassLister): AdmissionPlugin {
  return {
    name: 'DefaultIngressClass',
    handles: (op) => op === 'CREATE',
    async admit(attrs) {
      if (!isMainResource(attrs, 'networking.k8s.io', 'ingresses') || !attrs.object) return;
      const ing = attrs.object;
      if (typeof ing['spec'] !== 'object' || ing['spec'] === null) ing['spec'] = {};
      const spec = ing['spec'] as Record<string, unknown>;
      if (spec['ingressClassName'] != null) return;
      if (ing.metadata.annotations && ANNOTATION_INGRESS_CLASS in ing.metadata.annotations) return;
      // Read consistently (ingress writes are rare): a default class created a moment ago counts.
      const defaults = (await list(true)).filter((c) => c.metadata.annotations?.[ANNOTATION_IS_DEFAULT_INGRESS_CLASS] === 'true');
      if (defaults.length === 0) return;
      // kube wraps an InternalError in the Forbidden: its text leads the reason.
      if (defaults.length > 1) throw admissionForbidden(attrs, `Internal error occurred: ${defaults.length} default IngressClasses were found, only 1 allowed`);
      spec['ingressClassName'] = defaults[0]!.metadata.name;
    },
  };
}
