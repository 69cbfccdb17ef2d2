import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { JsonObject } from './access.js';
import { validatePodSpec } from './pod-spec.js';
import { validateOnlyAddedTolerations } from './tolerations.js';
import { type Cause, DNS_SUBDOMAIN_MSG, QUALIFIED_NAME_MSG, causes, createOptions, podFixture, specOf } from './test-fixtures.js';
import type { PodValidationOptions } from './pod-options.js';

function run(spec: JsonObject, opts: Partial<PodValidationOptions> = {}): Cause[] {
  const pod = podFixture(spec);
  return causes(validatePodSpec(specOf(pod), 'p', 'spec', createOptions(opts)));
}

const na = 'spec.affinity.nodeAffinity';
const req = 'requiredDuringSchedulingIgnoredDuringExecution';
const pref = 'preferredDuringSchedulingIgnoredDuringExecution';
const terms = (...t: JsonObject[]): JsonObject => ({ affinity: { nodeAffinity: { [req]: { nodeSelectorTerms: t } } } });

describe('affinity: node affinity (ValidateNodeSelector, ValidatePreferredSchedulingTerms)', () => {
  const table: Array<[string, JsonObject, Cause[]]> = [
    ['no terms', terms(), [['FieldValueRequired', `${na}.${req}.nodeSelectorTerms`, 'Required value: must have at least one node selector term']]],
    [
      'expression operators and values',
      terms({
        matchExpressions: [
          { key: 'a', operator: 'In' },
          { key: 'b', operator: 'Exists', values: ['x'] },
          { key: 'c', operator: 'Gt', values: ['1', '2'] },
          { key: 'd', operator: 'Equals' },
          { key: 'bad key', operator: 'Lt', values: ['1'] },
        ],
      }),
      [
        ['FieldValueRequired', `${na}.${req}.nodeSelectorTerms[0].matchExpressions[0].values`, "Required value: must be specified when `operator` is 'In' or 'NotIn'"],
        ['FieldValueForbidden', `${na}.${req}.nodeSelectorTerms[0].matchExpressions[1].values`, "Forbidden: may not be specified when `operator` is 'Exists' or 'DoesNotExist'"],
        ['FieldValueRequired', `${na}.${req}.nodeSelectorTerms[0].matchExpressions[2].values`, "Required value: must be specified single value when `operator` is 'Lt' or 'Gt'"],
        ['FieldValueInvalid', `${na}.${req}.nodeSelectorTerms[0].matchExpressions[3].operator`, 'Invalid value: "Equals": not a valid selector operator'],
        ['FieldValueInvalid', `${na}.${req}.nodeSelectorTerms[0].matchExpressions[4].key`, `Invalid value: "bad key": ${QUALIFIED_NAME_MSG}`],
      ],
    ],
    [
      'match fields: only metadata.name In one node',
      terms({ matchFields: [{ key: 'metadata.name', operator: 'In', values: ['a', 'b'] }, { key: 'spec.x', operator: 'Exists' }, { key: 'metadata.name', operator: 'NotIn', values: ['N'] }] }),
      [
        ['FieldValueRequired', `${na}.${req}.nodeSelectorTerms[0].matchFields[0].values`, "Required value: must be only one value when `operator` is 'In' or 'NotIn' for node field selector"],
        ['FieldValueInvalid', `${na}.${req}.nodeSelectorTerms[0].matchFields[1].operator`, 'Invalid value: "Exists": not a valid selector operator'],
        ['FieldValueInvalid', `${na}.${req}.nodeSelectorTerms[0].matchFields[1].key`, 'Invalid value: "spec.x": not a valid field selector key'],
        ['FieldValueInvalid', `${na}.${req}.nodeSelectorTerms[0].matchFields[2].values[0]`, `Invalid value: "N": ${DNS_SUBDOMAIN_MSG}`],
      ],
    ],
    [
      'preferred terms weigh 1-100',
      { affinity: { nodeAffinity: { [pref]: [{ weight: 0, preference: {} }, { weight: 101, preference: { matchExpressions: [{ key: 'k', operator: 'Exists' }] } }] } } },
      [
        ['FieldValueInvalid', `${na}.${pref}[0].weight`, 'Invalid value: 0: must be in the range 1-100'],
        ['FieldValueInvalid', `${na}.${pref}[1].weight`, 'Invalid value: 101: must be in the range 1-100'],
      ],
    ],
  ];
  for (const [name, spec, want] of table) it(name, () => assert.deepEqual(run(spec), want));
});

describe('affinity: pod affinity and anti-affinity (validatePodAffinityTerm)', () => {
  const pa = 'spec.affinity.podAffinity';
  const paa = 'spec.affinity.podAntiAffinity';
  const table: Array<[string, JsonObject, Cause[]]> = [
    [
      'topology key, namespaces, selectors',
      {
        affinity: {
          podAffinity: { [req]: [{ labelSelector: { matchExpressions: [{ key: 'a', operator: 'In' }] }, namespaces: ['Bad'], namespaceSelector: { matchLabels: { 'a b': 'c' } } }] },
        },
      },
      [
        ['FieldValueRequired', `${pa}.${req}[0].labelSelector.matchExpressions[0].values`, "Required value: must be specified when `operator` is 'In' or 'NotIn'"],
        ['FieldValueInvalid', `${pa}.${req}[0].namespaceSelector.matchLabels`, `Invalid value: "a b": ${QUALIFIED_NAME_MSG}`],
        [
          'FieldValueInvalid',
          `${pa}.${req}[0].namespace`,
          "Invalid value: \"Bad\": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')",
        ],
        ['FieldValueRequired', `${pa}.${req}[0].topologyKey`, 'Required value: can not be empty'],
        ['FieldValueInvalid', `${pa}.${req}[0].topologyKey`, 'Invalid value: "": name part must be non-empty'],
        ['FieldValueInvalid', `${pa}.${req}[0].topologyKey`, `Invalid value: "": ${QUALIFIED_NAME_MSG}`],
      ],
    ],
    [
      'anti-affinity weights',
      { affinity: { podAntiAffinity: { [pref]: [{ weight: 200, podAffinityTerm: { topologyKey: 'zone' } }] } } },
      [['FieldValueInvalid', `${paa}.${pref}[0].weight`, 'Invalid value: 200: must be in the range 1-100']],
    ],
  ];
  for (const [name, spec, want] of table) it(name, () => assert.deepEqual(run(spec), want));
});

describe('tolerations (ValidateTolerations, validateOnlyAddedTolerations)', () => {
  const t = 'spec.tolerations';
  const table: Array<[string, JsonObject[], Cause[]]> = [
    ['match everything', [{ operator: 'Exists' }], []],
    [
      'no key needs Exists',
      [{ operator: 'Equal', value: 'x' }],
      [['FieldValueInvalid', `${t}[0].operator`, 'Invalid value: "Equal": operator must be Exists when `key` is empty, which means "match all values and all keys"']],
    ],
    ['tolerationSeconds needs NoExecute', [{ key: 'k', operator: 'Exists', effect: 'NoSchedule', tolerationSeconds: 5 }], [['FieldValueInvalid', `${t}[0].effect`, "Invalid value: \"NoSchedule\": effect must be 'NoExecute' when `tolerationSeconds` is set"]]],
    [
      'a value with Exists (kube prints the whole toleration)',
      [{ key: 'k', operator: 'Exists', value: 'v' }],
      [['FieldValueInvalid', `${t}[0].operator`, 'Invalid value: core.Toleration{Key:"k", Operator:"Exists", Value:"v", Effect:"", TolerationSeconds:(*int64)(nil)}: value must be empty when `operator` is \'Exists\'']],
    ],
    [
      'an invalid value with Equal',
      [{ key: 'k', value: 'a b' }],
      [
        [
          'FieldValueInvalid',
          `${t}[0].operator`,
          "Invalid value: \"a b\": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')",
        ],
      ],
    ],
    [
      'operator and effect unknown, key invalid',
      [{ key: 'a b', operator: 'Like', effect: 'NoRun' }],
      [
        ['FieldValueInvalid', `${t}[0].key`, `Invalid value: "a b": ${QUALIFIED_NAME_MSG}`],
        ['FieldValueNotSupported', `${t}[0].operator`, 'Unsupported value: "Like": supported values: "Equal", "Exists"'],
        ['FieldValueNotSupported', `${t}[0].effect`, 'Unsupported value: "NoRun": supported values: "NoSchedule", "PreferNoSchedule", "NoExecute"'],
      ],
    ],
  ];
  for (const [name, tolerations, want] of table) it(name, () => assert.deepEqual(run({ tolerations }), want));

  const old = [{ key: 'k', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 10 }];
  it('an update may add tolerations and change tolerationSeconds', () =>
    assert.deepEqual(causes(validateOnlyAddedTolerations([{ ...old[0], tolerationSeconds: 5 }, { operator: 'Exists' }], old, t)), []));
  it('an update may not change or drop one', () =>
    assert.deepEqual(causes(validateOnlyAddedTolerations([{ key: 'k', operator: 'Exists', effect: 'NoSchedule' }], old, t)), [
      ['FieldValueForbidden', t, 'Forbidden: existing toleration can not be modified except its tolerationSeconds'],
    ]));
});

describe('topologySpreadConstraints (validateTopologySpreadConstraints)', () => {
  const c = 'spec.topologySpreadConstraints';
  const ok = { maxSkew: 1, topologyKey: 'zone', whenUnsatisfiable: 'DoNotSchedule' };
  const table: Array<[string, JsonObject[], Cause[]]> = [
    ['two kinds on one key', [ok, { ...ok, whenUnsatisfiable: 'ScheduleAnyway' }], []],
    [
      'maxSkew, key, action',
      [{ maxSkew: 0, whenUnsatisfiable: 'Maybe' }],
      [
        ['FieldValueInvalid', `${c}[0].maxSkew`, 'Invalid value: 0: must be greater than zero'],
        ['FieldValueRequired', `${c}[0].topologyKey`, 'Required value: can not be empty'],
        ['FieldValueNotSupported', `${c}[0].whenUnsatisfiable`, 'Unsupported value: "Maybe": supported values: "DoNotSchedule", "ScheduleAnyway"'],
      ],
    ],
    ['a repeated pair (reported on the first)', [ok, { ...ok, maxSkew: 2 }], [['FieldValueDuplicate', `${c}[0].{topologyKey, whenUnsatisfiable}`, 'Duplicate value: "{zone, DoNotSchedule}"']]],
    [
      'minDomains',
      [{ ...ok, minDomains: 0 }, { ...ok, topologyKey: 'host', whenUnsatisfiable: 'ScheduleAnyway', minDomains: 2 }],
      [
        ['FieldValueInvalid', `${c}[0].minDomains`, 'Invalid value: 0: must be greater than zero'],
        ['FieldValueInvalid', `${c}[1].minDomains`, 'Invalid value: 2: can only use minDomains if whenUnsatisfiable=DoNotSchedule, not ScheduleAnyway'],
      ],
    ],
  ];
  for (const [name, topologySpreadConstraints, want] of table) it(name, () => assert.deepEqual(run({ topologySpreadConstraints }), want));
});

describe('DNS and host aliases (validatePodDNSConfig, ValidateHostAliases)', () => {
  const d = 'spec.dnsConfig';
  const table: Array<[string, JsonObject, Cause[]]> = [
    ['None needs a config', { dnsPolicy: 'None' }, [['FieldValueRequired', d, 'Required value: must provide `dnsConfig` when `dnsPolicy` is None']]],
    ['None needs a nameserver', { dnsPolicy: 'None', dnsConfig: {} }, [['FieldValueRequired', `${d}.nameservers`, 'Required value: must provide at least one DNS nameserver when `dnsPolicy` is None']]],
    [
      'nameservers: at most three, IPs',
      { dnsConfig: { nameservers: ['1.1.1.1', '2.2.2.2', '3.3.3.3', 'dns.local'] } },
      [
        ['FieldValueInvalid', `${d}.nameservers`, 'Invalid value: []string{"1.1.1.1", "2.2.2.2", "3.3.3.3", "dns.local"}: must not have more than 3 nameservers'],
        ['FieldValueInvalid', `${d}.nameservers[3]`, 'Invalid value: "dns.local": must be valid IP address'],
      ],
    ],
    ['a nameserver with leading zeros (ParseIPSloppy)', { dnsConfig: { nameservers: ['010.000.000.001', '::1'] } }, []],
    [
      'searches: at most six, 256 characters, subdomains',
      { dnsConfig: { searches: ['a', 'b', 'c', 'd', 'e', 'f', 'G.'] } },
      [
        ['FieldValueInvalid', `${d}.searches`, 'Invalid value: []string{"a", "b", "c", "d", "e", "f", "G."}: must not have more than 6 search paths'],
        ['FieldValueInvalid', `${d}.searches[6]`, `Invalid value: "G": ${DNS_SUBDOMAIN_MSG}`],
      ],
    ],
    [
      'a search list over 256 characters',
      { dnsConfig: { searches: ['a'.repeat(63), 'b'.repeat(63), 'c'.repeat(63), 'd'.repeat(63), 'e'] } },
      [
        [
          'FieldValueInvalid',
          `${d}.searches`,
          `Invalid value: []string{"${'a'.repeat(63)}", "${'b'.repeat(63)}", "${'c'.repeat(63)}", "${'d'.repeat(63)}", "e"}: must not have more than 256 characters (including spaces) in the search list`,
        ],
      ],
    ],
    ['an option without a name', { dnsConfig: { options: [{ value: '1' }] } }, [['FieldValueRequired', `${d}.options[0]`, 'Required value: must not be empty']]],
    [
      'host aliases (kube\'s paths carry no index)',
      { hostAliases: [{ ip: 'x', hostnames: ['A'] }] },
      [
        ['FieldValueInvalid', 'spec.hostAliases.ip', 'Invalid value: "x": must be valid IP address'],
        ['FieldValueInvalid', 'spec.hostAliases.hostnames', `Invalid value: "A": ${DNS_SUBDOMAIN_MSG}`],
      ],
    ],
  ];
  for (const [name, spec, want] of table) it(name, () => assert.deepEqual(run(spec), want));
  it('expanded limits when the old pod had them', () =>
    assert.deepEqual(run({ dnsConfig: { searches: ['a', 'b', 'c', 'd', 'e', 'f', 'g'] } }, { allowExpandedDNSConfig: true }), []));
});
