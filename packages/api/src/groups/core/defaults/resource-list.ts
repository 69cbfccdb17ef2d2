/** kube's `SetDefaults_ResourceList`: every quantity rounded up to a whole milli-unit, in canonical form. */
import { Scale, decodeQuantity } from '../../../quantity.js';
import { asObject } from '../validation/access.js';

/** In place; an entry that does not decode is left for the decoder's or validation's error. */
export function setDefaultsResourceList(list: unknown): void {
  const o = asObject(list);
  if (!o) return;
  for (const [k, v] of Object.entries(o)) {
    try {
      o[k] = decodeQuantity(v).roundUp(Scale.Milli).toString();
    } catch {
      // Left as is.
    }
  }
}
