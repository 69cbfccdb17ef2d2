/**
 * flowcontrol.apiserver.k8s.io FlowSchemas and PriorityLevelConfigurations as kube-apiserver 1.24
 * has them (pkg/registry/flowcontrol, printFlowSchema, printPriorityLevelConfiguration):
 * cluster-scoped, each with a `status` sub-resource; v1beta2 (stored) and the deprecated v1beta1,
 * which has the same fields. Generation is bumped by spec changes only.
 */
import { isDeepStrictEqual } from 'node:util';
import { deprecationWarning, type ResourceDefinition, type ResourceStrategy } from '../../catalog.js';
import { age, ageColumn, col, fieldAt, nameColumn, type TableDefinition } from '../../tables.js';
import { type StoredObject, isPlainObject } from '../../types.js';
import { defineResource } from '../define.js';
import { FLOWCONTROL_GROUP } from './bootstrap.js';
import { validateFlowSchema, validatePriorityLevelConfiguration } from './validation.js';

type Obj = Record<string, unknown>;
const asObj = (v: unknown): Obj | undefined => (isPlainObject(v) ? v : undefined);
const isUnset = (v: unknown): boolean => v === undefined || v === null || v === 0;

/** kube's v1beta1/v1beta2 SetDefaults_FlowSchemaSpec: matchingPrecedence 1000. */
function defaultFlowSchema(o: StoredObject): void {
  const spec = asObj(o['spec']);
  if (spec && isUnset(spec['matchingPrecedence'])) spec['matchingPrecedence'] = 1000;
}

/** kube's SetDefaults_LimitedPriorityLevelConfiguration and SetDefaults_QueuingConfiguration. */
function defaultPriorityLevel(o: StoredObject): void {
  const limited = asObj(asObj(o['spec'])?.['limited']);
  if (!limited) return;
  if (isUnset(limited['assuredConcurrencyShares'])) limited['assuredConcurrencyShares'] = 30;
  const queuing = asObj(asObj(limited['limitResponse'])?.['queuing']);
  if (!queuing) return;
  if (isUnset(queuing['handSize'])) queuing['handSize'] = 8;
  if (isUnset(queuing['queues'])) queuing['queues'] = 64;
  if (isUnset(queuing['queueLengthLimit'])) queuing['queueLengthLimit'] = 50;
}

function strategyOf(defaults: (o: StoredObject) => void, validate: (o: StoredObject) => ReturnType<ResourceStrategy['validate']>): ResourceStrategy {
  return {
    defaults,
    prepareForCreate(o) {
      o['status'] = {};
      o.metadata.generation = 1;
    },
    prepareForUpdate(o, old) {
      o['status'] = old['status'] ?? {};
      const gen = old.metadata.generation ?? 0;
      o.metadata.generation = isDeepStrictEqual(o['spec'], old['spec']) ? gen : gen + 1;
    },
    validate,
  };
}

/** kube's status strategies: the spec (and labels, annotations) stay as they were. */
function statusStrategyOf(validate: (o: StoredObject) => ReturnType<ResourceStrategy['validate']>): ResourceStrategy {
  return {
    prepareForUpdate(o, old) {
      o['spec'] = old['spec'];
      if (old.metadata.labels) o.metadata.labels = old.metadata.labels;
      else delete o.metadata.labels;
      if (old.metadata.annotations) o.metadata.annotations = old.metadata.annotations;
      else delete o.metadata.annotations;
    },
    validate: () => [],
    // kube's status update validation is the status part of the full validation.
    validateUpdate: (o) => validate(o).filter((e) => e.field.startsWith('status')),
    validateOnUpdate: false,
  };
}

/** kube's printFlowSchema: NAME, PRIORITYLEVEL, MATCHINGPRECEDENCE, DISTINGUISHERMETHOD, AGE, MISSINGPL. */
const flowSchemaTable: TableDefinition = {
  columns: [
    nameColumn,
    col('PriorityLevel', 'string', 'The priority level the matching requests are assigned to.'),
    col('MatchingPrecedence', 'string', 'The order in which flow schemas are tried (lower first).'),
    col('DistinguisherMethod', 'string', 'How matching requests are divided into flows.'),
    ageColumn,
    col('MissingPL', 'string', 'references a broken or non-existent PriorityLevelConfiguration'),
  ],
  cells: (o, now) => {
    const conditions = fieldAt(o, 'status', 'conditions');
    const dangling = Array.isArray(conditions) ? conditions.find((c: unknown) => asObj(c)?.['type'] === 'Dangling') : undefined;
    const dm = fieldAt(o, 'spec', 'distinguisherMethod', 'type');
    return [
      o.metadata.name ?? '',
      String(fieldAt(o, 'spec', 'priorityLevelConfiguration', 'name') ?? ''),
      Number(fieldAt(o, 'spec', 'matchingPrecedence') ?? 0),
      typeof dm === 'string' ? dm : '<none>',
      age(o, now),
      dangling ? String(asObj(dangling)?.['status'] ?? '') : '?',
    ];
  },
};

/** kube's printPriorityLevelConfiguration: NAME, TYPE, ASSUREDCONCURRENCYSHARES, QUEUES, HANDSIZE, QUEUELENGTHLIMIT, AGE. */
const priorityLevelTable: TableDefinition = {
  columns: [
    nameColumn,
    col('Type', 'string', 'Whether requests of this level are limited (Limited) or not (Exempt).'),
    col('AssuredConcurrencyShares', 'string', 'The share of the server concurrency limit this level gets.'),
    col('Queues', 'string', 'The number of queues of this level.'),
    col('HandSize', 'string', 'The number of queues a flow may be put in (shuffle sharding).'),
    col('QueueLengthLimit', 'string', 'The most requests one queue holds.'),
    ageColumn,
  ],
  cells: (o, now) => {
    const limited = asObj(fieldAt(o, 'spec', 'limited'));
    const queuing = asObj(fieldAt(limited, 'limitResponse', 'queuing'));
    const cell = (v: unknown): number | string => (typeof v === 'number' ? v : '<none>');
    return [
      o.metadata.name ?? '',
      String(fieldAt(o, 'spec', 'type') ?? ''),
      limited ? cell(limited['assuredConcurrencyShares'] ?? 0) : '<none>',
      queuing ? cell(queuing['queues'] ?? 0) : '<none>',
      queuing ? cell(queuing['handSize'] ?? 0) : '<none>',
      queuing ? cell(queuing['queueLengthLimit'] ?? 0) : '<none>',
      age(o, now),
    ];
  },
};

interface KindParts {
  kind: 'FlowSchema' | 'PriorityLevelConfiguration';
  plural: string;
  description: string;
  strategy: ResourceStrategy;
  status: ResourceStrategy;
  table: TableDefinition;
}

const FLOW_SCHEMA: KindParts = {
  kind: 'FlowSchema',
  plural: 'flowschemas',
  description: 'A FlowSchema classifies requests into flows and assigns them a priority level.',
  strategy: strategyOf(defaultFlowSchema, validateFlowSchema),
  status: statusStrategyOf(validateFlowSchema),
  table: flowSchemaTable,
};

const PRIORITY_LEVEL: KindParts = {
  kind: 'PriorityLevelConfiguration',
  plural: 'prioritylevelconfigurations',
  description: 'A PriorityLevelConfiguration says how the requests of a priority level are limited and queued.',
  strategy: strategyOf(defaultPriorityLevel, validatePriorityLevelConfiguration),
  status: statusStrategyOf(validatePriorityLevelConfiguration),
  table: priorityLevelTable,
};

function version(parts: KindParts, v: 'v1beta2' | 'v1beta1', storage?: ResourceDefinition): ResourceDefinition {
  const as = (to: string) => (o: StoredObject): StoredObject => ({ ...o, apiVersion: `${FLOWCONTROL_GROUP}/${to}`, kind: parts.kind });
  return defineResource({
    group: FLOWCONTROL_GROUP,
    version: v,
    kind: parts.kind,
    plural: parts.plural,
    namespaced: false,
    description: parts.description,
    strategy: parts.strategy,
    table: parts.table,
    subresources: [{ name: 'status', verbs: ['get', 'patch', 'update'], strategy: parts.status }],
    ...(storage
      ? {
          conversion: { storage, toStorage: as('v1beta2'), fromStorage: as(v) },
          // kube 1.24: v1beta1 introduced in 1.20, so deprecated in 1.23 and removed in 1.26, replaced by v1beta2.
          deprecation: deprecationWarning({ group: FLOWCONTROL_GROUP, version: v, kind: parts.kind }, '1.23', '1.26', { group: FLOWCONTROL_GROUP, version: 'v1beta2', kind: parts.kind }),
        }
      : {}),
  });
}

export const flowschemasV1beta2 = version(FLOW_SCHEMA, 'v1beta2');
export const prioritylevelconfigurationsV1beta2 = version(PRIORITY_LEVEL, 'v1beta2');
export const flowschemasV1beta1 = version(FLOW_SCHEMA, 'v1beta1', flowschemasV1beta2);
export const prioritylevelconfigurationsV1beta1 = version(PRIORITY_LEVEL, 'v1beta1', prioritylevelconfigurationsV1beta2);
