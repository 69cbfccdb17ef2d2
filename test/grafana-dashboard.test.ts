/**
 * The Grafana dashboard in deploy/grafana/ is valid JSON a Grafana import accepts, and every metric
 * its queries use is one plinth exports (a renamed metric would leave a panel silently empty).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT, usePlinth } from './harness.js';

interface Panel {
  id: number;
  type: string;
  title: string;
  gridPos: { x: number; y: number; w: number; h: number };
  targets?: Array<{ refId: string; expr: string }>;
}

const dashboard = JSON.parse(readFileSync(join(REPO_ROOT, 'deploy/grafana/plinth-apiserver.json'), 'utf8')) as {
  uid: string;
  title: string;
  panels: Panel[];
  templating: { list: Array<{ name: string }> };
};

const env = usePlinth();

test('dashboard: panels have unique ids, fit the 24-column grid and do not overlap', () => {
  assert.ok(dashboard.uid && dashboard.title);
  const ids = new Set<number>();
  const cells = new Set<string>();
  for (const p of dashboard.panels) {
    assert.ok(!ids.has(p.id), `duplicate panel id ${p.id}`);
    ids.add(p.id);
    const { x, y, w, h } = p.gridPos;
    assert.ok(x >= 0 && w > 0 && x + w <= 24, `${p.title}: outside the grid`);
    for (let i = x; i < x + w; i++) {
      for (let j = y; j < y + h; j++) {
        assert.ok(!cells.has(`${i},${j}`), `${p.title} overlaps another panel`);
        cells.add(`${i},${j}`);
      }
    }
    if (p.type !== 'row') assert.ok((p.targets ?? []).length > 0, `${p.title}: no query`);
  }
  const vars = dashboard.templating.list.map((v) => v.name);
  for (const p of dashboard.panels) for (const t of p.targets ?? []) for (const m of t.expr.matchAll(/\$(\w+)/g)) if (!m[1]!.startsWith('__')) assert.ok(vars.includes(m[1]!), `${p.title}: unknown variable $${m[1]}`);
});

test('dashboard: the issue asks for rate, latency, errors, deprecated APIs, watchers, etcd latency and cache size', () => {
  const exprs = dashboard.panels.flatMap((p) => (p.targets ?? []).map((t) => t.expr)).join('\n');
  for (const needed of ['apiserver_request_total', 'apiserver_request_duration_seconds_bucket', 'code=~"[45]..', 'apiserver_requested_deprecated_apis', 'removed_release', 'apiserver_registered_watchers', 'etcd_request_duration_seconds_bucket', 'apiserver_storage_objects']) {
    assert.ok(exprs.includes(needed), `no panel uses ${needed}`);
  }
});

test('dashboard: every metric a query uses is exported by plinth', async () => {
  const scrape = await env.plinth.client.get('/metrics');
  assert.equal(scrape.status, 200);
  const exported = new Set([...scrape.raw.toString('utf8').matchAll(/^# TYPE (\S+) (\S+)$/gm)].map((m) => m[1]!));
  const used = new Set<string>();
  for (const p of dashboard.panels) {
    for (const t of p.targets ?? []) {
      for (const m of t.expr.matchAll(/\b((?:apiserver|etcd|authentication|process|nodejs)_[a-z_]+)\b/g)) used.add(m[1]!.replace(/_(bucket|sum|count)$/, ''));
    }
  }
  assert.ok(used.size >= 10, `only ${used.size} metrics used`);
  for (const name of used) assert.ok(exported.has(name), `the dashboard uses ${name}, which plinth does not export`);
});

test('dashboard: a table lists the deprecated APIs still called, by verb (the gauge joined with apiserver_request_total)', () => {
  const table = dashboard.panels.find((p) => p.type === 'table' && (p.targets ?? []).some((t) => t.expr.includes('apiserver_requested_deprecated_apis')));
  assert.ok(table, 'no table over apiserver_requested_deprecated_apis');
  const expr = table.targets![0]!.expr;
  assert.match(expr, /apiserver_requested_deprecated_apis\{[^}]*\}\) \* on \(group, version, resource, subresource\) group_right \(removed_release\) increase\(apiserver_request_total\{/);
  assert.match(expr, /^sum by \(group, version, resource, subresource, verb, removed_release\)/);
});
