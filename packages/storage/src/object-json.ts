/**
 * Editing stored object JSON without parsing it: a scanner over the top level of one JSON object
 * (strings skipped, nesting counted) that injects `metadata.resourceVersion` (never stored: it is
 * the key's mod_revision) and drops top-level members (list items carry no apiVersion/kind).
 *
 * The result equals `JSON.stringify` of the decoded object only when the stored text is itself
 * what JSON.stringify writes (no whitespace, the same escapes and numbers): callers verify that
 * once per stored version (see CachedObject) before serving these bytes. Anything unusual (a key
 * written with escapes, a duplicate top-level or metadata key, metadata that is not an object,
 * no metadata) returns undefined: the general path serves it.
 */

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const LBRACE = 0x7b;
const RBRACE = 0x7d;
const LBRACKET = 0x5b;
const RBRACKET = 0x5d;
const COLON = 0x3a;
const COMMA = 0x2c;

/** One member of an object: text offsets of its key's opening quote and its value's end (exclusive). */
interface Member {
  key: string;
  start: number;
  valueStart: number;
  end: number;
}

/** Index just after the string whose opening quote is at `i`; -1 if unterminated. */
function skipString(text: string, i: number): number {
  for (let j = i + 1; ; ) {
    const q = text.indexOf('"', j);
    if (q < 0) return -1;
    let bs = 0;
    for (let k = q - 1; text.charCodeAt(k) === BACKSLASH; k--) bs++;
    if ((bs & 1) === 0) return q + 1;
    j = q + 1;
  }
}

/** Index just after the value starting at `i` (compact JSON: no whitespace); -1 if malformed. */
function skipValue(text: string, i: number): number {
  const c = text.charCodeAt(i);
  if (c === QUOTE) return skipString(text, i);
  if (c !== LBRACE && c !== LBRACKET) {
    // A number, true, false or null: runs to the next delimiter.
    let j = i;
    for (; j < text.length; j++) {
      const d = text.charCodeAt(j);
      if (d === COMMA || d === RBRACE || d === RBRACKET) break;
    }
    return j > i ? j : -1;
  }
  let depth = 0;
  for (let j = i; j < text.length; j++) {
    const d = text.charCodeAt(j);
    if (d === QUOTE) {
      j = skipString(text, j) - 1;
      if (j < 0) return -1;
    } else if (d === LBRACE || d === LBRACKET) depth++;
    else if (d === RBRACE || d === RBRACKET) {
      if (--depth === 0) return j + 1;
    }
  }
  return -1;
}

/**
 * The members of the compact JSON object spanning [from, to) (`{` at from, `}` at to - 1), or
 * undefined when it is not one, a key has escapes, or a key repeats. With `wanted`, the scan stops
 * once it has found `wanted` members named in `wantedNames`: what follows is not looked at (a
 * duplicate there goes unnoticed, see typeAndMetadataJson).
 */
function membersOf(text: string, from: number, to: number, wantedNames?: readonly string[], wanted = 0): Member[] | undefined {
  if (text.charCodeAt(from) !== LBRACE || text.charCodeAt(to - 1) !== RBRACE) return undefined;
  const out: Member[] = [];
  let i = from + 1;
  if (i === to - 1) return out;
  let found = 0;
  for (;;) {
    if (text.charCodeAt(i) !== QUOTE) return undefined;
    const keyEnd = skipString(text, i);
    if (keyEnd < 0 || text.charCodeAt(keyEnd) !== COLON) return undefined;
    const key = text.slice(i + 1, keyEnd - 1);
    if (key.includes('\\')) return undefined;
    const end = skipValue(text, keyEnd + 1);
    if (end < 0 || end > to - 1) return undefined;
    for (const m of out) if (m.key === key) return undefined;
    out.push({ key, start: i, valueStart: keyEnd + 1, end });
    if (wantedNames && wantedNames.includes(key) && ++found === wanted) return out;
    const d = text.charCodeAt(end);
    if (d === RBRACE) return end === to - 1 ? out : undefined;
    if (d !== COMMA) return undefined;
    i = end + 1;
  }
}

/**
 * The object's JSON with `metadata.resourceVersion` set to `rv` (replaced where the stored
 * metadata has it, else appended as its last member, as assigning it to the decoded object does),
 * without the top-level members named in `drop`. Undefined when the text is not a compact JSON
 * object with a metadata object (see the file comment).
 */
export function withResourceVersion(text: string, rv: string, drop?: readonly string[]): string | undefined {
  const top = membersOf(text, 0, text.length);
  if (!top) return undefined;
  const meta = top.find((m) => m.key === 'metadata');
  if (!meta) return undefined;
  const fields = membersOf(text, meta.valueStart, meta.end);
  if (!fields) return undefined;
  const value = JSON.stringify(rv);
  const own = fields.find((m) => m.key === 'resourceVersion');
  let metaJson: string;
  if (own) metaJson = text.slice(meta.valueStart, own.valueStart) + value + text.slice(own.end, meta.end);
  else metaJson = `${text.slice(meta.valueStart, meta.end - 1)}${fields.length > 0 ? ',' : ''}"resourceVersion":${value}}`;
  if (!drop || drop.length === 0) return text.slice(0, meta.valueStart) + metaJson + text.slice(meta.end);
  // Concatenated, not joined: slices of `text` and their concatenation stay references to it
  // (V8's sliced and cons strings), where join() would copy every list item on every request —
  // copies a response written as the client reads holds until it is done (see writeJsonList).
  let out = '{';
  for (const m of top) {
    if (drop.includes(m.key)) continue;
    if (out.length > 1) out += ',';
    out += m === meta ? `"metadata":${metaJson}` : text.slice(m.start, m.end);
  }
  return `${out}}`;
}

const TYPE_AND_METADATA: readonly string[] = ['apiVersion', 'kind', 'metadata'];

/**
 * The object's apiVersion, kind and metadata alone, as the JSON of an object (kube's
 * PartialObjectMetadata), metadata without the members named in `dropMeta`: what a reader of
 * metadata only decodes instead of the whole object. Undefined when the text is not a compact
 * JSON object with a metadata object.
 */
export function typeAndMetadataJson(text: string, dropMeta: readonly string[] = []): string | undefined {
  // The scan stops at the last of the three (stored objects put them first: spec and status, most
  // of a pod's or a Deployment's text, are not scanned). Stored text is JSON.stringify's, which
  // never repeats a key; a repeat past the three would be missed, where JSON.parse keeps the last.
  const top = membersOf(text, 0, text.length, TYPE_AND_METADATA, TYPE_AND_METADATA.length);
  if (!top) return undefined;
  let out = '';
  let meta = false;
  for (const m of top) {
    if (m.key !== 'apiVersion' && m.key !== 'kind' && m.key !== 'metadata') continue;
    let member = text.slice(m.start, m.end);
    if (m.key === 'metadata') {
      const fields = membersOf(text, m.valueStart, m.end);
      if (!fields) return undefined;
      meta = true;
      if (dropMeta.length > 0 && fields.some((f) => dropMeta.includes(f.key))) {
        let kept = '';
        for (const f of fields) if (!dropMeta.includes(f.key)) kept += (kept ? ',' : '') + text.slice(f.start, f.end);
        member = `"metadata":{${kept}}`;
      }
    }
    out += (out ? ',' : '{') + member;
  }
  return meta ? `${out}}` : undefined;
}

/**
 * Where withResourceVersion(text, rv) and withResourceVersion(text, rv, drop) can be cut from
 * `text` without scanning it again: the end of the metadata object (`}` at metaEnd - 1), and the
 * start of the first member kept when `drop` is dropped, packed as metaEnd * 2^16 + keptFrom.
 * Only for the usual layout: the dropped members all come first, metadata has members and no
 * resourceVersion of its own. Undefined otherwise (the scanner serves it).
 */
export function cutOf(text: string, drop: readonly string[]): number | undefined {
  const top = membersOf(text, 0, text.length);
  if (!top) return undefined;
  const meta = top.find((m) => m.key === 'metadata');
  if (!meta) return undefined;
  const fields = membersOf(text, meta.valueStart, meta.end);
  if (!fields || fields.length === 0 || fields.some((m) => m.key === 'resourceVersion')) return undefined;
  let k = 0;
  while (k < top.length && drop.includes(top[k]!.key)) k++;
  if (top.slice(k).some((m) => drop.includes(m.key)) || k >= top.length) return undefined;
  const keptFrom = top[k]!.start;
  if (keptFrom >= 2 ** 16) return undefined;
  return meta.end * 2 ** 16 + keptFrom;
}

/** withResourceVersion(text, rv) by a cut from cutOf. */
export function cutJson(text: string, cut: number, rv: string): string {
  const metaEnd = Math.floor(cut / 2 ** 16);
  return `${text.slice(0, metaEnd - 1)},"resourceVersion":${JSON.stringify(rv)}}${text.slice(metaEnd)}`;
}

/** withResourceVersion(text, rv, drop) by a cut from cutOf(text, drop). */
export function cutItemJson(text: string, cut: number, rv: string): string {
  const metaEnd = Math.floor(cut / 2 ** 16);
  return `{${text.slice(cut % 2 ** 16, metaEnd - 1)},"resourceVersion":${JSON.stringify(rv)}}${text.slice(metaEnd)}`;
}
