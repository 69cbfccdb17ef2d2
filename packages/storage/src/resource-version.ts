/**
 * The resourceVersion format, parsed here and nowhere else (kube's
 * `APIObjectVersioner.ParseResourceVersion`): '' and '0' mean "none", anything else must be a
 * decimal etcd revision (an int64). Handlers validate query parameters with it, the stores use it.
 */

/** The largest etcd revision (etcd revisions are int64). */
const MAX_REVISION = 2n ** 63n - 1n;

export class InvalidResourceVersionError extends Error {
  constructor(readonly resourceVersion: string) {
    super(`invalid resource version "${resourceVersion}"`);
    this.name = 'InvalidResourceVersionError';
  }
}

/** A resourceVersion as a revision (0 for '' and '0'); throws InvalidResourceVersionError on junk. */
export function parseResourceVersion(rv: string | undefined): number {
  if (!rv) return 0;
  if (!/^\d+$/.test(rv) || BigInt(rv) > MAX_REVISION) throw new InvalidResourceVersionError(rv);
  return Number(rv);
}
