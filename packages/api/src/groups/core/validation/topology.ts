/** topologySpreadConstraints as kube 1.24 validates them (validateTopologySpreadConstraints). */
import { type FieldError, fieldErr } from '../../../field-errors.js';
import { isSet, num, objects, str } from './access.js';
import { IS_NOT_POSITIVE_MSG } from './basic.js';

const SCHEDULE_ACTIONS = ['DoNotSchedule', 'ScheduleAnyway'];

/** kube's `validateTopologySpreadConstraints`: maxSkew, topologyKey, whenUnsatisfiable, no repeats, minDomains. */
export function validateTopologySpreadConstraints(constraints: unknown, field: string): FieldError[] {
  const errs: FieldError[] = [];
  const all = objects(constraints);
  all.forEach((c, i) => {
    const p = `${field}[${i}]`;
    if (num(c['maxSkew']) <= 0) errs.push(fieldErr.invalid(`${p}.maxSkew`, c['maxSkew'] ?? 0, IS_NOT_POSITIVE_MSG));
    const key = str(c['topologyKey']);
    if (key.length === 0) errs.push(fieldErr.required(`${p}.topologyKey`, 'can not be empty'));
    const action = str(c['whenUnsatisfiable']);
    if (!SCHEDULE_ACTIONS.includes(action)) errs.push(fieldErr.notSupported(`${p}.whenUnsatisfiable`, action, SCHEDULE_ACTIONS));
    // The pair {topologyKey, whenUnsatisfiable} names one kind of constraint: only later repeats count.
    if (all.slice(i + 1).some((r) => str(r['topologyKey']) === key && str(r['whenUnsatisfiable']) === action)) {
      errs.push(fieldErr.duplicate(`${p}.{topologyKey, whenUnsatisfiable}`, `{${key}, ${action}}`));
    }
    if (isSet(c['minDomains'])) {
      const minDomains = c['minDomains'];
      if (num(minDomains) <= 0) errs.push(fieldErr.invalid(`${p}.minDomains`, minDomains, IS_NOT_POSITIVE_MSG));
      if (action !== 'DoNotSchedule') errs.push(fieldErr.invalid(`${p}.minDomains`, minDomains, `can only use minDomains if whenUnsatisfiable=DoNotSchedule, not ${action}`));
    }
  });
  return errs;
}
