/**
 * core/v1 ComponentStatuses on a real server: computed on each read (not stored), get and list
 * only, kube 1.24's deprecation warning, the scheduler and controller-manager entries Unhealthy
 * with Go's refused-connection text (a lone plinth runs neither), one healthy etcd-N per etcd
 * server, kube's answer for an unknown name, `kubectl get cs` and Protobuf.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { decodeProtobuf } from '@plinth/apiserver';
import { kubectlPath, usePlinth } from './harness.js';
import { expectCode, expectStatus } from './assertions.js';

const env = usePlinth();
const CS = '/api/v1/componentstatuses';
const WARNING = '299 - "v1 ComponentStatus is deprecated in v1.19+"';

function kubectl(...args: string[]): Promise<{ stdout: string; stderr: string; code: number }> {
  return new Promise((resolve) => {
    execFile(kubectlPath(), ['--kubeconfig', env.plinth.server.kubeconfigPath, ...args], { encoding: 'utf8', timeout: 60_000 }, (err, stdout, stderr) =>
      resolve({ stdout, stderr, code: err ? ((err as { code?: number }).code ?? 1) : 0 }),
    );
  });
}

describe('componentstatuses', () => {
  it('are in discovery: cs, get and list only, no storage version', async () => {
    const all = (await env.plinth.client.get('/api/v1')).body.resources as Array<Record<string, unknown>>;
    const cs = all.find((r) => r['name'] === 'componentstatuses')!;
    assert.deepEqual([cs['kind'], cs['namespaced'], cs['shortNames'], cs['verbs'], cs['storageVersionHash']], ['ComponentStatus', false, ['cs'], ['get', 'list'], undefined]);
  });

  it('list the scheduler, controller-manager and each etcd server, with the deprecation warning', async () => {
    const res = await env.plinth.client.get(CS);
    expectCode(res, 200);
    assert.equal(res.headers['warning'], WARNING);
    assert.equal(res.body.kind, 'ComponentStatusList');
    const byName = new Map((res.body.items as Array<{ metadata: { name: string }; conditions: Array<Record<string, string>> }>).map((i) => [i.metadata.name, i.conditions[0]!]));
    assert.deepEqual([...byName.keys()], ['scheduler', 'controller-manager', 'etcd-0']);
    assert.deepEqual(byName.get('scheduler'), {
      type: 'Healthy',
      status: 'False',
      message: 'Get "https://127.0.0.1:10259/healthz": dial tcp 127.0.0.1:10259: connect: connection refused',
    });
    assert.equal(byName.get('controller-manager')!['status'], 'False');
    const etcd = byName.get('etcd-0')!;
    assert.equal(etcd['status'], 'True');
    assert.match(etcd['message']!, /"health":"true"/);
  });

  it('get one, refuse an unknown name as kube does, and refuse writes and watches', async () => {
    const one = await env.plinth.client.get(`${CS}/etcd-0`);
    expectCode(one, 200);
    assert.equal(one.headers['warning'], WARNING);
    assert.deepEqual([one.body.apiVersion, one.body.kind, one.body.metadata.name, one.body.conditions[0].status], ['v1', 'ComponentStatus', 'etcd-0', 'True']);
    const missing = await env.plinth.client.get(`${CS}/nope`);
    expectCode(missing, 500);
    assert.equal(missing.body.message, 'Component not found: nope');
    expectCode(await env.plinth.client.post(CS, { apiVersion: 'v1', kind: 'ComponentStatus', metadata: { name: 'x' } }), 405);
    expectCode(await env.plinth.client.delete(`${CS}/etcd-0`), 405);
    expectCode(await env.plinth.client.get(`${CS}?watch=1`), 405);
    expectStatus(await env.plinth.client.get(`${CS}?fieldSelector=status%3Dx`), 400, 'BadRequest', '"status" is not a known field selector: only "metadata.name", "metadata.namespace"');
  });

  it("print kube's columns in kubectl get cs, with the warning", async () => {
    const out = await kubectl('get', 'cs');
    assert.equal(out.code, 0, out.stderr);
    assert.match(out.stderr, /Warning: v1 ComponentStatus is deprecated in v1\.19\+/);
    const lines = out.stdout.trimEnd().split('\n');
    assert.match(lines[0]!, /^NAME\s+STATUS\s+MESSAGE\s+ERROR$/);
    assert.ok(lines.some((l) => /^scheduler\s+Unhealthy\s+Get "https:\/\/127\.0\.0\.1:10259\/healthz": dial tcp 127\.0\.0\.1:10259: connect: connection refused\s*$/.test(l)), lines.join('\n'));
    assert.ok(lines.some((l) => /^etcd-0\s+Healthy\s+\{"health":"true"/.test(l)), lines.join('\n'));
  });

  it('answer Protobuf', async () => {
    const pb = await env.plinth.client.get(`${CS}/etcd-0`, { headers: { accept: 'application/vnd.kubernetes.protobuf' } });
    expectCode(pb, 200);
    const decoded = decodeProtobuf(pb.raw) as { kind: string; conditions: Array<{ type: string; status: string }> };
    assert.equal(decoded.kind, 'ComponentStatus');
    assert.deepEqual([decoded.conditions[0]!.type, decoded.conditions[0]!.status], ['Healthy', 'True']);
  });
});
