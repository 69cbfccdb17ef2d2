import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { JsonObject } from './access.js';
import { validatePodSpec } from './pod-spec.js';
import { type Cause, causes, createOptions, firstContainer, podFixture, specOf } from './test-fixtures.js';

/** Causes of a pod whose first container has the given members. */
function withContainer(members: JsonObject): Cause[] {
  const pod = podFixture();
  Object.assign(firstContainer(pod), members);
  return causes(validatePodSpec(specOf(pod), 'p', 'spec', createOptions()));
}

const probe = (handler: JsonObject, extra: JsonObject = {}): JsonObject => ({ ...handler, timeoutSeconds: 1, periodSeconds: 10, successThreshold: 1, failureThreshold: 3, ...extra });
const c0 = 'spec.containers[0]';

describe('probes: handlers (validateHandler)', () => {
  const table: Array<[string, JsonObject, Cause[]]> = [
    ['exec', { livenessProbe: probe({ exec: { command: ['true'] } }) }, []],
    ['httpGet by port name', { readinessProbe: probe({ httpGet: { path: '/', port: 'http', scheme: 'HTTPS' } }) }, []],
    ['grpc', { startupProbe: probe({ grpc: { port: 9000, service: '' } }) }, []],
    ['no handler', { livenessProbe: probe({}) }, [['FieldValueRequired', `${c0}.livenessProbe`, 'Required value: must specify a handler type']]],
    [
      'two handlers',
      { livenessProbe: probe({ exec: { command: ['true'] }, tcpSocket: { port: 80 } }) },
      [['FieldValueForbidden', `${c0}.livenessProbe.tcpSocket`, 'Forbidden: may not specify more than 1 handler type']],
    ],
    ['exec without a command', { livenessProbe: probe({ exec: {} }) }, [['FieldValueRequired', `${c0}.livenessProbe.exec.command`, 'Required value']]],
    [
      'httpGet without path, port or scheme, with a bad header',
      { readinessProbe: probe({ httpGet: { httpHeaders: [{ name: 'X Y', value: '' }] } }) },
      [
        ['FieldValueRequired', `${c0}.readinessProbe.httpGet.path`, 'Required value'],
        ['FieldValueInvalid', `${c0}.readinessProbe.httpGet.port`, 'Invalid value: 0: must be between 1 and 65535, inclusive'],
        ['FieldValueNotSupported', `${c0}.readinessProbe.httpGet.scheme`, 'Unsupported value: "": supported values: "HTTP", "HTTPS"'],
        [
          'FieldValueInvalid',
          `${c0}.readinessProbe.httpGet.httpHeaders`,
          "Invalid value: \"X Y\": a valid HTTP header must consist of alphanumeric characters or '-' (e.g. 'X-Header-Name', regex used for validation is '[-A-Za-z0-9]+')",
        ],
      ],
    ],
    [
      'tcpSocket with a port number in a string',
      { readinessProbe: probe({ tcpSocket: { port: '80' } }) },
      [['FieldValueInvalid', `${c0}.readinessProbe.tcpSocket.port`, 'Invalid value: "80": must contain at least one letter or number (a-z, 0-9)']],
    ],
    [
      'grpc port out of range',
      { readinessProbe: probe({ grpc: { port: 70000 } }) },
      [['FieldValueInvalid', `${c0}.readinessProbe.grpc.port`, 'Invalid value: 70000: must be between 1 and 65535, inclusive']],
    ],
    [
      'lifecycle handlers, with no grpc among them',
      { lifecycle: { postStart: { httpGet: { path: '/', port: 80, scheme: 'HTTP' } }, preStop: {} } },
      [['FieldValueRequired', `${c0}.lifecycle.preStop`, 'Required value: must specify a handler type']],
    ],
  ];
  for (const [name, members, want] of table) it(name, () => assert.deepEqual(withContainer(members), want));
});

describe('probes: numbers (validateProbe)', () => {
  const table: Array<[string, JsonObject, Cause[]]> = [
    [
      'negative numbers',
      { readinessProbe: probe({ exec: { command: ['x'] } }, { initialDelaySeconds: -1, timeoutSeconds: -2, periodSeconds: -3, failureThreshold: -4 }) },
      [
        ['FieldValueInvalid', `${c0}.readinessProbe.initialDelaySeconds`, 'Invalid value: -1: must be greater than or equal to 0'],
        ['FieldValueInvalid', `${c0}.readinessProbe.timeoutSeconds`, 'Invalid value: -2: must be greater than or equal to 0'],
        ['FieldValueInvalid', `${c0}.readinessProbe.periodSeconds`, 'Invalid value: -3: must be greater than or equal to 0'],
        ['FieldValueInvalid', `${c0}.readinessProbe.failureThreshold`, 'Invalid value: -4: must be greater than or equal to 0'],
      ],
    ],
    [
      'liveness successThreshold must be 1',
      { livenessProbe: probe({ exec: { command: ['x'] } }, { successThreshold: 2 }) },
      [['FieldValueInvalid', `${c0}.livenessProbe.successThreshold`, 'Invalid value: 2: must be 1']],
    ],
    ['readiness successThreshold may be more', { readinessProbe: probe({ exec: { command: ['x'] } }, { successThreshold: 3 }) }, []],
    [
      'startup probe errors come twice (kube 1.24 validates it twice)',
      { startupProbe: probe({ exec: {} }, { successThreshold: 2 }) },
      [
        ['FieldValueRequired', `${c0}.startupProbe.exec.command`, 'Required value'],
        ['FieldValueRequired', `${c0}.startupProbe.exec.command`, 'Required value'],
        ['FieldValueInvalid', `${c0}.startupProbe.successThreshold`, 'Invalid value: 2: must be 1'],
      ],
    ],
    [
      'terminationGracePeriodSeconds must be positive',
      { livenessProbe: probe({ exec: { command: ['x'] } }, { terminationGracePeriodSeconds: 0 }) },
      [['FieldValueInvalid', `${c0}.livenessProbe.terminationGracePeriodSeconds`, 'Invalid value: 0: must be greater than 0']],
    ],
    [
      'terminationGracePeriodSeconds is not for readiness',
      { readinessProbe: probe({ exec: { command: ['x'] } }, { terminationGracePeriodSeconds: 5 }) },
      [['FieldValueInvalid', `${c0}.readinessProbe.terminationGracePeriodSeconds`, 'Invalid value: 5: must not be set for readinessProbes']],
    ],
  ];
  for (const [name, members, want] of table) it(name, () => assert.deepEqual(withContainer(members), want));
});

describe('volume mounts and devices (ValidateVolumeMounts, ValidateVolumeDevices)', () => {
  const volumes = [
    { name: 'data', emptyDir: {} },
    { name: 'claim', persistentVolumeClaim: { claimName: 'pvc' } },
  ];
  function withMounts(members: JsonObject): Cause[] {
    const pod = podFixture({ volumes });
    Object.assign(firstContainer(pod), members);
    return causes(validatePodSpec(specOf(pod), 'p', 'spec', createOptions()));
  }
  const m = `${c0}.volumeMounts`;
  const d = `${c0}.volumeDevices`;
  const table: Array<[string, JsonObject, Cause[]]> = [
    ['a mount and a device', { volumeMounts: [{ name: 'data', mountPath: '/data' }], volumeDevices: [{ name: 'claim', devicePath: '/dev/xvda' }] }, []],
    [
      'a mount with no name and no path',
      { volumeMounts: [{}] },
      [
        ['FieldValueRequired', `${m}[0].name`, 'Required value'],
        ['FieldValueNotFound', `${m}[0].name`, 'Not found: ""'],
        ['FieldValueRequired', `${m}[0].mountPath`, 'Required value'],
      ],
    ],
    [
      'a mount path used twice',
      { volumeMounts: [{ name: 'data', mountPath: '/x' }, { name: 'data', mountPath: '/x' }] },
      [['FieldValueInvalid', `${m}[1].mountPath`, 'Invalid value: "/x": must be unique']],
    ],
    [
      'subPath absolute or stepping out (the path names the list)',
      { volumeMounts: [{ name: 'data', mountPath: '/a', subPath: '/abs' }, { name: 'data', mountPath: '/b', subPath: 'x/../..' }] },
      [
        ['FieldValueInvalid', `${m}.subPath`, 'Invalid value: "/abs": must be a relative path'],
        ['FieldValueInvalid', `${m}.subPath`, "Invalid value: \"x/../..\": must not contain '..'"],
      ],
    ],
    [
      'subPathExpr beside subPath',
      { volumeMounts: [{ name: 'data', mountPath: '/a', subPath: 'a', subPathExpr: '$(POD)' }] },
      [['FieldValueInvalid', `${m}[0].subPathExpr`, 'Invalid value: "$(POD)": subPathExpr and subPath are mutually exclusive']],
    ],
    [
      'mount propagation unknown, and Bidirectional unprivileged',
      { volumeMounts: [{ name: 'data', mountPath: '/a', mountPropagation: 'Both' }, { name: 'data', mountPath: '/b', mountPropagation: 'Bidirectional' }] },
      [
        ['FieldValueNotSupported', `${m}.mountPropagation`, 'Unsupported value: "Both": supported values: "Bidirectional", "HostToContainer", "None"'],
        ['FieldValueForbidden', `${m}.mountPropagation`, 'Forbidden: Bidirectional mount propagation is available only to privileged containers'],
      ],
    ],
    [
      'a device from a non-claim volume, unknown, repeated',
      { volumeDevices: [{ name: 'data', devicePath: '/dev/a' }, { name: 'nope', devicePath: '/dev/a' }] },
      [
        ['FieldValueInvalid', `${d}[0].name`, 'Invalid value: "data": can only use volume source type of PersistentVolumeClaim or Ephemeral for block mode'],
        ['FieldValueNotFound', `${d}[1].name`, 'Not found: "nope"'],
        ['FieldValueInvalid', `${d}[1].devicePath`, 'Invalid value: "/dev/a": must be unique'],
      ],
    ],
    [
      'a device path with backsteps',
      { volumeDevices: [{ name: 'claim', devicePath: '/dev/../etc' }] },
      [['FieldValueInvalid', `${d}[0].devicePath`, "Invalid value: \"/dev/../etc\": can not contain backsteps ('..')"]],
    ],
    [
      'one volume as mount and device, one path for both',
      { volumeMounts: [{ name: 'claim', mountPath: '/x' }], volumeDevices: [{ name: 'claim', devicePath: '/x' }] },
      [
        ['FieldValueInvalid', `${m}[0].name`, 'Invalid value: "claim": must not already exist in volumeDevices'],
        ['FieldValueInvalid', `${m}[0].mountPath`, 'Invalid value: "/x": must not already exist as a path in volumeDevices'],
        ['FieldValueInvalid', `${d}[0].name`, 'Invalid value: "claim": must not already exist in volumeMounts'],
        ['FieldValueInvalid', `${d}[0].devicePath`, 'Invalid value: "/x": must not already exist as a path in volumeMounts'],
      ],
    ],
  ];
  for (const [name, members, want] of table) it(name, () => assert.deepEqual(withMounts(members), want));
});
