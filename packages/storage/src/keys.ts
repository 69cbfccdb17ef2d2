/** etcd key layout, as kube-apiserver's: `<prefix>/<resource>/[<namespace>/]<name>`. */

export function normalizePrefix(prefix: string): string {
  const p = prefix.replace(/\/+$/, '');
  return p.startsWith('/') ? p : `/${p}`;
}

export interface KeyFunctions {
  /** The key of one object. */
  objectKey(resource: string, namespace: string | undefined, name: string): string;
  /** The prefix of a collection: all namespaces when namespace is undefined. Ends in '/'. */
  collectionPrefix(resource: string, namespace?: string): string;
}

export function createKeyFunctions(etcdPrefix: string): KeyFunctions {
  const base = normalizePrefix(etcdPrefix);
  return {
    objectKey: (resource, namespace, name) => (namespace ? `${base}/${resource}/${namespace}/${name}` : `${base}/${resource}/${name}`),
    collectionPrefix: (resource, namespace) => (namespace ? `${base}/${resource}/${namespace}/` : `${base}/${resource}/`),
  };
}

/** The smallest key greater than every key with this prefix (etcd's range_end for a prefix). */
export function prefixEnd(prefix: Buffer): Buffer {
  const end = Buffer.from(prefix);
  for (let i = end.length - 1; i >= 0; i--) {
    if (end[i]! < 0xff) {
      end[i]! += 1;
      return end.subarray(0, i + 1);
    }
  }
  return Buffer.from([0]);
}
