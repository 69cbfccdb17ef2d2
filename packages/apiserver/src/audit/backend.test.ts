import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { backupName, createLogBackend } from './backend.js';
import { encodeEventJSON, encodeEventLegacy, formatMicroTime, type AuditEvent } from './event.js';
import type { Logger } from '../log.js';

const quiet: Logger = { info: () => undefined, error: () => undefined, v: () => undefined };

function event(extra: Partial<AuditEvent> = {}): AuditEvent {
  return {
    level: 'Metadata',
    auditID: 'a1b2',
    stage: 'ResponseComplete',
    requestURI: '/api/v1/namespaces/default/pods?limit=1',
    verb: 'list',
    user: { name: 'alice', uid: '1', groups: ['devs'] },
    impersonatedUser: undefined,
    sourceIPs: ['127.0.0.1'],
    userAgent: 'kubectl/v1.24.0',
    objectRef: { resource: 'pods', namespace: 'default', name: '', uid: '', apiGroup: '', apiVersion: 'v1', resourceVersion: '', subresource: '' },
    responseStatus: { code: 200 },
    requestObject: undefined,
    responseObject: undefined,
    requestReceivedTimestamp: Date.UTC(2022, 4, 1, 10, 0, 0) * 1000 + 123456,
    stageTimestamp: Date.UTC(2022, 4, 1, 10, 0, 1) * 1000 + 7,
    annotations: { 'b/x': '2', 'a/y': '1' },
    ...extra,
  };
}

test("events encode as kube's JSON (field order, omitempty, MicroTime) and legacy lines", () => {
  assert.equal(formatMicroTime(Date.UTC(2022, 0, 2, 3, 4, 5) * 1000 + 6), '2022-01-02T03:04:05.000006Z');
  const line = encodeEventJSON(event());
  assert.ok(line.endsWith('}\n'));
  assert.equal(
    line,
    '{"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"Metadata","auditID":"a1b2","stage":"ResponseComplete","requestURI":"/api/v1/namespaces/default/pods?limit=1","verb":"list",' +
      '"user":{"username":"alice","uid":"1","groups":["devs"]},"sourceIPs":["127.0.0.1"],"userAgent":"kubectl/v1.24.0","objectRef":{"resource":"pods","namespace":"default","apiVersion":"v1"},' +
      '"responseStatus":{"metadata":{},"code":200},"requestReceivedTimestamp":"2022-05-01T10:00:00.123456Z","stageTimestamp":"2022-05-01T10:00:01.000007Z","annotations":{"a/y":"1","b/x":"2"}}\n',
  );
  assert.match(encodeEventJSON(event({ user: undefined, objectRef: undefined, annotations: undefined })), /"user":\{\},"sourceIPs"/);
  assert.equal(
    encodeEventLegacy(event()),
    '2022-05-01T10:00:00.123456Z AUDIT: id="a1b2" stage="ResponseComplete" ip="127.0.0.1" method="list" user="alice" groups="\\"devs\\"" as="<self>" asgroups="<lookup>" user-agent="kubectl/v1.24.0" namespace="default" uri="/api/v1/namespaces/default/pods?limit=1" response="200"\n',
  );
});

test('lumberjack backup names', () => {
  assert.equal(backupName('/var/log/audit.log', new Date(Date.UTC(2022, 4, 1, 10, 2, 3, 45))), '/var/log/audit-2022-05-01T10-02-03.045.log');
  assert.equal(backupName('/var/log/audit', new Date(Date.UTC(2022, 4, 1, 10, 2, 3, 45))), '/var/log/audit-2022-05-01T10-02-03.045');
});

test('rotates past maxsize, keeps maxbackup backups, removes backups older than maxage', async (ctx) => {
  const dir = mkdtempSync(join(tmpdir(), 'plinth-audit-'));
  ctx.after(() => rmSync(dir, { recursive: true, force: true }));
  const path = join(dir, 'audit.log');
  // An old backup (by the time in its name) that maxage removes, and an unrelated file it keeps.
  writeFileSync(join(dir, 'audit-2001-01-01T00-00-00.000.log'), 'old\n');
  writeFileSync(join(dir, 'other.log'), 'x\n');
  let t = Date.UTC(2030, 0, 1);
  const backend = createLogBackend({ path, format: 'json', maxSizeMB: 1, maxBackups: 2, maxAgeDays: 1, log: quiet, now: () => new Date((t += 1000)) });
  const big = 'x'.repeat(200 * 1024);
  for (let i = 0; i < 20; i++) backend.processEvent(event({ auditID: `id-${i}`, requestObject: JSON.stringify({ big }) }));
  await backend.close();
  // Removal of old backups runs after each rotation; give it a moment.
  for (let i = 0; i < 50 && readdirSync(dir).filter((f) => f.startsWith('audit-')).length > 2; i++) await new Promise((r) => setTimeout(r, 20));
  const backups = readdirSync(dir).filter((f) => /^audit-\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}\.\d{3}\.log$/.test(f)).sort();
  assert.equal(backups.length, 2, `backups: ${backups.join(', ')}`);
  assert.ok(!backups.includes('audit-2001-01-01T00-00-00.000.log'));
  assert.ok(existsSync(join(dir, 'other.log')));
  const ids: string[] = [];
  for (const f of [...backups, 'audit.log']) {
    assert.ok(statSync(join(dir, f)).size <= 1024 * 1024, `${f} is over 1 MiB`);
    for (const l of readFileSync(join(dir, f), 'utf8').split('\n').filter(Boolean)) ids.push(JSON.parse(l).auditID);
  }
  // The newest events, in order, none split across files.
  assert.deepEqual(ids, ids.slice().sort((a, b) => Number(a.slice(3)) - Number(b.slice(3))));
  assert.equal(ids[ids.length - 1], 'id-19');
});

test('a failing file counts errors and never throws', async () => {
  if (!existsSync('/dev/full')) return;
  let errors = 0;
  let events = 0;
  const logged: string[] = [];
  const log: Logger = { ...quiet, error: (msg, fields) => logged.push(`${msg} ${JSON.stringify(fields)}`) };
  const backend = createLogBackend({ path: '/dev/full', format: 'json', maxSizeMB: 0, maxBackups: 0, maxAgeDays: 0, log, onError: (n) => (errors += n), onEvent: () => events++ });
  for (let i = 0; i < 5; i++) backend.processEvent(event({ requestObject: '{"data":{"password":"c2VjcmV0"}}' }));
  await backend.close();
  assert.equal(events, 5);
  assert.equal(errors, 5);
  assert.equal(logged.length, 1, 'rate limited');
  assert.ok(!logged[0]!.includes('c2VjcmV0') && !logged[0]!.includes('alice'), 'no event content in the log');
});

test('a full buffer drops and counts instead of blocking', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'plinth-audit-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  let errors = 0;
  const backend = createLogBackend({ path: join(dir, 'a.log'), format: 'json', maxSizeMB: 0, maxBackups: 0, maxAgeDays: 0, log: quiet, bufferSize: 3, onError: (n) => (errors += n) });
  for (let i = 0; i < 10; i++) backend.processEvent(event());
  await backend.close();
  // Three wait in the buffer (and one may already be on its way to the file); the rest are dropped.
  const written = readFileSync(join(dir, 'a.log'), 'utf8').split('\n').filter(Boolean).length;
  assert.ok(written >= 3 && written <= 4, `written: ${written}`);
  assert.equal(errors, 10 - written);
});

test('a start-up path that cannot be a file fails at once (kube ensureLogFile)', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'plinth-audit-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  assert.throws(() => createLogBackend({ path: dir, format: 'json', maxSizeMB: 0, maxBackups: 0, maxAgeDays: 0, log: quiet }), /^Error: ensureLogFile: EISDIR/);
});
