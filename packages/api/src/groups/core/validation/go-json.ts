/**
 * The syntax errors of Go's encoding/json (its scanner's `checkValid`), so a JSON value kube
 * decodes from an annotation fails with kube's exact text, e.g.
 * `invalid character 'o' in literal null (expecting 'u')` or `unexpected end of JSON input`.
 */

/** Go's `quoteChar`: a byte as Go's scanner names it in errors. */
function quoteChar(c: number): string {
  if (c === 0x27) return "'\\''";
  if (c === 0x22) return "'\"'";
  const named: Record<number, string> = { 7: '\\a', 8: '\\b', 9: '\\t', 10: '\\n', 11: '\\v', 12: '\\f', 13: '\\r', 0x5c: '\\\\' };
  if (named[c] !== undefined) return `'${named[c]}'`;
  if (c < 0x20 || c === 0x7f) return `'\\x${c.toString(16).padStart(2, '0')}'`;
  if (c >= 0x80 && c < 0xa0) return `'\\u00${c.toString(16).padStart(2, '0')}'`;
  if (c === 0xad) return "'\\u00ad'";
  return `'${String.fromCharCode(c)}'`;
}

const isSpace = (c: number): boolean => c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d;
const isDigit = (c: number): boolean => c >= 0x30 && c <= 0x39;
const isHex = (c: number): boolean => isDigit(c) || (c >= 0x61 && c <= 0x66) || (c >= 0x41 && c <= 0x46);

class SyntaxError extends Error {}

/** Go's scanner over the bytes; throws SyntaxError with Go's message. */
class Scanner {
  #b: Buffer;
  #i = 0;
  constructor(text: string) {
    this.#b = Buffer.from(text, 'utf8');
  }

  #peek(): number | undefined {
    return this.#b[this.#i];
  }

  #next(): number {
    const c = this.#b[this.#i++];
    if (c === undefined) throw new SyntaxError('unexpected end of JSON input');
    return c;
  }

  #fail(c: number, context: string): never {
    throw new SyntaxError(`invalid character ${quoteChar(c)} ${context}`);
  }

  #skipSpace(): number {
    let c = this.#next();
    while (isSpace(c)) c = this.#next();
    return c;
  }

  run(): void {
    this.#value(this.#skipSpace());
    for (let c = this.#peek(); c !== undefined; c = this.#peek()) {
      this.#i++;
      if (!isSpace(c)) this.#fail(c, 'after top-level value');
    }
  }

  #value(c: number): void {
    if (c === 0x7b) return this.#object();
    if (c === 0x5b) return this.#array();
    if (c === 0x22) return this.#string();
    if (c === 0x2d || isDigit(c)) return this.#number(c);
    if (c === 0x74) return this.#literal('true');
    if (c === 0x66) return this.#literal('false');
    if (c === 0x6e) return this.#literal('null');
    this.#fail(c, 'looking for beginning of value');
  }

  #literal(word: string): void {
    for (const expected of word.slice(1)) {
      const c = this.#next();
      if (c !== expected.charCodeAt(0)) this.#fail(c, `in literal ${word} (expecting '${expected}')`);
    }
  }

  #string(): void {
    for (;;) {
      const c = this.#next();
      if (c === 0x22) return;
      if (c === 0x5c) {
        const e = this.#next();
        if (e === 0x75) {
          for (let k = 0; k < 4; k++) {
            const h = this.#next();
            if (!isHex(h)) this.#fail(h, 'in \\u hexadecimal character escape');
          }
        } else if (!'bfnrt\\/"'.includes(String.fromCharCode(e))) this.#fail(e, 'in string escape code');
      } else if (c < 0x20) this.#fail(c, 'in string literal');
    }
  }

  /** Digits, fraction and exponent; the byte after the number is left for the caller. */
  #number(first: number): void {
    let c = first;
    if (c === 0x2d) {
      c = this.#next();
      if (!isDigit(c)) this.#fail(c, 'in numeric literal');
    }
    if (c !== 0x30) while (this.#peek() !== undefined && isDigit(this.#peek()!)) this.#i++;
    if (this.#peek() === 0x2e) {
      this.#i++;
      const d = this.#next();
      if (!isDigit(d)) this.#fail(d, 'after decimal point in numeric literal');
      while (this.#peek() !== undefined && isDigit(this.#peek()!)) this.#i++;
    }
    if (this.#peek() === 0x65 || this.#peek() === 0x45) {
      this.#i++;
      let e = this.#next();
      if (e === 0x2b || e === 0x2d) e = this.#next();
      if (!isDigit(e)) this.#fail(e, 'in exponent of numeric literal');
      while (this.#peek() !== undefined && isDigit(this.#peek()!)) this.#i++;
    }
  }

  #object(): void {
    let c = this.#skipSpace();
    if (c === 0x7d) return;
    for (;;) {
      if (c !== 0x22) this.#fail(c, 'looking for beginning of object key string');
      this.#string();
      c = this.#skipSpace();
      if (c !== 0x3a) this.#fail(c, 'after object key');
      this.#value(this.#skipSpace());
      c = this.#skipSpace();
      if (c === 0x7d) return;
      if (c !== 0x2c) this.#fail(c, 'after object key:value pair');
      c = this.#skipSpace();
    }
  }

  #array(): void {
    let c = this.#skipSpace();
    if (c === 0x5d) return;
    for (;;) {
      this.#value(c);
      c = this.#skipSpace();
      if (c === 0x5d) return;
      if (c !== 0x2c) this.#fail(c, 'after array element');
      c = this.#skipSpace();
    }
  }
}

/** Go's `json.Unmarshal` syntax error for `text`, or undefined when it is valid JSON. */
export function goJSONSyntaxError(text: string): string | undefined {
  try {
    new Scanner(text).run();
    return undefined;
  } catch (e) {
    if (e instanceof SyntaxError) return e.message;
    throw e;
  }
}
