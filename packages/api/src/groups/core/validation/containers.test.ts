import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { JsonObject } from './access.js';
import { validatePod } from './pod.js';
import { validatePodSpec } from './pod-spec.js';
import { type Cause, DNS_LABEL_MSG, causes, containerFixture, createOptions, firstContainer, podFixture, specOf } from './test-fixtures.js';

interface Case {
  name: string;
  container?: JsonObject;
  spec?: JsonObject;
  want: Cause[];
}

/** Each case patches the first container (or the spec) of a valid pod. */
function run(table: Case[]): void {
  for (const c of table) {
    it(c.name, () => {
      const pod = podFixture(c.spec ?? {});
      Object.assign(firstContainer(pod), c.container ?? {});
      assert.deepEqual(causes(validatePodSpec(specOf(pod), 'p', 'spec', createOptions())), c.want);
    });
  }
}

const c0 = 'spec.containers[0]';

describe('containers: names, images, policies (validateContainers)', () => {
  run([
    { name: 'name missing', container: { name: '' }, want: [['FieldValueRequired', `${c0}.name`, 'Required value']] },
    { name: 'name not a DNS label', container: { name: 'Web' }, want: [['FieldValueInvalid', `${c0}.name`, `Invalid value: "Web": ${DNS_LABEL_MSG}`]] },
    {
      name: 'duplicate names',
      spec: { containers: [containerFixture('a'), containerFixture('a')] },
      want: [['FieldValueDuplicate', 'spec.containers[1].name', 'Duplicate value: "a"']],
    },
    { name: 'image missing', container: { image: '' }, want: [['FieldValueRequired', `${c0}.image`, 'Required value']] },
    { name: 'imagePullPolicy missing', container: { imagePullPolicy: '' }, want: [['FieldValueRequired', `${c0}.imagePullPolicy`, 'Required value']] },
    {
      name: 'imagePullPolicy unknown',
      container: { imagePullPolicy: 'Sometimes' },
      want: [['FieldValueNotSupported', `${c0}.imagePullPolicy`, 'Unsupported value: "Sometimes": supported values: "Always", "IfNotPresent", "Never"']],
    },
    {
      name: 'terminationMessagePolicy missing',
      container: { terminationMessagePolicy: '' },
      want: [['FieldValueRequired', `${c0}.terminationMessagePolicy`, "Required value: must be 'File' or 'FallbackToLogsOnError'"]],
    },
    {
      name: 'terminationMessagePolicy unknown',
      container: { terminationMessagePolicy: 'Logs' },
      want: [['FieldValueInvalid', `${c0}.terminationMessagePolicy`, 'Invalid value: "Logs": must be \'File\' or \'FallbackToLogsOnError\'']],
    },
    { name: 'FallbackToLogsOnError', container: { terminationMessagePolicy: 'FallbackToLogsOnError' }, want: [] },
    {
      name: 'privileged without --allow-privileged',
      container: { securityContext: { privileged: true } },
      want: [['FieldValueForbidden', `${c0}.securityContext.privileged`, 'Forbidden: disallowed by cluster policy']],
    },
  ]);
  it('privileged with --allow-privileged', () => {
    const pod = podFixture();
    firstContainer(pod)['securityContext'] = { privileged: true };
    assert.deepEqual(causes(validatePod(pod, createOptions({ allowPrivileged: true }))), []);
  });
});

describe('containers: ports (validateContainerPorts, checkHostPortConflicts)', () => {
  const port = (p: JsonObject): JsonObject => ({ ports: [{ protocol: 'TCP', ...p }] });
  run([
    { name: 'containerPort missing', container: port({}), want: [['FieldValueRequired', `${c0}.ports[0].containerPort`, 'Required value']] },
    {
      name: 'containerPort out of range',
      container: port({ containerPort: 65536 }),
      want: [['FieldValueInvalid', `${c0}.ports[0].containerPort`, 'Invalid value: 65536: must be between 1 and 65535, inclusive']],
    },
    {
      name: 'hostPort out of range',
      container: port({ containerPort: 80, hostPort: -1 }),
      want: [['FieldValueInvalid', `${c0}.ports[0].hostPort`, 'Invalid value: -1: must be between 1 and 65535, inclusive']],
    },
    { name: 'protocol missing', container: { ports: [{ containerPort: 80 }] }, want: [['FieldValueRequired', `${c0}.ports[0].protocol`, 'Required value']] },
    {
      name: 'protocol unknown',
      container: port({ containerPort: 80, protocol: 'ICMP' }),
      want: [['FieldValueNotSupported', `${c0}.ports[0].protocol`, 'Unsupported value: "ICMP": supported values: "SCTP", "TCP", "UDP"']],
    },
    {
      name: 'port name invalid',
      container: port({ containerPort: 80, name: 'HTTP--' }),
      want: [
        ['FieldValueInvalid', `${c0}.ports[0].name`, 'Invalid value: "HTTP--": must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)'],
        ['FieldValueInvalid', `${c0}.ports[0].name`, 'Invalid value: "HTTP--": must contain at least one letter or number (a-z, 0-9)'],
        ['FieldValueInvalid', `${c0}.ports[0].name`, 'Invalid value: "HTTP--": must not contain consecutive hyphens'],
        ['FieldValueInvalid', `${c0}.ports[0].name`, 'Invalid value: "HTTP--": must not begin or end with a hyphen'],
      ],
    },
    {
      name: 'port name too long',
      container: port({ containerPort: 80, name: 'a'.repeat(16) }),
      want: [['FieldValueInvalid', `${c0}.ports[0].name`, `Invalid value: "${'a'.repeat(16)}": must be no more than 15 characters`]],
    },
    {
      name: 'port names repeat',
      container: { ports: [{ name: 'http', containerPort: 80, protocol: 'TCP' }, { name: 'http', containerPort: 81, protocol: 'TCP' }] },
      want: [['FieldValueDuplicate', `${c0}.ports[1].name`, 'Duplicate value: "http"']],
    },
    {
      name: 'host port used twice across containers',
      spec: {
        containers: [
          { ...containerFixture('a'), ports: [{ containerPort: 80, hostPort: 8080, protocol: 'TCP' }] },
          { ...containerFixture('b'), ports: [{ containerPort: 81, hostPort: 8080, protocol: 'TCP' }] },
        ],
      },
      want: [['FieldValueDuplicate', 'spec.containers[1].ports[0].hostPort', 'Duplicate value: "TCP//8080"']],
    },
    {
      name: 'one host port per protocol and host IP',
      spec: {
        containers: [
          {
            ...containerFixture('a'),
            ports: [
              { containerPort: 80, hostPort: 8080, protocol: 'TCP' },
              { containerPort: 80, hostPort: 8080, protocol: 'UDP' },
              { containerPort: 80, hostPort: 8080, protocol: 'TCP', hostIP: '10.0.0.1' },
            ],
          },
        ],
      },
      want: [],
    },
    {
      name: 'hostNetwork needs containerPort == hostPort',
      spec: { hostNetwork: true },
      container: port({ containerPort: 80, hostPort: 81 }),
      want: [['FieldValueInvalid', `${c0}.ports[0].containerPort`, 'Invalid value: 80: must match `hostPort` when `hostNetwork` is true']],
    },
  ]);
});

describe('init containers (validateInitContainers)', () => {
  run([
    {
      name: 'name shared with a container',
      spec: { initContainers: [containerFixture('c')] },
      want: [['FieldValueDuplicate', 'spec.initContainers[0].name', 'Duplicate value: "c"']],
    },
    {
      name: 'probes and lifecycle are not for init containers',
      spec: { initContainers: [{ ...containerFixture('i'), lifecycle: { preStop: { exec: { command: ['x'] } } }, readinessProbe: { exec: { command: ['x'] }, successThreshold: 1 } }] },
      want: [
        ['FieldValueInvalid', 'spec.initContainers[0].lifecycle', 'Invalid value: {"preStop":{"exec":{"command":["x"]}}}: must not be set for init containers'],
        ['FieldValueInvalid', 'spec.initContainers[0].readinessProbe', 'Invalid value: {"exec":{"command":["x"]},"successThreshold":1}: must not be set for init containers'],
      ],
    },
    {
      name: 'host ports repeat within one init container (kube reports index 0)',
      spec: {
        initContainers: [
          containerFixture('i0'),
          { ...containerFixture('i1'), ports: [{ containerPort: 1, hostPort: 9, protocol: 'TCP' }, { containerPort: 2, hostPort: 9, protocol: 'TCP' }] },
        ],
      },
      want: [['FieldValueDuplicate', 'spec.initContainers[0].ports[1].hostPort', 'Duplicate value: "TCP//9"']],
    },
    {
      name: 'host ports may repeat across init containers',
      spec: {
        initContainers: [
          { ...containerFixture('i0'), ports: [{ containerPort: 1, hostPort: 9, protocol: 'TCP' }] },
          { ...containerFixture('i1'), ports: [{ containerPort: 1, hostPort: 9, protocol: 'TCP' }] },
        ],
      },
      want: [],
    },
  ]);
});

describe('ephemeral containers (validateEphemeralContainers)', () => {
  const ec = (extra: JsonObject): JsonObject => ({ spec: { ephemeralContainers: [{ ...containerFixture('debug'), ...extra }] } });
  const e0 = 'spec.ephemeralContainers[0]';
  run([
    { name: 'a valid one', ...ec({ targetContainerName: 'c', stdin: true, tty: true }), want: [] },
    { name: 'unknown target', ...ec({ targetContainerName: 'x' }), want: [['FieldValueNotFound', `${e0}.targetContainerName`, 'Not found: "x"']] },
    { name: 'no name', ...ec({ name: '' }), want: [['FieldValueRequired', e0, 'Required value: ephemeralContainer requires a name']] },
    { name: 'name of a container', ...ec({ name: 'c' }), want: [['FieldValueDuplicate', `${e0}.name`, 'Duplicate value: "c"']] },
    {
      name: 'errors of its own fields carry kube\'s extra [0]',
      ...ec({ image: ' busybox', imagePullPolicy: '' }),
      want: [
        ['FieldValueRequired', `${e0}[0].imagePullPolicy`, 'Required value'],
        ['FieldValueInvalid', `${e0}[0].image`, 'Invalid value: " busybox": must not have leading or trailing whitespace'],
      ],
    },
    {
      name: 'ports, resources, probes and lifecycle are forbidden',
      ...ec({
        ports: [],
        resources: { limits: {} },
        livenessProbe: { exec: { command: ['x'] }, successThreshold: 1 },
        lifecycle: { postStart: { exec: { command: ['x'] } } },
      }),
      want: [
        ['FieldValueForbidden', `${e0}.ports`, 'Forbidden: cannot be set for an Ephemeral Container'],
        ['FieldValueForbidden', `${e0}.resources`, 'Forbidden: cannot be set for an Ephemeral Container'],
        ['FieldValueForbidden', `${e0}.livenessProbe`, 'Forbidden: cannot be set for an Ephemeral Container'],
        ['FieldValueForbidden', `${e0}.lifecycle`, 'Forbidden: cannot be set for an Ephemeral Container'],
      ],
    },
    { name: 'empty resources are no resources', ...ec({ resources: {} }), want: [] },
    {
      name: 'subPath mounts are forbidden',
      spec: { volumes: [{ name: 'v', emptyDir: {} }], ephemeralContainers: [{ ...containerFixture('debug'), volumeMounts: [{ name: 'v', mountPath: '/v', subPath: 'x' }] }] },
      want: [['FieldValueForbidden', `${e0}.volumeMounts[0].subPath`, 'Forbidden: cannot be set for an Ephemeral Container']],
    },
  ]);
});
