/** What every resource handler needs: the resolved target, its store, the user and namespace. */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Catalog, ResourceDefinition } from '@plinth/api';
import type { ResourceStore, RequestScope } from '../registry/store.js';
import type { RequestInfo } from '../request-info.js';
import type { FeatureGates } from '../features.js';
import type { ResourceTarget } from './target.js';

export interface ResourceRequest {
  req: IncomingMessage;
  res: ServerResponse;
  info: RequestInfo;
  query: URLSearchParams;
  /** What the path addresses: act on its namespace and name, never on `info`'s (see target.ts). */
  target: ResourceTarget;
  def: ResourceDefinition;
  store: ResourceStore;
  scope: RequestScope;
  catalog: Catalog;
  /** The server's feature gates (`--feature-gates`). */
  features: FeatureGates;
  /** kube's --min-request-timeout (seconds): a watch without timeoutSeconds lasts [min, 2×min); 0: until it ends. */
  minRequestTimeoutSeconds: number;
}
