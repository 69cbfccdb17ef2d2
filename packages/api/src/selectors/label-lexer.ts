// The lexer of kube's label selector grammar (labels.Lexer in
// k8s.io/apimachinery/pkg/labels/selector.go), token for token.

export type Tok = 'eos' | 'id' | ')' | ',' | '!' | '==' | '=' | '>' | 'in' | '<' | '!=' | 'notin' | '(';
export interface Item { tok: Tok; lit: string }

const literalTokens: ReadonlyMap<string, Tok> = new Map<string, Tok>([
  [')', ')'], [',', ','], ['!', '!'], ['==', '=='], ['=', '='], ['>', '>'], ['in', 'in'],
  ['<', '<'], ['!=', '!='], ['notin', 'notin'], ['(', '('],
]);

function isWhitespace(c: number): boolean {
  return c === 32 || c === 9 || c === 13 || c === 10;
}
function isSpecialSymbol(c: number): boolean {
  // = ! ( ) , > <
  return c === 61 || c === 33 || c === 40 || c === 41 || c === 44 || c === 62 || c === 60;
}

export function scan(s: string): Item[] {
  let pos = 0;
  // Same semantics as kube's Lexer.read: 0 at end of input (without advancing).
  const read = (): number => (pos < s.length ? s.charCodeAt(pos++) : 0);
  const items: Item[] = [];
  for (;;) {
    let ch = read();
    while (isWhitespace(ch)) ch = read();
    if (ch === 0) {
      items.push({ tok: 'eos', lit: '' });
      return items;
    }
    pos--;
    const start = pos;
    if (isSpecialSymbol(ch)) {
      // Longest run of special symbols that still forms a known token.
      let last: Tok | undefined;
      let lastEnd = pos;
      // Like kube, stop at the first symbol that no longer extends a token.
      for (;;) {
        const c = read();
        if (c === 0) break;
        if (!isSpecialSymbol(c)) { pos--; break; }
        const t = literalTokens.get(s.slice(start, pos));
        if (t !== undefined) { last = t; lastEnd = pos; }
        else if (last !== undefined) { pos--; break; }
      }
      // Every single special symbol is a token, so `last` is always set.
      items.push({ tok: last ?? 'eos', lit: s.slice(start, lastEnd) });
    } else {
      let buf = '';
      for (;;) {
        const c = read();
        if (c === 0) break;
        if (isSpecialSymbol(c) || isWhitespace(c)) { pos--; break; }
        buf += String.fromCharCode(c);
      }
      const t = literalTokens.get(buf);
      items.push({ tok: t ?? 'id', lit: buf });
    }
  }
}
