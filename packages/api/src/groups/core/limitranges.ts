/**
 * core/v1 LimitRanges as kube-apiserver 1.24 has them (pkg/registry/core/limitrange): namespaced,
 * short name `limits`, every verb, no sub-resource, and no printer of their own (NAME, CREATED AT).
 *
 * - Defaults: kube's SetObjectDefaults_LimitRange (a Container item's missing default limit is its
 *   max, its missing default request the default limit, else the min; every list rounded up to
 *   milli units in canonical form).
 * - Create names an unnamed LimitRange with a random UUID (kube's PrepareForCreate).
 * - Create on update is allowed (kube's AllowCreateOnUpdate).
 * - Validation: ValidateLimitRange, on create and on update alike.
 */
import { randomUUID } from 'node:crypto';
import type { ResourceStrategy } from '../../catalog.js';
import { isJsonObject } from '../../json.js';
import { defineResource } from '../define.js';
import { objectMember } from './defaults/json.js';
import { setDefaultsLimitRange } from './defaults/limitrange.js';
import { setDefaultsResourceList } from './defaults/resource-list.js';
import { validateLimitRange } from './validation/limitrange.js';

const LIMIT_LISTS = ['max', 'min', 'default', 'defaultRequest', 'maxLimitRequestRatio'];

const limitRangeStrategy: ResourceStrategy = {
  defaults(obj) {
    setDefaultsLimitRange(obj);
    const limits = objectMember(obj, 'spec')?.['limits'];
    if (!Array.isArray(limits)) return;
    for (const item of limits) if (isJsonObject(item)) for (const list of LIMIT_LISTS) setDefaultsResourceList(item[list]);
  },
  prepareForCreate(obj) {
    if (!obj.metadata.name) obj.metadata.name = randomUUID();
  },
  validate: validateLimitRange,
};

export const limitranges = defineResource({
  group: '',
  version: 'v1',
  kind: 'LimitRange',
  plural: 'limitranges',
  shortNames: ['limits'],
  namespaced: true,
  description: 'A LimitRange bounds and defaults the resources of the pods, containers and claims of a namespace.',
  allowCreateOnUpdate: true,
  strategy: limitRangeStrategy,
});
