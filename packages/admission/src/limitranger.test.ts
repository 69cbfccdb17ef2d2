import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { ResourceDefinition, StoredObject } from '@plinth/api';
import { createLimitRanger } from './limitranger.js';
import { podViolations } from './limitranger-checks.js';
import { operationOptions, type AdmissionAttributes } from './interfaces.js';

const lr = (limits: unknown[]): StoredObject => ({ apiVersion: 'v1', kind: 'LimitRange', metadata: { name: 'l', namespace: 'a' }, spec: { limits } }) as StoredObject;
const podWith = (...containers: Array<Record<string, unknown>>): StoredObject =>
  ({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', namespace: 'a' }, spec: { containers: containers.map((resources, i) => ({ name: `c${i}`, resources })) } }) as StoredObject;

function podCreate(namespace: string, pod: StoredObject): AdmissionAttributes {
  return {
    operation: 'CREATE',
    resource: { group: '', version: 'v1', plural: 'pods' } as ResourceDefinition,
    subresource: '',
    namespace,
    name: 'p',
    kind: { group: '', version: 'v1', kind: 'Pod' },
    object: pod,
    oldObject: undefined,
    options: operationOptions('CREATE', {}),
    user: { name: 'u', groups: [] },
    dryRun: false,
  };
}

test('an empty watch cache is confirmed by a live read, reused for the TTL', async () => {
  let now = 0;
  const reads: string[] = [];
  const plugin = createLimitRanger({
    list: async (ns, fresh) => {
      reads.push(`${ns}${fresh ? ':fresh' : ''}`);
      return fresh && ns === 'a' ? [lr([{ type: 'Container', default: { cpu: '1' } }])] : [];
    },
    now: () => now,
  });
  const pod = podWith({});
  await plugin.admit!(podCreate('a', pod));
  assert.deepEqual((pod['spec'] as { containers: Array<{ resources: unknown }> }).containers[0]!.resources, { limits: { cpu: '1' } });
  await plugin.admit!(podCreate('a', podWith({})));
  now = 30_001;
  await plugin.admit!(podCreate('a', podWith({})));
  assert.deepEqual(reads, ['a', 'a:fresh', 'a', 'a', 'a:fresh']);
});

test('pod totals: cpu summed in milli-units, other resources in whole units; ratio printed as Go\'s %f', () => {
  const limits = lr([{ type: 'Pod', max: { cpu: '1', memory: '1Gi' }, maxLimitRequestRatio: { memory: '1.5' } }]);
  const pod = podWith({ limits: { cpu: '600m', memory: '1Gi' }, requests: { cpu: '600m', memory: '300Mi' } }, { limits: { cpu: '600m' }, requests: { cpu: '100m' } });
  // memory is not in every container: no pod memory limit, so no max check and no ratio for it.
  assert.deepEqual(podViolations(limits, pod), [
    'maximum cpu usage per Pod is 1, but limit is 1200m',
    'maximum memory usage per Pod is 1Gi.  No limit is specified',
    'memory max limit to request ratio per Pod is 1500m, but no request is specified or request is 0',
  ]);
  const ratio = lr([{ type: 'Container', maxLimitRequestRatio: { cpu: '3' } }]);
  assert.deepEqual(podViolations(ratio, podWith({ limits: { cpu: '1' }, requests: { cpu: '300m' } })), ['cpu max limit to request ratio per Container is 3, but provided ratio is 3.333333']);
});
