/**
 * kube's prose (its field and type descriptions) is not copied into the project: types are
 * described by the schema source's facts, and where plinth needs a description (a kind in OpenAPI,
 * a Table column, a query parameter) it writes one short line of its own. This fails when a long
 * description creeps back into any package's source.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** plinth's own descriptions are one line; kube's run to paragraphs. */
const MAX = 100;
const ROOT = fileURLToPath(new URL('../../../../', import.meta.url));

function sources(dir: string, out: string[] = []): string[] {
  for (const name of readdirSync(dir)) {
    const full = join(dir, name);
    if (statSync(full).isDirectory()) {
      if (name !== 'node_modules' && name !== 'dist' && name !== 'testdata') sources(full, out);
    } else if (name.endsWith('.ts') && !name.endsWith('.test.ts') && !name.endsWith('.d.ts')) out.push(full);
  }
  return out;
}

const STRING = String.raw`('(?:[^'\\\n]|\\.)*'|"(?:[^"\\\n]|\\.)*"|\x60(?:[^\x60\\]|\\.)*\x60)`;
/**
 * Where plinth writes descriptions: `description: '...'`, Table columns `col(name, type, '...')`,
 * query parameters `q(name, type, '...')`, and the schema helpers `s.str('...')` & co.
 */
const PLACES = [
  new RegExp(String.raw`\bdescription\??\s*:\s*${STRING}`, 'g'),
  new RegExp(String.raw`\b(?:col|q)\(\s*${STRING}\s*,\s*${STRING}\s*,\s*${STRING}`, 'g'),
  new RegExp(String.raw`\bs\.(?:str|int|bool|bytes|time|microTime|any)\(\s*${STRING}`, 'g'),
];

/** Every description of a source text longer than MAX, with where it is. */
export function longDescriptions(text: string, where: string): string[] {
  const found: string[] = [];
  for (const re of PLACES) {
    for (const m of text.matchAll(re)) {
      const literal = m[m.length - 1]!;
      if (literal.length - 2 > MAX) found.push(`${where}: ${literal.slice(0, 80)}...`);
    }
  }
  return found;
}

test('the check finds a long description where plinth writes them', () => {
  const kube = `'${'Secret holds secret data of a certain type. '.repeat(3)}'`;
  assert.equal(longDescriptions(`const x = { description: ${kube} };`, 'x').length, 1);
  assert.equal(longDescriptions(`col('Type', 'string', ${kube})`, 'x').length, 1);
  assert.equal(longDescriptions(`q('limit', 'integer', ${kube})`, 'x').length, 1);
  assert.equal(longDescriptions(`s.str(${kube})`, 'x').length, 1);
  assert.equal(longDescriptions(`const x = { description: 'A Secret holds data.' };`, 'x').length, 0);
});

test('no package source carries a description longer than one line', () => {
  const files = readdirSync(join(ROOT, 'packages')).flatMap((p) => {
    const src = join(ROOT, 'packages', p, 'src');
    return statSync(src, { throwIfNoEntry: false })?.isDirectory() ? sources(src) : [];
  });
  assert.ok(files.length > 100, `${files.length} files read`);
  assert.deepEqual(files.flatMap((f) => longDescriptions(readFileSync(f, 'utf8'), f.slice(ROOT.length))), []);
});
