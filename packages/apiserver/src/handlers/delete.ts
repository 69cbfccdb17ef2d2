/** DELETE of one object, and of a collection (deletecollection). */
import { servesProtobuf } from '../protobuf/codec.js';
import { badRequest, fieldErr, invalid, isPlainObject, successStatus, type FieldError } from '@plinth/api';
import type { Preconditions } from '@plinth/storage';
import { negotiate, bodyEncoding } from '../negotiation.js';
import { parseBody, readBody, writeObject } from '../http.js';
import { parseDryRun, parseListOptions } from './options.js';
import type { ResourceRequest } from './scope.js';
import { auditRequestObject } from '../audit/filter.js';

interface DeleteOptionsBody {
  preconditions?: Preconditions;
  dryRun: boolean;
  propagationPolicy?: string;
}

const PROPAGATION = ['Foreground', 'Background', 'Orphan'];

/** Reads DeleteOptions from the body (optional) and the query, validated as kube does. */
async function readDeleteOptions(r: ResourceRequest): Promise<DeleteOptionsBody> {
  let dryRun = parseDryRun(r.query, 'DeleteOptions');
  const out: DeleteOptionsBody = { dryRun };
  const body = await readBody(r.req);
  const errs: FieldError[] = [];
  if (body.length > 0 && body.toString('utf8').trim() !== '') {
    const raw = await parseBody(body, bodyEncoding(r.req.headers['content-type']));
    if (!isPlainObject(raw)) throw badRequest('the object provided is unrecognized: expected DeleteOptions');
    auditRequestObject(r.req, raw);
    if (raw['kind'] !== undefined && raw['kind'] !== 'DeleteOptions') {
      throw badRequest(`${String(raw['kind'])} in version "${String(raw['apiVersion'] ?? '')}" cannot be handled as a DeleteOptions`);
    }
    const pre = raw['preconditions'];
    if (isPlainObject(pre)) {
      const p: Preconditions = {};
      if (typeof pre['uid'] === 'string' && pre['uid']) p.uid = pre['uid'];
      if (typeof pre['resourceVersion'] === 'string' && pre['resourceVersion']) p.resourceVersion = pre['resourceVersion'];
      out.preconditions = p;
    }
    const dr = raw['dryRun'];
    if (Array.isArray(dr) && dr.length > 0) {
      if (dr.length === 1 && dr[0] === 'All') dryRun = true;
      else errs.push(fieldErr.notSupported('dryRun', dr, ['All']));
    }
    if (typeof raw['propagationPolicy'] === 'string') out.propagationPolicy = raw['propagationPolicy'];
    if (raw['orphanDependents'] !== undefined && raw['propagationPolicy'] !== undefined) {
      errs.push(fieldErr.invalid('propagationPolicy', raw['propagationPolicy'], 'orphanDependents and deletionPropagation cannot be both set'));
    }
  }
  const qp = r.query.get('propagationPolicy');
  if (qp) out.propagationPolicy = qp;
  if (out.propagationPolicy !== undefined && !PROPAGATION.includes(out.propagationPolicy)) {
    errs.push(fieldErr.notSupported('propagationPolicy', out.propagationPolicy, [...PROPAGATION, 'nil']));
  }
  if (errs.length > 0) throw invalid({ group: 'meta.k8s.io', kind: 'DeleteOptions' }, '', errs);
  out.dryRun = dryRun;
  return out;
}

export async function handleDelete(r: ResourceRequest): Promise<void> {
  const format = negotiate(r.req.headers.accept, { allowTable: false, allowProtobuf: servesProtobuf(r.def) });
  const opts = await readDeleteOptions(r);
  const { result } = await r.store.delete(r.scope, r.target.name, {
    dryRun: opts.dryRun,
    ...(opts.preconditions ? { preconditions: opts.preconditions } : {}),
    propagationPolicy: opts.propagationPolicy,
  });
  writeObject(r.req, r.res, r.query, 200, result, format);
}

export async function handleDeleteCollection(r: ResourceRequest): Promise<void> {
  const format = negotiate(r.req.headers.accept, { allowTable: false, allowProtobuf: servesProtobuf(r.def) });
  const opts = await readDeleteOptions(r);
  const listOpts = parseListOptions(r.def, r.query, false);
  await r.store.deleteCollection(r.scope, listOpts, { dryRun: opts.dryRun, propagationPolicy: opts.propagationPolicy });
  writeObject(r.req, r.res, r.query, 200, successStatus(), format);
}
