import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { JsonObject } from './access.js';
import { validatePodSpec } from './pod-spec.js';
import { type Cause, causes, containerFixture, createOptions, firstContainer, podFixture, specOf } from './test-fixtures.js';
import type { PodValidationOptions } from './pod-options.js';

function run(spec: JsonObject, container: JsonObject = {}, opts: Partial<PodValidationOptions> = {}): Cause[] {
  const pod = podFixture(spec);
  Object.assign(firstContainer(pod), container);
  return causes(validatePodSpec(specOf(pod), 'p', 'spec', createOptions(opts)));
}

const ID_MSG = 'must be between 0 and 2147483647, inclusive';
const sc = 'spec.securityContext';
const csc = 'spec.containers[0].securityContext';

describe('security: the pod security context (ValidatePodSecurityContext)', () => {
  const table: Array<[string, JsonObject, Cause[]]> = [
    ['ids in range', { securityContext: { runAsUser: 0, runAsGroup: 2147483647, fsGroup: 1, supplementalGroups: [5] } }, []],
    [
      'ids out of range, in kube\'s order',
      { securityContext: { runAsGroup: -2, runAsUser: -1, fsGroup: 2147483648, supplementalGroups: [1, -3] } },
      [
        ['FieldValueInvalid', `${sc}.fsGroup`, `Invalid value: 2147483648: ${ID_MSG}`],
        ['FieldValueInvalid', `${sc}.runAsUser`, `Invalid value: -1: ${ID_MSG}`],
        ['FieldValueInvalid', `${sc}.runAsGroup`, `Invalid value: -2: ${ID_MSG}`],
        ['FieldValueInvalid', `${sc}.supplementalGroups[1]`, `Invalid value: -3: ${ID_MSG}`],
      ],
    ],
    [
      'shareProcessNamespace with hostPID',
      { hostPID: true, shareProcessNamespace: true },
      [['FieldValueInvalid', `${sc}.shareProcessNamespace`, 'Invalid value: true: ShareProcessNamespace and HostPID cannot both be enabled']],
    ],
    [
      'fsGroupChangePolicy unknown',
      { securityContext: { fsGroupChangePolicy: 'Sometimes' } },
      [['FieldValueNotSupported', `${sc}.fsGroupChangePolicy`, 'Unsupported value: "Sometimes": supported values: "Always", "OnRootMismatch"']],
    ],
    [
      'sysctls: missing, malformed, repeated; slashes allowed',
      { securityContext: { sysctls: [{ value: '1' }, { name: 'net.ipv4..x' }, { name: 'net/ipv4/conf/eth0.100/forwarding' }, { name: 'net/ipv4/conf/eth0.100/forwarding' }] } },
      [
        ['FieldValueRequired', `${sc}.sysctls[0].name`, 'Required value'],
        [
          'FieldValueInvalid',
          `${sc}.sysctls[1].name`,
          'Invalid value: "net.ipv4..x": must have at most 253 characters and match regex ([a-z0-9]([-_a-z0-9]*[a-z0-9])?[\\./])*[a-z0-9]([-_a-z0-9]*[a-z0-9])?',
        ],
        ['FieldValueDuplicate', `${sc}.sysctls[3].name`, 'Duplicate value: "net/ipv4/conf/eth0.100/forwarding"'],
      ],
    ],
    [
      'seccompProfile: type required, unknown, Localhost needs a relative profile',
      { securityContext: { seccompProfile: { localhostProfile: 'x' } } },
      [
        ['FieldValueRequired', `${sc}.seccompProfile.type`, 'Required value: type is required when seccompProfile is set'],
        ['FieldValueInvalid', `${sc}.seccompProfile.localhostProfile`, 'Invalid value: {"localhostProfile":"x"}: can only be set when seccomp type is Localhost'],
      ],
    ],
    [
      'seccompProfile Localhost',
      { securityContext: { seccompProfile: { type: 'Localhost' } } },
      [['FieldValueRequired', `${sc}.seccompProfile.localhostProfile`, 'Required value: must be set when seccomp type is Localhost']],
    ],
    [
      'seccompProfile Localhost outside the profile root',
      { securityContext: { seccompProfile: { type: 'Localhost', localhostProfile: '../x' } } },
      [['FieldValueInvalid', `${sc}.seccompProfile.localhostProfile`, "Invalid value: \"../x\": must not contain '..'"]],
    ],
    [
      'seccompProfile type unknown',
      { securityContext: { seccompProfile: { type: 'Default' } } },
      [['FieldValueNotSupported', `${sc}.seccompProfile.type`, 'Unsupported value: "Default": supported values: "Localhost", "RuntimeDefault", "Unconfined"']],
    ],
  ];
  for (const [name, spec, want] of table) it(name, () => assert.deepEqual(run(spec), want));
  it('without slashes when AllowSysctlRegexContainSlash is off', () =>
    assert.deepEqual(run({ securityContext: { sysctls: [{ name: 'net/core/somaxconn' }] } }, {}, { allowSysctlRegexContainSlash: false }), [
      ['FieldValueInvalid', `${sc}.sysctls[0].name`, 'Invalid value: "net/core/somaxconn": must have at most 253 characters and match regex ([a-z0-9]([-_a-z0-9]*[a-z0-9])?\\.)*[a-z0-9]([-_a-z0-9]*[a-z0-9])?'],
    ]));
});

describe('security: a container security context (ValidateSecurityContext)', () => {
  const table: Array<[string, JsonObject, Cause[]]> = [
    [
      'ids and procMount',
      { runAsUser: -1, runAsGroup: -1, procMount: 'Masked' },
      [
        ['FieldValueInvalid', `${csc}.runAsUser`, `Invalid value: -1: ${ID_MSG}`],
        ['FieldValueInvalid', `${csc}.runAsGroup`, `Invalid value: -1: ${ID_MSG}`],
        ['FieldValueNotSupported', `${csc}.procMount`, 'Unsupported value: "Masked": supported values: "Default", "Unmasked"'],
      ],
    ],
    [
      'no privilege escalation, yet CAP_SYS_ADMIN',
      { allowPrivilegeEscalation: false, capabilities: { add: ['CAP_SYS_ADMIN'] } },
      [['FieldValueInvalid', csc, 'Invalid value: {"allowPrivilegeEscalation":false,"capabilities":{"add":["CAP_SYS_ADMIN"]}}: cannot set `allowPrivilegeEscalation` to false and `capabilities.Add` CAP_SYS_ADMIN']],
    ],
  ];
  for (const [name, securityContext, want] of table) it(name, () => assert.deepEqual(run({}, { securityContext }), want));
  it('no privilege escalation, yet privileged', () =>
    assert.deepEqual(run({}, { securityContext: { allowPrivilegeEscalation: false, privileged: true } }, { allowPrivileged: true }), [
      ['FieldValueInvalid', csc, 'Invalid value: {"allowPrivilegeEscalation":false,"privileged":true}: cannot set `allowPrivilegeEscalation` to false and `privileged` to true'],
    ]));
});

describe('security: Windows options and hostProcess (validateWindowsSecurityContextOptions, validateWindowsHostProcessPod)', () => {
  const wo = (o: JsonObject): JsonObject => ({ securityContext: { windowsOptions: o } });
  const w = `${csc}.windowsOptions`;
  const table: Array<[string, JsonObject, Cause[]]> = [
    ['a domain user', wo({ runAsUserName: 'CONTOSO\\svc', gmsaCredentialSpecName: 'gmsa', gmsaCredentialSpec: '{}' }), []],
    ['an empty credential spec', wo({ gmsaCredentialSpec: '' }), [['FieldValueInvalid', `${w}.gmsaCredentialSpec`, 'Invalid value: "": gmsaCredentialSpec cannot be an empty string']]],
    [
      'a credential spec over 64 KiB',
      wo({ gmsaCredentialSpec: 'x'.repeat(64 * 1024 + 1) }),
      [['FieldValueInvalid', `${w}.gmsaCredentialSpec`, `Invalid value: "${'x'.repeat(64 * 1024 + 1)}": gmsaCredentialSpec size must be under 64 KiB`]],
    ],
    ['user name with two backslashes', wo({ runAsUserName: 'a\\b\\c' }), [['FieldValueInvalid', `${w}.runAsUserName`, 'Invalid value: "a\\\\b\\\\c": runAsUserName cannot contain more than one backslash']]],
    ['user name with a control character', wo({ runAsUserName: 'a\u0001' }), [['FieldValueInvalid', `${w}.runAsUserName`, 'Invalid value: "a\\u0001": runAsUserName cannot contain control characters']]],
    [
      'user name: bad domain, dots only',
      wo({ runAsUserName: '.dom\\..' }),
      [
        ['FieldValueInvalid', `${w}.runAsUserName`, 'Invalid value: ".dom\\\\..": runAsUserName\'s Domain doesn\'t match the NetBios nor the DNS format'],
        ['FieldValueInvalid', `${w}.runAsUserName`, 'Invalid value: ".dom\\\\..": runAsUserName\'s User cannot contain only periods or spaces'],
      ],
    ],
    [
      'user name: too long, forbidden characters',
      wo({ runAsUserName: `${'u'.repeat(104)}@` }),
      [
        ['FieldValueInvalid', `${w}.runAsUserName`, `Invalid value: "${'u'.repeat(104)}@": runAsUserName's User length must not be longer than 104 characters`],
        ['FieldValueInvalid', `${w}.runAsUserName`, `Invalid value: "${'u'.repeat(104)}@": runAsUserName's User cannot contain the following characters: "/\\:;|=,+*?<>@[]`],
      ],
    ],
  ];
  for (const [name, container, want] of table) it(name, () => assert.deepEqual(run({}, container), want));

  const hp = (v: boolean): JsonObject => ({ windowsOptions: { hostProcess: v } });
  it('hostProcess containers need hostNetwork, all containers, and --allow-privileged', () =>
    assert.deepEqual(run({ containers: [{ ...containerFixture('a'), securityContext: hp(true) }, containerFixture('b')] }), [
      ['FieldValueInvalid', 'spec', 'Invalid value: "": If pod contains any hostProcess containers then all containers must be HostProcess containers'],
      ['FieldValueInvalid', 'spec.hostNetwork', 'Invalid value: false: hostNetwork must be true if pod contains any hostProcess containers'],
      ['FieldValueForbidden', 'spec', 'Forbidden: hostProcess containers are disallowed by cluster policy'],
    ]));
  it('a pod-level hostProcess is inherited; a differing container value is refused', () =>
    assert.deepEqual(run({ hostNetwork: true, securityContext: hp(true), containers: [{ ...containerFixture('c'), securityContext: hp(false) }, containerFixture('b')] }, {}, { allowPrivileged: true }), [
      ['FieldValueInvalid', `${csc}.windowsOptions.hostProcess`, 'Invalid value: false: pod hostProcess value must be identical if both are specified, was true'],
      ['FieldValueInvalid', 'spec', 'Invalid value: "": If pod contains any hostProcess containers then all containers must be HostProcess containers'],
    ]));
  it('hostProcess while the gate is off', () =>
    assert.deepEqual(run({}, { securityContext: hp(true) }, { allowWindowsHostProcessField: false }), [
      ['FieldValueForbidden', `${csc}.windowsOptions.hostProcess`, "Forbidden: not allowed when feature gate 'WindowsHostProcessContainers' is not enabled"],
      ['FieldValueForbidden', 'spec', "Forbidden: pod must not contain Windows hostProcess containers when feature gate 'WindowsHostProcessContainers' is not enabled"],
    ]));
});

describe('security: OS-specific rules (validateLinux, validateWindows)', () => {
  it('a linux pod has no Windows options', () =>
    assert.deepEqual(run({ os: { name: 'linux' }, securityContext: { windowsOptions: {} } }, { securityContext: { windowsOptions: {} } }), [
      ['FieldValueForbidden', 'spec.securityContext.windowsOptions', 'Forbidden: windows options cannot be set for a linux pod'],
      ['FieldValueForbidden', `${csc}.windowsOptions`, 'Forbidden: windows options cannot be set for a linux pod'],
    ]));
  it('a windows pod has none of the Linux settings', () =>
    assert.deepEqual(
      run(
        { os: { name: 'windows' }, hostPID: true, shareProcessNamespace: false, securityContext: { seLinuxOptions: {}, runAsUser: 1, supplementalGroups: [] } },
        { securityContext: { privileged: false, readOnlyRootFilesystem: true, runAsGroup: 1 } },
      ),
      [
        ['FieldValueForbidden', 'spec.securityContext.seLinuxOptions', 'Forbidden: cannot be set for a windows pod'],
        ['FieldValueForbidden', 'spec.hostPID', 'Forbidden: cannot be set for a windows pod'],
        ['FieldValueForbidden', 'spec.shareProcessNamespace', 'Forbidden: cannot be set for a windows pod'],
        ['FieldValueForbidden', 'spec.securityContext.runAsUser', 'Forbidden: cannot be set for a windows pod'],
        ['FieldValueForbidden', 'spec.securityContext.supplementalGroups', 'Forbidden: cannot be set for a windows pod'],
        ['FieldValueForbidden', `${csc}.readOnlyRootFilesystem`, 'Forbidden: cannot be set for a windows pod'],
        ['FieldValueForbidden', `${csc}.privileged`, 'Forbidden: cannot be set for a windows pod'],
        ['FieldValueForbidden', `${csc}.runAsGroup`, 'Forbidden: cannot be set for a windows pod'],
      ],
    ));
});
