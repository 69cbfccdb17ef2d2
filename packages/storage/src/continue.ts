/**
 * Continue tokens, self-contained as kube's: base64url(JSON{v, rv, start}) where `start` is the
 * next key relative to the listed prefix. Any replica can serve the next page.
 */

const TOKEN_VERSION = 'meta.k8s.io/v1';

export interface ContinueToken {
  /** Revision of the first page; -1 means "continue at the latest revision" (after expiry). */
  rv: number;
  /** The key to resume from, relative to the list prefix. */
  start: string;
}

export function encodeContinue(nextKey: string, prefix: string, rv: number): string {
  const start = nextKey.startsWith(prefix) ? nextKey.slice(prefix.length) : nextKey;
  return Buffer.from(JSON.stringify({ v: TOKEN_VERSION, rv, start })).toString('base64url');
}

/** Decodes a token; throws an Error with kube's wording on any malformed input. */
export function decodeContinue(token: string, prefix: string): { rv: number; startKey: string } {
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(token, 'base64url').toString('utf8'));
  } catch {
    throw new Error('continue key is not valid: illegal base64 data or malformed JSON');
  }
  const t = parsed as { v?: unknown; rv?: unknown; start?: unknown };
  if (t === null || typeof t !== 'object' || t.v !== TOKEN_VERSION) {
    throw new Error(`continue key is not valid: server does not recognize this encoded version "${String(t?.v ?? '')}"`);
  }
  if (typeof t.rv !== 'number' || !Number.isInteger(t.rv) || (t.rv < 1 && t.rv !== -1)) {
    throw new Error('continue key is not valid: incorrect encoded start resourceVersion (version meta.k8s.io/v1)');
  }
  if (typeof t.start !== 'string' || t.start.length === 0) {
    throw new Error('continue key is not valid: encoded start key empty (version meta.k8s.io/v1)');
  }
  // The start key must stay inside the prefix: no path tricks.
  const cleaned = t.start.replace(/^\/+/, '');
  if (cleaned.split('/').some((seg) => seg === '..' || seg === '.')) {
    throw new Error('continue key is not valid: path traversal attempt');
  }
  return { rv: t.rv, startKey: prefix + cleaned };
}
