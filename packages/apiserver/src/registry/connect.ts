/**
 * Connecters: what answers a sub-resource that is neither a part of its parent's object nor a kind
 * of its own to create (kube's rest.Connecter, and pods/log's streaming Getter). Each one gets the
 * request as the router resolved it and writes the answer itself: a stream, an upgrade refusal, a
 * proxied response. The catalog says which sub-resources are served this way
 * (`SubresourceDefinition.connect`); start-up fails if one has no connecter.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Catalog, ResourceDefinition, SubresourceDefinition, UserInfo, Verb } from '@plinth/api';
import type { ResourceStore } from './store.js';

export interface ConnectRequest {
  req: IncomingMessage;
  res: ServerResponse;
  query: URLSearchParams;
  catalog: Catalog;
  /** The parent resource and its store (the object the sub-resource belongs to). */
  def: ResourceDefinition;
  store: ResourceStore;
  subresource: SubresourceDefinition;
  /** The request's verb (`get` for GET and HEAD, `create` for POST, ...), one of the sub-resource's verbs. */
  verb: Verb;
  user: UserInfo;
  /** '' for a cluster-scoped parent. */
  namespace: string;
  name: string;
  /**
   * What follows the sub-resource in the path, unescaped segment by segment and joined with `/`
   * ('' when nothing does; a trailing slash is kept as a trailing empty segment). Only for a
   * sub-resource whose route takes a path (`connect.path`).
   */
  path: string;
}

/** Answers one request to a connect sub-resource. Errors thrown are answered as Status. */
export type Connecter = (r: ConnectRequest) => Promise<void>;

/** The connecter of each connect sub-resource. */
export type Connecters = ReadonlyMap<SubresourceDefinition, Connecter>;
