/**
 * kube's AlwaysAdmit and AlwaysDeny plugins (plugin/pkg/admission/admit, .../deny): deprecated
 * test plugins, kept because kube still registers them in 1.24. Both mutating and validating.
 */
import { forbidden, groupResourceOf } from '@plinth/api';
import type { AdmissionAttributes, AdmissionPlugin } from './interfaces.js';

export const alwaysAdmit: AdmissionPlugin = {
  name: 'AlwaysAdmit',
  handles: () => true,
  admit() {},
  validate() {},
};

/** kube's admission.NewForbidden: the name from the attributes, else from the object. */
function deny(a: AdmissionAttributes): never {
  const name = a.name || a.object?.metadata.name || '';
  throw forbidden(groupResourceOf(a.resource), name, 'admission control is denying all modifications');
}

export const alwaysDeny: AdmissionPlugin = {
  name: 'AlwaysDeny',
  handles: () => true,
  admit: deny,
  validate: deny,
};
