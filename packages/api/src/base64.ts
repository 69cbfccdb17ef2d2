/**
 * Base64 as Go's `encoding/base64.StdEncoding` decodes it — what kube's JSON decoding does for
 * every `[]byte` field (Secret data, ConfigMap binaryData): padding is required, `\r` and `\n`
 * anywhere are skipped, and anything else outside the alphabet is an error at its byte offset.
 * Node's `Buffer.from(s, 'base64')` is far more lenient (it accepts `YQ`, ignores junk), so it
 * must not be used to validate input.
 */

const INVALID = 0xff;
const DECODE_MAP = new Uint8Array(256).fill(INVALID);
'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/'.split('').forEach((c, i) => {
  DECODE_MAP[c.charCodeAt(0)] = i;
});

const PAD = 0x3d; // '='
const isNewline = (b: number): boolean => b === 0x0a || b === 0x0d;

/** Go's `CorruptInputError`: the offset of the first byte that cannot be decoded. */
export class Base64Error extends Error {
  constructor(readonly offset: number) {
    super(`illegal base64 data at input byte ${offset}`);
    this.name = 'Base64Error';
  }
}

/**
 * Decodes like Go's `base64.StdEncoding.DecodeString` (a port of its `decodeQuantum`, so error
 * offsets match). Throws Base64Error; the offset counts UTF-8 bytes, as Go's does.
 */
export function decodeStdBase64(text: string): Buffer {
  const src = Buffer.from(text, 'utf8');
  const out = Buffer.allocUnsafe(Math.floor((src.length * 3) / 4) + 3);
  let n = 0;
  let si = 0;
  const dbuf = [0, 0, 0, 0];
  for (;;) {
    let dlen = 4;
    let j = 0;
    for (; j < 4; j++) {
      if (si === src.length) {
        if (j === 0) return out.subarray(0, n);
        // A quantum cut short without padding (StdEncoding pads).
        throw new Base64Error(si - j);
      }
      const c = src[si++]!;
      const v = DECODE_MAP[c]!;
      if (v !== INVALID) {
        dbuf[j] = v;
        continue;
      }
      if (isNewline(c)) {
        j--;
        continue;
      }
      if (c !== PAD) throw new Base64Error(si - 1);
      // Padding: the end of the data.
      if (j === 0 || j === 1) throw new Base64Error(si - 1);
      if (j === 2) {
        // "==" is expected; the first "=" is consumed.
        while (si < src.length && isNewline(src[si]!)) si++;
        if (si === src.length) throw new Base64Error(src.length);
        if (src[si] !== PAD) throw new Base64Error(si - 1);
        si++;
      }
      while (si < src.length && isNewline(src[si]!)) si++;
      if (si < src.length) throw new Base64Error(si); // trailing garbage
      dlen = j;
      break;
    }
    const v = (dbuf[0]! << 18) | (dbuf[1]! << 12) | (dbuf[2]! << 6) | dbuf[3]!;
    out[n++] = (v >> 16) & 0xff;
    if (dlen >= 3) out[n++] = (v >> 8) & 0xff;
    if (dlen === 4) out[n++] = v & 0xff;
    if (dlen < 4) return out.subarray(0, n);
    dbuf[2] = 0;
    dbuf[3] = 0;
  }
}

/**
 * The canonical form of a `[]byte` value as kube stores and serves it: decoded strictly, then
 * encoded again (so `YWJj\nZA==` is stored as `YWJjZA==`).
 */
export function canonicalBase64(text: string): string {
  return decodeStdBase64(text).toString('base64');
}
