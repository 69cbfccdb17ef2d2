/**
 * kube's `SetDefaults_ResourceList`: every quantity rounded up to a whole milli-unit.
 * QUANTITY-PENDING: waits for `quantity.ts` (another helper's work on issue 24).
 */
export function setDefaultsResourceList(_list: unknown): void {}
