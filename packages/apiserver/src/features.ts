/**
 * Feature gates (kube's component-base featuregate): a table of known gates with their stage,
 * default and lock, and `--feature-gates` validated against it. Components read a gate through
 * `FeatureGates.enabled(name)` on the completed options — never from a global.
 */

export type FeatureStage = 'ALPHA' | 'BETA' | 'GA' | 'DEPRECATED';

export interface FeatureSpec {
  stage: FeatureStage;
  default: boolean;
  /** A locked gate cannot be set to anything but its default. */
  lockToDefault?: boolean;
  /** False: declared (accepted, listed) but plinth does not change behaviour on it. */
  implemented: boolean;
}

/** The gates plinth knows, by kube's name (kube 1.24's stages and defaults). */
export const FEATURE_GATES = {
  APIListChunking: { stage: 'BETA', default: true, implemented: true },
  APIPriorityAndFairness: { stage: 'BETA', default: true, implemented: true },
  ServerSideApply: { stage: 'GA', default: true, implemented: true },
  ServerSideFieldValidation: { stage: 'ALPHA', default: false, implemented: true },
  WatchBookmark: { stage: 'GA', default: true, lockToDefault: true, implemented: true },
  /** plinth's own: consistent reads (resourceVersion unset) answered from the watch cache. */
  ConsistentListFromCache: { stage: 'BETA', default: true, implemented: true },
} satisfies Record<string, FeatureSpec>;

export type FeatureName = keyof typeof FEATURE_GATES;

/** The effective value of every known gate. */
export class FeatureGates {
  readonly #values: Map<string, boolean>;

  constructor(values: ReadonlyMap<string, boolean> = new Map()) {
    this.#values = new Map(values);
  }

  enabled(name: FeatureName): boolean {
    return this.#values.get(name) ?? (FEATURE_GATES[name] as FeatureSpec).default;
  }
}

/**
 * Validates `--feature-gates` values against the table: unknown gates and a locked gate set away
 * from its default are errors; `warn` receives kube's warnings (GA or deprecated gates set).
 */
export function featureGatesFrom(given: Record<string, boolean>, errs: string[], warn: (msg: string) => void): FeatureGates {
  const values = new Map<string, boolean>();
  for (const [name, value] of Object.entries(given)) {
    const spec = (FEATURE_GATES as Record<string, FeatureSpec>)[name];
    if (!spec) {
      errs.push(`unrecognized feature gate: ${name}`);
      continue;
    }
    if (spec.lockToDefault && value !== spec.default) {
      errs.push(`cannot set feature gate ${name} to ${value}, feature is locked to ${spec.default}`);
      continue;
    }
    if (spec.stage === 'GA') warn(`Setting GA feature gate ${name}=${value}. It will be removed in a future release.`);
    else if (spec.stage === 'DEPRECATED') warn(`Setting deprecated feature gate ${name}=${value}. It will be removed in a future release.`);
    values.set(name, value);
  }
  return new FeatureGates(values);
}
