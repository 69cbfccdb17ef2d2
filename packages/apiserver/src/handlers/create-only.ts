/**
 * POST to a create-only path — a resource that is not stored (tokenreviews) or a sub-resource of
 * its own kind (serviceaccounts/<name>/token): kube's create handler over a Creater that is no
 * registry.Store. The body is decoded into the path's kind (JSON, YAML or Protobuf), the create
 * options are validated as for any create, mutating admission runs, and the storage answers with
 * the object returned as 201 Created.
 */
import { servesProtobuf } from '../protobuf/codec.js';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { badRequest, type Catalog, type KindDefinition, type ResourceDefinition, type UserInfo } from '@plinth/api';
import { operationOptions, type AdmissionAttributes, type AdmissionChain } from '@plinth/admission';
import type { CreateOnlyStorage } from '../registry/create-only.js';
import { negotiate } from '../negotiation.js';
import { writeObject } from '../http.js';
import { parseDryRun, parseFieldManager } from './options.js';
import { readKind } from './body.js';

export interface CreateOnlyRequest {
  req: IncomingMessage;
  res: ServerResponse;
  query: URLSearchParams;
  catalog: Catalog;
  /** The resource of the path (what admission sees): tokenreviews, or serviceaccounts for its token. */
  resource: ResourceDefinition;
  subresource: string;
  /** The kind of the body and of the answer. */
  kind: KindDefinition;
  storage: CreateOnlyStorage;
  admission: AdmissionChain;
  user: UserInfo;
  namespace: string;
  /** The parent object's name for a sub-resource; '' for a collection. */
  name: string;
}

export async function handleCreateOnly(r: CreateOnlyRequest): Promise<void> {
  const format = negotiate(r.req.headers.accept, { allowTable: false, allowProtobuf: servesProtobuf(r.kind) });
  const dryRun = parseDryRun(r.query, 'CreateOptions');
  // Validated as for every create; nothing is stored, so no field is ever managed.
  parseFieldManager(r.query, r.req.headers['user-agent'], 'CreateOptions');
  const obj = await readKind(r.req, r.kind, r.catalog);
  // kube's EnsureObjectNamespaceMatchesRequestNamespace.
  const meta = obj.metadata;
  if (!r.resource.namespaced) delete meta.namespace;
  else if (!meta.namespace) meta.namespace = r.namespace;
  else if (meta.namespace !== r.namespace) throw badRequest('the namespace of the provided object does not match the namespace sent on the request');
  const attrs: AdmissionAttributes = {
    operation: 'CREATE',
    resource: r.resource,
    subresource: r.subresource,
    namespace: r.namespace,
    name: r.name,
    kind: { group: r.kind.group, version: r.kind.version, kind: r.kind.kind },
    object: obj,
    oldObject: undefined,
    options: operationOptions('CREATE', { dryRun, fieldManager: r.query.get('fieldManager') || undefined }),
    user: r.user,
    dryRun,
  };
  await r.admission.admit(attrs);
  const admitted = attrs.object ?? obj;
  const validate = (o: typeof obj): Promise<void> => r.admission.validate({ ...attrs, object: o });
  const out = await r.storage.create({ user: r.user, namespace: r.namespace, name: r.name, dryRun }, admitted, validate);
  writeObject(r.req, r.res, r.query, 201, out, format);
}
