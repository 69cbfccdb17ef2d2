/**
 * The pod rules that read resource quantities. QUANTITY-PENDING: they wait for `quantity.ts` and
 * `resources.ts` (another helper's work on issue 24); until those land they accept everything.
 */
import type { FieldError } from '../../../field-errors.js';
import type { JsonObject } from './access.js';
import type { PodValidationOptions } from './pod-options.js';

/** kube's `validateContainerResourceDivisor`. QUANTITY-PENDING. */
export function validateContainerResourceDivisor(_resource: string, _divisor: unknown, _field: string): FieldError[] {
  return [];
}

/** pkg/api/pod `usesIndivisibleHugePagesValues`. QUANTITY-PENDING. */
export function usesIndivisibleHugePagesValues(_spec: JsonObject): boolean {
  return false;
}

/** kube's `ValidateResourceRequirements` of a container. QUANTITY-PENDING. */
export function validateContainerResources(_resources: unknown, _field: string, _opts: PodValidationOptions): FieldError[] {
  return [];
}

/** kube's `validateOverhead`. QUANTITY-PENDING. */
export function validateOverhead(_overhead: unknown, _field: string, _opts: PodValidationOptions): FieldError[] {
  return [];
}

/** The emptyDir sizeLimit rule of `validateVolumeSource`. QUANTITY-PENDING. */
export function validateEmptyDirSizeLimit(_sizeLimit: unknown, _field: string): FieldError[] {
  return [];
}

/** kube's `ValidatePersistentVolumeClaimSpec` (an ephemeral volume's claim template). PVC-SPEC-PENDING. */
export function validatePersistentVolumeClaimSpec(_spec: unknown, _field: string): FieldError[] {
  return [];
}
