import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { compareStrings } from './fieldset.js';

/** Go's strings.Compare: the byte order of the UTF-8 encodings. */
const goCompare = (a: string, b: string): number => Math.sign(Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8')));

describe('compareStrings', () => {
  it('orders as the UTF-8 bytes do, surrogate pairs and lone surrogates included', () => {
    const pieces = ['', 'a', 'b', 'A', '-', '.', '\u00e9', '\u07ff', '\u0800', '\ud7ff', '\ud800', '\udbff', '\udc00', '\udfff', '\ue000', '\uffff', '\ud83d\ude00', '\ud83d', '\ude00'];
    const strings: string[] = [];
    for (const x of pieces) for (const y of pieces) strings.push(x + y, `k${x}${y}z`);
    for (const a of strings) for (const b of strings) assert.equal(Math.sign(compareStrings(a, b)), goCompare(a, b), `${JSON.stringify(a)} vs ${JSON.stringify(b)}`);
  });

  it('puts an astral character after U+E000–U+FFFF, as UTF-8 does (UTF-16 order would not)', () => {
    assert.equal(compareStrings('\ud83d\ude00', '\uffff'), 1);
    assert.equal(compareStrings('x\ue000', 'x\ud800\udc00'), -1);
    assert.equal(compareStrings('name', 'namespace'), -1);
    assert.equal(compareStrings('f:b', 'f:a'), 1);
  });
});
