import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadAdmissionConfig } from './admission-config.js';

const dir = mkdtempSync(join(tmpdir(), 'admission-config-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const file = (name: string, text: string): string => {
  const p = join(dir, name);
  writeFileSync(p, text);
  return p;
};

test('inline configurations and files relative to the configuration file are read per plugin', () => {
  file('erl.yaml', 'apiVersion: eventratelimit.admission.k8s.io/v1alpha1\nkind: Configuration\nlimits:\n- type: Server\n  qps: 5\n  burst: 10\n');
  const cfg = loadAdmissionConfig(
    file(
      'admission.yaml',
      [
        'apiVersion: apiserver.config.k8s.io/v1',
        'kind: AdmissionConfiguration',
        'plugins:',
        '- name: PodSecurity',
        '  configuration:',
        '    apiVersion: pod-security.admission.config.k8s.io/v1beta1',
        '    kind: PodSecurityConfiguration',
        '    defaults: {enforce: baseline}',
        '- name: EventRateLimit',
        '  path: erl.yaml',
        '- name: Empty',
      ].join('\n'),
    ),
  );
  assert.equal((cfg.get('PodSecurity')?.['defaults'] as Record<string, string>)['enforce'], 'baseline');
  assert.equal(cfg.get('EventRateLimit')?.['kind'], 'Configuration');
  assert.equal(cfg.has('Empty'), false);
});

test('JSON is read too, and no file means no configuration', () => {
  const cfg = loadAdmissionConfig(file('a.json', JSON.stringify({ apiVersion: 'apiserver.config.k8s.io/v1alpha1', kind: 'AdmissionConfiguration', plugins: [{ name: 'X', configuration: { a: 1 } }] })));
  assert.deepEqual(cfg.get('X'), { a: 1 });
  assert.equal(loadAdmissionConfig('').size, 0);
});

test('a wrong kind, a missing file, a bad plugin entry or YAML aliases fail start-up with a message', () => {
  assert.throws(() => loadAdmissionConfig(file('w.yaml', 'apiVersion: v1\nkind: ConfigMap\n')), /expected kind AdmissionConfiguration/);
  assert.throws(() => loadAdmissionConfig(join(dir, 'missing.yaml')), /unable to read admission control configuration/);
  assert.throws(() => loadAdmissionConfig(file('n.yaml', 'apiVersion: apiserver.config.k8s.io/v1\nkind: AdmissionConfiguration\nplugins:\n- path: x\n')), /plugins\[0\]\.name is required/);
  assert.throws(() => loadAdmissionConfig(file('p.yaml', 'apiVersion: apiserver.config.k8s.io/v1\nkind: AdmissionConfiguration\nplugins:\n- name: X\n  path: nope.yaml\n')), /unable to read configuration of admission plugin X/);
  assert.throws(() => loadAdmissionConfig(file('al.yaml', 'apiVersion: apiserver.config.k8s.io/v1\nkind: AdmissionConfiguration\nx: &a [1]\ny: *a\n')), /unable to decode/);
});
