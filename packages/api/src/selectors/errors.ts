/**
 * Error raised for any malformed label or field selector, and for field
 * selectors naming a field the resource does not support. The message is
 * kube's text (k8s.io/apimachinery labels/fields packages and the field label
 * conversion functions) so it can be surfaced verbatim in a 400 Status.
 */
export class SelectorParseError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SelectorParseError';
  }
}

/** Go's %q for a string (strconv.Quote), close enough for error messages. */
export function goQuote(s: string): string {
  let out = '"';
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    switch (c) {
      case 0x07: out += '\\a'; break;
      case 0x08: out += '\\b'; break;
      case 0x0c: out += '\\f'; break;
      case 0x0a: out += '\\n'; break;
      case 0x0d: out += '\\r'; break;
      case 0x09: out += '\\t'; break;
      case 0x0b: out += '\\v'; break;
      case 0x22: out += '\\"'; break;
      case 0x5c: out += '\\\\'; break;
      default:
        if (c < 0x20 || c === 0x7f) out += '\\x' + c.toString(16).padStart(2, '0');
        else out += s[i];
    }
  }
  return out + '"';
}

/** field.Invalid(path, value, detail).Error() with a string bad value. */
export function invalidValue(path: string, value: string, detail: string): string {
  return `${path}: Invalid value: ${goQuote(value)}: ${detail}`;
}
