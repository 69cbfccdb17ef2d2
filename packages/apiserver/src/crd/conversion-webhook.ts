/**
 * A CRD's conversion webhook (kube 1.24 apiextensions-apiserver `pkg/apiserver/conversion/
 * webhook_converter.go`): objects whose apiVersion differs from the desired one go to the webhook
 * in one ConversionReview (v1 or v1beta1, the first of the CRD's conversionReviewVersions plinth
 * knows); the answer is checked as kube checks it, and each converted object keeps the original's
 * metadata except labels and annotations. Failures are plain errors with kube's text (the client
 * gets them as a 500 with no reason, as kube's ErrorToAPIStatus does).
 */
import { randomUUID } from 'node:crypto';
import { postJSON } from '@plinth/admission';
import { StatusError, fieldErrorString, isPlainObject, validateAnnotations, validateLabels, type FieldError, type StoredObject } from '@plinth/api';

/** The CRD's `spec.conversion.webhook`, as stored (v1, defaulted). */
export interface ConversionWebhookConfig {
  url?: string;
  service?: { namespace: string; name: string; path?: string; port?: number };
  caBundle?: string;
  conversionReviewVersions: string[];
}

/** Where a service reference is served; throws kube's resolver error (`service "x" not found`, ...). */
export type ServiceResolver = (ref: { namespace: string; name: string; port: number }) => Promise<{ host: string; port: number }>;

/** One observation of apiserver_crd_webhook_conversion_duration_seconds. */
export type ConversionObserver = (labels: { crdName: string; fromVersion: string; toVersion: string; succeeded: boolean }, seconds: number) => void;

export interface ConversionWebhookDeps {
  crdName: string;
  config: ConversionWebhookConfig;
  resolveService?: ServiceResolver | undefined;
  observe?: ConversionObserver | undefined;
}

/** Converts custom resources between the versions of one CRD. */
export interface CustomResourceConverter {
  /**
   * `objs` as `desiredApiVersion` objects, in order: objects already there are returned as they
   * are, the others converted by one webhook call (none when nothing needs converting). Never
   * changes its input.
   */
  convert(objs: readonly StoredObject[], desiredApiVersion: string): Promise<StoredObject[]>;
}

/**
 * A conversion failure as the client gets it: kube returns the converter's plain error, which
 * ErrorToAPIStatus turns into a 500 with no reason and the error's text.
 */
const fail = (message: string): StatusError => new StatusError({ code: 500, reason: '', message });

/** kube's conversion webhook client timeout (not configurable for conversion). */
const TIMEOUT_SECONDS = 30;
const REVIEW_GROUP = 'apiextensions.k8s.io';

type Raw = Record<string, unknown>;

/** Go's `schema.GroupVersionKind` `%v`: `group/version, Kind=kind`. */
function gvkString(apiVersion: unknown, kind: unknown): string {
  const av = typeof apiVersion === 'string' ? apiVersion : '';
  const slash = av.indexOf('/');
  const [group, version] = slash >= 0 ? [av.slice(0, slash), av.slice(slash + 1)] : ['', av];
  return `${group}/${version}, Kind=${typeof kind === 'string' ? kind : ''}`;
}

/** Go's `schema.GroupVersion` `%v` of an apiVersion (`version` alone in the core group). */
const gvString = (apiVersion: unknown): string => (typeof apiVersion === 'string' ? apiVersion : '');

const versionOf = (apiVersion: unknown): string => {
  const av = typeof apiVersion === 'string' ? apiVersion : '';
  return av.slice(av.indexOf('/') + 1);
};

const metaOf = (o: Raw): Raw => (isPlainObject(o['metadata']) ? o['metadata'] : {});
const metaString = (o: Raw, k: string): string => {
  const v = metaOf(o)[k];
  return typeof v === 'string' ? v : '';
};

/** kube's validateConvertedObject. */
function identityError(orig: Raw, conv: Raw): string | undefined {
  const pairs: Array<[string, unknown, unknown]> = [
    ['kind', orig['kind'] ?? '', conv['kind'] ?? ''],
    ['name', metaString(orig, 'name'), metaString(conv, 'name')],
    ['namespace', metaString(orig, 'namespace'), metaString(conv, 'namespace')],
    ['UID', metaString(orig, 'uid'), metaString(conv, 'uid')],
  ];
  for (const [what, e, a] of pairs) if (e !== a) return `must have the same ${what}: ${String(e)} != ${String(a)}`;
  return undefined;
}

/** Go's `%T` of a decoded JSON value. */
function goType(v: unknown): string {
  if (v === null) return '<nil>';
  if (Array.isArray(v)) return '[]interface {}';
  switch (typeof v) {
    case 'string':
      return 'string';
    case 'boolean':
      return 'bool';
    case 'number':
      return Number.isInteger(v) ? 'int64' : 'float64';
    default:
      return 'map[string]interface {}';
  }
}

/** field.ErrorList.ToAggregate()'s text. */
function aggregate(errs: FieldError[]): string {
  const msgs = [...new Set(errs.map(fieldErrorString))];
  return msgs.length === 1 ? msgs[0]! : `[${msgs.join(', ')}]`;
}

/**
 * kube's restoreObjectMeta: the converted object gets the original's metadata, with the labels
 * and annotations the webhook returned (validated when changed). Other metadata changes are
 * dropped silently.
 */
function restoreObjectMeta(orig: Raw, conv: Raw): { obj: StoredObject } | { error: string } {
  const response = conv['metadata'];
  if (response === undefined) return { error: 'missing metadata in converted object' };
  if (!isPlainObject(response)) return { error: `invalid metadata of type ${goType(response)} in converted object` };
  const meta: Raw = structuredClone(metaOf(orig));
  for (const fld of ['labels', 'annotations'] as const) {
    const got = response[fld];
    if (got === undefined || got === null) {
      delete meta[fld];
      continue;
    }
    if (!isPlainObject(got)) return { error: `invalid metadata.${fld} of type ${goType(got)} in converted object` };
    const original = isPlainObject(meta[fld]) ? meta[fld] : {};
    let changed = Object.keys(original).length !== Object.keys(got).length;
    for (const [k, v] of Object.entries(got)) {
      if (typeof v !== 'string') return { error: `metadata.${fld}[${k}] must be a string, but is ${goType(v)} in converted object` };
      if (original[k] !== v) changed = true;
    }
    if (changed) {
      // kube validates the annotations under the path `metadata.annotation` (sic).
      const errs = fld === 'labels' ? validateLabels(got, 'metadata.labels') : validateAnnotations(got, 'metadata.annotation');
      if (errs.length > 0) return { error: aggregate(errs) };
    }
    meta[fld] = got;
  }
  return { obj: { ...conv, metadata: meta } as StoredObject };
}

/** The review version to send: the first of the CRD's list plinth speaks (kube's createConversionReviewObjects). */
function reviewVersionOf(versions: readonly string[]): 'v1' | 'v1beta1' {
  for (const v of versions) if (v === 'v1' || v === 'v1beta1') return v;
  throw new Error('no supported conversion review versions');
}

/** The URL kube's rest client posts to (client-go adds `?timeout=30s`). */
function addressOf(cfg: ConversionWebhookConfig): { url: string; service?: { namespace: string; name: string; port: number } } {
  const timeout = `?timeout=${TIMEOUT_SECONDS}s`;
  const svc = cfg.service;
  if (svc) {
    const port = svc.port ?? 443;
    const path = svc.path ? (svc.path.startsWith('/') ? svc.path : `/${svc.path}`) : '/';
    return { url: `https://${svc.name}.${svc.namespace}.svc:${port}${path}${timeout}`, service: { namespace: svc.namespace, name: svc.name, port } };
  }
  const u = new URL(cfg.url ?? '');
  return { url: `${u.protocol}//${u.host}${u.pathname}${timeout}` };
}

/** kube's getConvertedObjectsFromResponse: the converted objects or why the answer is unusable. */
function convertedObjectsOf(reviewVersion: string, uid: string, answer: unknown): unknown[] | string {
  const review: Raw = isPlainObject(answer) ? answer : {};
  if (reviewVersion === 'v1') {
    const want = `${REVIEW_GROUP}/v1`;
    if (review['apiVersion'] !== want || review['kind'] !== 'ConversionReview') {
      return `expected webhook response of ${REVIEW_GROUP}/v1, Kind=ConversionReview, got ${gvkString(review['apiVersion'], review['kind'])}`;
    }
  }
  const response = review['response'];
  if (!isPlainObject(response)) return 'no response provided';
  if (reviewVersion === 'v1') {
    const got = typeof response['uid'] === 'string' ? response['uid'] : '';
    if (got !== uid) return `expected response.uid=${JSON.stringify(uid)}, got ${JSON.stringify(got)}`;
  }
  const result = isPlainObject(response['result']) ? response['result'] : {};
  const status = typeof result['status'] === 'string' ? result['status'] : '';
  if (status !== 'Success') {
    const message = typeof result['message'] === 'string' ? result['message'] : '';
    return message || `response.result.status was '${status}', not 'Success'`;
  }
  return Array.isArray(response['convertedObjects']) ? response['convertedObjects'] : [];
}

/** A CRD's webhook converter; `deps.observe` records each conversion's duration (kube's converterMetric). */
export function createWebhookConverter(deps: ConversionWebhookDeps): CustomResourceConverter {
  const reviewVersion = reviewVersionOf(deps.config.conversionReviewVersions);
  const address = addressOf(deps.config);

  const call = async (objects: StoredObject[], desiredApiVersion: string): Promise<{ answer: unknown; uid: string }> => {
    let connectTo: { host: string; port: number } | undefined;
    if (address.service) {
      try {
        connectTo = await (deps.resolveService ?? noServices)(address.service);
      } catch (e) {
        throw new Error(`Post "${address.url}": ${(e as Error).message}`);
      }
    }
    const uid = randomUUID();
    const review = {
      kind: 'ConversionReview',
      apiVersion: `${REVIEW_GROUP}/${reviewVersion}`,
      request: { uid, desiredAPIVersion: desiredApiVersion, objects },
      response: { uid: '', convertedObjects: null, result: { metadata: {} } },
    };
    const answer = await postJSON({ url: address.url, caBundle: deps.config.caBundle, timeoutMs: TIMEOUT_SECONDS * 1000, connectTo, responseSizeFactor: 4 }, review);
    return { answer, uid };
  };

  const convertNow = async (objs: readonly StoredObject[], desiredApiVersion: string, toConvert: number[]): Promise<StoredObject[]> => {
    const first = objs[toConvert[0]!]!;
    // kube converts each object read on its own; plinth batches a list page (or a watch event)
    // in one review: the messages are a single object's when one object is sent, a list's else.
    const single = toConvert.length === 1;
    const gvk = gvkString(first.apiVersion, first.kind);
    const sent = toConvert.map((i) => objs[i]!);
    let result: { answer: unknown; uid: string };
    try {
      result = await call(sent, desiredApiVersion);
    } catch (e) {
      throw fail(`conversion webhook for ${gvk} failed: ${(e as Error).message}`);
    }
    const converted = convertedObjectsOf(reviewVersion, result.uid, result.answer);
    if (typeof converted === 'string') throw fail(`conversion webhook for ${gvk} failed: ${converted}`);
    if (converted.length !== sent.length) throw fail(`conversion webhook for ${gvk} returned ${converted.length} objects, expected ${sent.length}`);
    const out = objs.slice();
    const desiredGV = gvString(desiredApiVersion);
    converted.forEach((c, n) => {
      const original = sent[n]!;
      // kube's list loop counts the object before its checks, so they report the next index.
      const where = single ? 'invalid object at index 0' : `invalid converted object at index ${n + 1}`;
      if (!isPlainObject(c) || typeof c['kind'] !== 'string' || c['kind'] === '') {
        const why = `Object 'Kind' is missing in '${JSON.stringify(c)}'`;
        throw fail(single ? why : `conversion webhook for ${gvk} returned invalid converted object at index ${n}: ${why}`);
      }
      if (gvString(c['apiVersion']) !== desiredGV) {
        throw fail(`conversion webhook for ${gvk} returned ${where}: invalid groupVersion (expected ${desiredGV}, received ${gvString(c['apiVersion'])})`);
      }
      if (c['kind'] !== original.kind) throw fail(`conversion webhook for ${gvk} returned ${where}: invalid kind (expected ${original.kind}, received ${c['kind']})`);
      const identity = identityError(original, c);
      if (identity) throw fail(`conversion webhook for ${gvk} returned ${single ? 'invalid object' : `invalid converted object at index ${n + 1}`}: ${identity}`);
      const restored = restoreObjectMeta(original, c);
      if ('error' in restored) throw fail(`conversion webhook for ${gvk} returned invalid metadata${single ? '' : ` in object at index ${n + 1}`}: ${restored.error}`);
      out[toConvert[n]!] = restored.obj;
    });
    return out;
  };

  return {
    async convert(objs, desiredApiVersion) {
      const toConvert: number[] = [];
      objs.forEach((o, i) => {
        // kube's empty-object special case: an object of only apiVersion and kind is not sent.
        if (o.apiVersion !== desiredApiVersion && !(Object.keys(o).length === 2 && 'kind' in o && 'apiVersion' in o)) toConvert.push(i);
      });
      if (toConvert.length === 0) return objs.map((o) => (o.apiVersion === desiredApiVersion ? o : ({ ...o, apiVersion: desiredApiVersion } as StoredObject)));
      const start = performance.now();
      const fromVersion = versionOf(objs[toConvert[0]!]!.apiVersion);
      const toVersion = versionOf(desiredApiVersion);
      let succeeded = false;
      try {
        const out = await convertNow(objs, desiredApiVersion, toConvert);
        succeeded = true;
        return out;
      } finally {
        if (fromVersion !== toVersion) deps.observe?.({ crdName: deps.crdName, fromVersion, toVersion, succeeded }, (performance.now() - start) / 1000);
      }
    },
  };
}

/** Without a resolver no service is found (kube's ClusterIP resolver's lister error). */
const noServices: ServiceResolver = (ref) => Promise.reject(new Error(`service ${JSON.stringify(ref.name)} not found`));
