/**
 * core/v1 ComponentStatuses as kube-apiserver 1.24 has them (pkg/registry/core/componentstatus):
 * cluster-scoped, short name `cs`, get and list only, never stored — each read probes the
 * components (the apiserver's registry/componentstatus.ts) — and deprecated since 1.19 with no
 * removal planned (kube's Warning on every request). Printer printComponentStatus.
 */
import { deprecationWarning } from '../../catalog.js';
import { col, fieldAt, nameColumn, type TableDefinition } from '../../tables.js';
import { defineResource } from '../define.js';

const componentStatusTable: TableDefinition = {
  columns: [
    nameColumn,
    col('Status', 'string', "The component's health."),
    col('Message', 'string', "The health check's answer."),
    col('Error', 'string', 'Why the health check failed.'),
  ],
  cells: (obj) => {
    const conditions = fieldAt(obj, 'conditions');
    const healthy = Array.isArray(conditions) ? conditions.find((c) => fieldAt(c, 'type') === 'Healthy') : undefined;
    const text = (v: unknown): string => (typeof v === 'string' ? v : '');
    const status = healthy === undefined ? 'Unknown' : fieldAt(healthy, 'status') === 'True' ? 'Healthy' : 'Unhealthy';
    return [obj.metadata.name ?? '', status, text(fieldAt(healthy, 'message')), text(fieldAt(healthy, 'error'))];
  },
};

const definition = { group: '', version: 'v1', kind: 'ComponentStatus' } as const;

export const componentstatuses = defineResource({
  ...definition,
  plural: 'componentstatuses',
  shortNames: ['cs'],
  namespaced: false,
  storage: 'computed',
  description: "A ComponentStatus is a control-plane component's health, computed on each read.",
  strategy: { validate: () => [] },
  table: componentStatusTable,
  deprecation: deprecationWarning(definition, '1.19', ''),
});
