import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { goJSONSyntaxError } from './go-json.js';

describe("Go's encoding/json syntax errors (goJSONSyntaxError)", () => {
  const table: Array<[string, string | undefined]> = [
    ['[{"key":"a","tolerationSeconds":-1.5e+3}, null, true, false, "\\u00e9\\n"]', undefined],
    ['', 'unexpected end of JSON input'],
    ['  ', 'unexpected end of JSON input'],
    ['[1', 'unexpected end of JSON input'],
    ['nope', "invalid character 'o' in literal null (expecting 'u')"],
    ['x', "invalid character 'x' looking for beginning of value"],
    ['{"a" 1}', "invalid character '1' after object key"],
    ['{"a":1 "b":2}', `invalid character '"' after object key:value pair`],
    ['{a:1}', "invalid character 'a' looking for beginning of object key string"],
    ['[1 2]', "invalid character '2' after array element"],
    ['[1,]', "invalid character ']' looking for beginning of value"],
    ['01', "invalid character '1' after top-level value"],
    ['{} x', "invalid character 'x' after top-level value"],
    ['1.x', "invalid character 'x' after decimal point in numeric literal"],
    ['1ex', "invalid character 'x' in exponent of numeric literal"],
    ['-x', "invalid character 'x' in numeric literal"],
    ['"\\x"', "invalid character 'x' in string escape code"],
    ['"\\u12g4"', "invalid character 'g' in \\u hexadecimal character escape"],
    ['"a\nb"', "invalid character '\\n' in string literal"],
    ["'a'", "invalid character '\\'' looking for beginning of value"],
  ];
  for (const [text, want] of table) it(JSON.stringify(text), () => assert.equal(goJSONSyntaxError(text), want));
});
