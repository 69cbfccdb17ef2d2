export { SelectorParseError } from './errors.js';
export {
  type LabelOperator,
  type LabelRequirement,
  type LabelSelector,
  type LabelSelectorObject,
  type LabelSelectorRequirementObject,
  type Labels,
  everythingLabelSelector,
  labelSelectorFromObject,
  nothingLabelSelector,
  parseLabelSelector,
} from './labels.js';
export {
  type FieldOperator,
  type FieldRequirement,
  type FieldSelector,
  type FieldSelectorRules,
  type FieldSetSource,
  type Fields,
  escapeFieldValue,
  everythingFieldSelector,
  objectFieldSet,
  parseFieldSelector,
  registerFieldSelectorRules,
  unescapeFieldValue,
  validateFieldSelector,
} from './fields.js';
