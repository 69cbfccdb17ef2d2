/** DELETE of one object, and of a collection (deletecollection). */
import { servesProtobuf } from '../protobuf/codec.js';
import { badRequest, fieldErr, invalid, isPlainObject, type FieldError } from '@plinth/api';
import type { Preconditions } from '@plinth/storage';
import { negotiate, bodyEncoding } from '../negotiation.js';
import { parseBody, readBody, writeObject } from '../http.js';
import { dryRunNotSupported, parseListOptions } from './options.js';
import type { ResourceRequest } from './scope.js';
import { auditRequestObject } from '../audit/filter.js';
import type { DeleteOptions, PropagationPolicy } from '../registry/delete.js';

const PROPAGATION: readonly string[] = ['Foreground', 'Background', 'Orphan'];
const DELETE_OPTIONS_KIND = { group: 'meta.k8s.io', kind: 'DeleteOptions' };

/** DeleteOptions as decoded, before kube's ValidateDeleteOptions. */
interface RawDeleteOptions {
  gracePeriodSeconds?: number;
  preconditions?: Preconditions;
  orphanDependents?: boolean;
  propagationPolicy?: string;
  dryRun?: string[];
}

/** kube's JSON decoding error for a member of the wrong type (400). */
function wrongType(field: string, got: unknown, goType: string): never {
  const what = got === null ? 'null' : Array.isArray(got) ? 'array' : typeof got === 'object' ? 'object' : typeof got;
  throw badRequest(`json: cannot unmarshal ${what} into Go struct field DeleteOptions.${field} of type ${goType}`);
}

/** A DeleteOptions body (JSON, YAML or Protobuf; any group's version of the kind). */
function fromBody(raw: unknown): RawDeleteOptions {
  if (!isPlainObject(raw)) throw badRequest('the object provided is unrecognized: expected DeleteOptions');
  if (raw['kind'] !== undefined && raw['kind'] !== 'DeleteOptions') {
    throw badRequest(`${String(raw['kind'])} in version "${String(raw['apiVersion'] ?? '')}" cannot be handled as a DeleteOptions`);
  }
  const out: RawDeleteOptions = {};
  const grace = raw['gracePeriodSeconds'];
  if (grace !== undefined && grace !== null) {
    const n = typeof grace === 'bigint' ? Number(grace) : grace;
    if (typeof n !== 'number' || !Number.isInteger(n)) wrongType('gracePeriodSeconds', grace, 'int64');
    out.gracePeriodSeconds = n;
  }
  const pre = raw['preconditions'];
  if (pre !== undefined && pre !== null) {
    if (!isPlainObject(pre)) wrongType('preconditions', pre, 'v1.Preconditions');
    const p: Preconditions = {};
    for (const f of ['uid', 'resourceVersion'] as const) {
      const v = pre[f];
      if (v === undefined || v === null) continue;
      if (typeof v !== 'string') wrongType(`preconditions.${f}`, v, 'string');
      p[f] = v;
    }
    out.preconditions = p;
  }
  const orphan = raw['orphanDependents'];
  if (orphan !== undefined && orphan !== null) {
    if (typeof orphan !== 'boolean') wrongType('orphanDependents', orphan, 'bool');
    out.orphanDependents = orphan;
  }
  const policy = raw['propagationPolicy'];
  if (policy !== undefined && policy !== null) {
    if (typeof policy !== 'string') wrongType('propagationPolicy', policy, 'v1.DeletionPropagation');
    out.propagationPolicy = policy;
  }
  const dryRun = raw['dryRun'];
  if (dryRun !== undefined && dryRun !== null) {
    if (!Array.isArray(dryRun) || dryRun.some((v) => typeof v !== 'string')) wrongType('dryRun', dryRun, '[]string');
    out.dryRun = dryRun as string[];
  }
  return out;
}

/**
 * DeleteOptions from the query, as kube's parameter codec reads them: the first value of each;
 * `orphanDependents` is false only for "false" (any case) or "0"; a present but empty
 * `propagationPolicy` is the empty policy (then invalid).
 */
function fromQuery(query: URLSearchParams): RawDeleteOptions {
  const out: RawDeleteOptions = {};
  const grace = query.get('gracePeriodSeconds');
  if (grace !== null) {
    if (!/^[+-]?\d+$/.test(grace)) throw badRequest(`strconv.ParseInt: parsing ${JSON.stringify(grace)}: invalid syntax`);
    const n = BigInt(grace);
    if (n < -(2n ** 63n) || n > 2n ** 63n - 1n) throw badRequest(`strconv.ParseInt: parsing ${JSON.stringify(grace)}: value out of range`);
    out.gracePeriodSeconds = Number(n);
  }
  const orphan = query.get('orphanDependents');
  if (orphan !== null) out.orphanDependents = !(orphan === '0' || orphan.toLowerCase() === 'false');
  const policy = query.get('propagationPolicy');
  if (policy !== null) out.propagationPolicy = policy;
  const dryRun = query.getAll('dryRun');
  if (dryRun.length > 0) out.dryRun = dryRun;
  return out;
}

/** kube's ValidateDeleteOptions (422 naming the kind meta.k8s.io DeleteOptions). */
function validate(o: RawDeleteOptions): DeleteOptions {
  const errs: FieldError[] = [];
  if (o.orphanDependents !== undefined && o.propagationPolicy !== undefined) {
    errs.push(fieldErr.invalid('propagationPolicy', o.propagationPolicy, 'orphanDependents and deletionPropagation cannot be both set'));
  }
  if (o.propagationPolicy !== undefined && !PROPAGATION.includes(o.propagationPolicy)) {
    errs.push(fieldErr.notSupported('propagationPolicy', o.propagationPolicy, [...PROPAGATION, 'nil']));
  }
  // kube's ValidateDryRun: "All" alone; an empty value (`?dryRun=`) is refused too.
  const dryRun = o.dryRun ?? [];
  if (dryRun.some((v) => v !== 'All')) errs.push(dryRunNotSupported(dryRun));
  if (errs.length > 0) throw invalid(DELETE_OPTIONS_KIND, '', errs);
  const out: DeleteOptions = { dryRun: dryRun.length > 0 };
  if (o.gracePeriodSeconds !== undefined) out.gracePeriodSeconds = o.gracePeriodSeconds;
  if (o.preconditions) out.preconditions = o.preconditions;
  if (o.orphanDependents !== undefined) out.orphanDependents = o.orphanDependents;
  if (o.propagationPolicy !== undefined) out.propagationPolicy = o.propagationPolicy as PropagationPolicy;
  return out;
}

/**
 * A DELETE's options, as kube's delete handlers read them: from the body when there is one
 * (then the query's options are not read at all), else from the query.
 */
async function readDeleteOptions(r: ResourceRequest): Promise<DeleteOptions> {
  const body = await readBody(r.req);
  if (body.length === 0) return validate(fromQuery(r.query));
  const raw = await parseBody(body, bodyEncoding(r.req.headers['content-type']));
  auditRequestObject(r.req, raw);
  return validate(fromBody(raw));
}

export async function handleDelete(r: ResourceRequest): Promise<void> {
  const format = negotiate(r.req.headers.accept, { allowTable: false, allowProtobuf: servesProtobuf(r.def) });
  const opts = await readDeleteOptions(r);
  const { result, deleted } = await r.store.delete(r.scope, r.target.name, opts);
  // kube answers 202 only when an object kept for now was deleted with orphanDependents=false
  // (its handler keeps 200 for every other pending deletion, for older clients).
  const code = !deleted && opts.orphanDependents === false ? 202 : 200;
  writeObject(r.req, r.res, r.query, code, result, format);
}

export async function handleDeleteCollection(r: ResourceRequest): Promise<void> {
  const format = negotiate(r.req.headers.accept, { allowTable: false, allowProtobuf: servesProtobuf(r.def) });
  const listOpts = parseListOptions(r.def, r.query, false);
  const opts = await readDeleteOptions(r);
  // kube answers with the list of what it deleted, as it read it.
  const list = await r.store.deleteCollection(r.scope, listOpts, opts);
  writeObject(r.req, r.res, r.query, 200, list, format);
}
