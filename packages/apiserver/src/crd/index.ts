/** Serving CustomResourceDefinitions and their custom resources (kube's apiextensions-apiserver). */
export { createCustomResourceControllers, type CustomResourceControllers, type CustomResourceControllerDeps } from './controller.js';
export { withCustomResources, type CustomResourceHandlerDeps } from './handler.js';
export { buildCustomResourceDefinitions, customResourceInfo, scaleKind } from './definitions.js';
export { CLEANUP_FINALIZER } from './types.js';

import type { Controller } from '../config.js';
import { createCustomResourceControllers as create, type CustomResourceControllerDeps as Deps } from './controller.js';

/**
 * What a server config runs for CRDs: a post-start hook that starts the controllers and waits
 * until the CRDs present at start are served (kube's `crd-informer-synced`), the controller entry
 * that stops them, and the leader's share (status, finalization).
 */
export function customResourceComponents(deps: Deps): { postStartHook: { name: string; run(): Promise<void> }; controller: Controller; singleton: Controller } {
  const controllers = create(deps);
  return {
    postStartHook: { name: 'crd-informer-synced', run: () => controllers.start() },
    controller: { name: 'apiextensions', start: () => () => controllers.stop() },
    singleton: { name: 'apiextensions-status', start: () => controllers.lead() },
  };
}
