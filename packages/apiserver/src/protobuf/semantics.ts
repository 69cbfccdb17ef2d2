/**
 * Facts about kube's Go types that the .proto files cannot express, kept as data so that the
 * JSON <-> protobuf conversion in convert.ts stays a generic walk over protobufjs reflection.
 *
 * Keys are fully-qualified "package.Message.field" names (no leading dot).
 */

export const META_V1 = "k8s.io.apimachinery.pkg.apis.meta.v1";
const CORE_V1 = "k8s.io.api.core.v1";
const RBAC_V1 = "k8s.io.api.rbac.v1";
const AUTHENTICATION_V1 = "k8s.io.api.authentication.v1";
const AUTHORIZATION_V1 = "k8s.io.api.authorization.v1";
const ADMISSIONREGISTRATION_V1 = "k8s.io.api.admissionregistration.v1";
const COORDINATION_V1 = "k8s.io.api.coordination.v1";
export const APIEXTENSIONS_V1 = "k8s.io.apiextensions_apiserver.pkg.apis.apiextensions.v1";

/**
 * Scalar fields that are Go pointers (`*bool`, `*int64`, `*string`): gogo-protobuf writes them only
 * when non-nil, so a zero value present on the wire is meaningful and must survive decoding.
 * Every other scalar is a non-pointer that gogo always writes; for those a zero value is dropped
 * when decoding, as Go's `omitempty` would drop it from the JSON form.
 */
export const POINTER_SCALARS: ReadonlySet<string> = new Set([
  `${META_V1}.ObjectMeta.deletionGracePeriodSeconds`,
  `${META_V1}.ListMeta.remainingItemCount`,
  `${META_V1}.OwnerReference.controller`,
  `${META_V1}.OwnerReference.blockOwnerDeletion`,
  `${META_V1}.DeleteOptions.gracePeriodSeconds`,
  `${META_V1}.DeleteOptions.orphanDependents`,
  `${META_V1}.DeleteOptions.propagationPolicy`,
  `${META_V1}.Preconditions.uid`,
  `${META_V1}.Preconditions.resourceVersion`,
  `${META_V1}.ListOptions.timeoutSeconds`,
  `${META_V1}.PatchOptions.force`,
  `${CORE_V1}.ServiceAccount.automountServiceAccountToken`,
  `${CORE_V1}.Secret.immutable`,
  `${CORE_V1}.ConfigMap.immutable`,
  `${COORDINATION_V1}.LeaseSpec.holderIdentity`,
  `${COORDINATION_V1}.LeaseSpec.leaseDurationSeconds`,
  `${COORDINATION_V1}.LeaseSpec.leaseTransitions`,
  `${AUTHENTICATION_V1}.TokenRequestSpec.expirationSeconds`,
  ...["MutatingWebhook", "ValidatingWebhook"].flatMap((hook) =>
    ["failurePolicy", "matchPolicy", "sideEffects", "timeoutSeconds"].map((f) => `${ADMISSIONREGISTRATION_V1}.${hook}.${f}`),
  ),
  `${ADMISSIONREGISTRATION_V1}.MutatingWebhook.reinvocationPolicy`,
  `${ADMISSIONREGISTRATION_V1}.Rule.scope`,
  `${ADMISSIONREGISTRATION_V1}.ServiceReference.path`,
  `${ADMISSIONREGISTRATION_V1}.ServiceReference.port`,
  `${ADMISSIONREGISTRATION_V1}.WebhookClientConfig.url`,
  // apiextensions/v1 (types.go, types_jsonschema.go)
  `${APIEXTENSIONS_V1}.CustomResourceDefinitionVersion.deprecationWarning`,
  `${APIEXTENSIONS_V1}.CustomResourceSubresourceScale.labelSelectorPath`,
  `${APIEXTENSIONS_V1}.WebhookClientConfig.url`,
  `${APIEXTENSIONS_V1}.ServiceReference.path`,
  `${APIEXTENSIONS_V1}.ServiceReference.port`,
  ...[
    "ref",
    "maximum",
    "minimum",
    "maxLength",
    "minLength",
    "maxItems",
    "minItems",
    "multipleOf",
    "maxProperties",
    "minProperties",
    "xKubernetesPreserveUnknownFields",
    "xKubernetesListType",
    "xKubernetesMapType",
  ].map((f) => `${APIEXTENSIONS_V1}.JSONSchemaProps.${f}`),
]);

/**
 * Scalar and repeated fields whose Go json tag has no `omitempty`: kube's JSON always carries
 * them, so decoding emits the zero value ("" / 0 / false / []) when the wire has none.
 * (Every list's `items` is handled generically and is not listed here.)
 */
export const ALWAYS_EMIT: ReadonlySet<string> = new Set([
  `${META_V1}.APIGroup.name`,
  `${META_V1}.APIGroup.versions`,
  `${META_V1}.APIGroupList.groups`,
  `${META_V1}.APIResource.name`,
  `${META_V1}.APIResource.singularName`,
  `${META_V1}.APIResource.namespaced`,
  `${META_V1}.APIResource.kind`,
  `${META_V1}.APIResourceList.groupVersion`,
  `${META_V1}.APIResourceList.resources`,
  `${META_V1}.APIVersions.versions`,
  `${META_V1}.APIVersions.serverAddressByClientCIDRs`,
  `${META_V1}.Condition.type`,
  `${META_V1}.Condition.status`,
  `${META_V1}.Condition.reason`,
  `${META_V1}.Condition.message`,
  `${META_V1}.GroupVersionForDiscovery.groupVersion`,
  `${META_V1}.GroupVersionForDiscovery.version`,
  `${META_V1}.LabelSelectorRequirement.key`,
  `${META_V1}.LabelSelectorRequirement.operator`,
  `${META_V1}.OwnerReference.apiVersion`,
  `${META_V1}.OwnerReference.kind`,
  `${META_V1}.OwnerReference.name`,
  `${META_V1}.OwnerReference.uid`,
  `${META_V1}.ServerAddressByClientCIDR.clientCIDR`,
  `${META_V1}.ServerAddressByClientCIDR.serverAddress`,
  `${META_V1}.WatchEvent.type`,
  `${CORE_V1}.NamespaceCondition.type`,
  `${CORE_V1}.NamespaceCondition.status`,
  `${CORE_V1}.Event.reportingComponent`,
  `${CORE_V1}.Event.reportingInstance`,
  `${AUTHENTICATION_V1}.TokenRequestSpec.audiences`,
  `${AUTHENTICATION_V1}.TokenRequestStatus.token`,
  `${AUTHORIZATION_V1}.SubjectAccessReviewStatus.allowed`,
  `${AUTHORIZATION_V1}.SubjectRulesReviewStatus.resourceRules`,
  `${AUTHORIZATION_V1}.SubjectRulesReviewStatus.nonResourceRules`,
  `${AUTHORIZATION_V1}.SubjectRulesReviewStatus.incomplete`,
  `${AUTHORIZATION_V1}.ResourceRule.verbs`,
  `${AUTHORIZATION_V1}.NonResourceRule.verbs`,
  `${RBAC_V1}.ClusterRole.rules`,
  `${RBAC_V1}.Role.rules`,
  `${RBAC_V1}.PolicyRule.verbs`,
  `${RBAC_V1}.RoleRef.apiGroup`,
  `${RBAC_V1}.RoleRef.kind`,
  `${RBAC_V1}.RoleRef.name`,
  `${RBAC_V1}.Subject.kind`,
  `${RBAC_V1}.Subject.name`,
  `${ADMISSIONREGISTRATION_V1}.MutatingWebhook.name`,
  `${ADMISSIONREGISTRATION_V1}.MutatingWebhook.admissionReviewVersions`,
  `${ADMISSIONREGISTRATION_V1}.ValidatingWebhook.name`,
  `${ADMISSIONREGISTRATION_V1}.ValidatingWebhook.admissionReviewVersions`,
  `${ADMISSIONREGISTRATION_V1}.ServiceReference.namespace`,
  `${ADMISSIONREGISTRATION_V1}.ServiceReference.name`,
  `${APIEXTENSIONS_V1}.CustomResourceDefinitionSpec.group`,
  `${APIEXTENSIONS_V1}.CustomResourceDefinitionSpec.scope`,
  `${APIEXTENSIONS_V1}.CustomResourceDefinitionSpec.versions`,
  `${APIEXTENSIONS_V1}.CustomResourceDefinitionNames.plural`,
  `${APIEXTENSIONS_V1}.CustomResourceDefinitionNames.kind`,
  `${APIEXTENSIONS_V1}.CustomResourceDefinitionVersion.name`,
  `${APIEXTENSIONS_V1}.CustomResourceDefinitionVersion.served`,
  `${APIEXTENSIONS_V1}.CustomResourceDefinitionVersion.storage`,
  `${APIEXTENSIONS_V1}.CustomResourceDefinitionStatus.storedVersions`,
  `${APIEXTENSIONS_V1}.CustomResourceDefinitionCondition.type`,
  `${APIEXTENSIONS_V1}.CustomResourceDefinitionCondition.status`,
  `${APIEXTENSIONS_V1}.CustomResourceColumnDefinition.name`,
  `${APIEXTENSIONS_V1}.CustomResourceColumnDefinition.type`,
  `${APIEXTENSIONS_V1}.CustomResourceColumnDefinition.jsonPath`,
  `${APIEXTENSIONS_V1}.CustomResourceConversion.strategy`,
  `${APIEXTENSIONS_V1}.CustomResourceSubresourceScale.specReplicasPath`,
  `${APIEXTENSIONS_V1}.CustomResourceSubresourceScale.statusReplicasPath`,
  `${APIEXTENSIONS_V1}.WebhookConversion.conversionReviewVersions`,
  `${APIEXTENSIONS_V1}.ServiceReference.namespace`,
  `${APIEXTENSIONS_V1}.ServiceReference.name`,
  `${APIEXTENSIONS_V1}.ValidationRule.rule`,
]);

/**
 * Fields whose JSON key is not their proto field name: apiextensions/v1 JSONSchemaProps's JSON
 * Schema keywords and Kubernetes extensions (the json tags of types_jsonschema.go).
 */
export const JSON_NAMES: ReadonlyMap<string, string> = new Map([
  [`${APIEXTENSIONS_V1}.JSONSchemaProps.schema`, "$schema"],
  [`${APIEXTENSIONS_V1}.JSONSchemaProps.ref`, "$ref"],
  [`${APIEXTENSIONS_V1}.JSONSchemaProps.xKubernetesPreserveUnknownFields`, "x-kubernetes-preserve-unknown-fields"],
  [`${APIEXTENSIONS_V1}.JSONSchemaProps.xKubernetesEmbeddedResource`, "x-kubernetes-embedded-resource"],
  [`${APIEXTENSIONS_V1}.JSONSchemaProps.xKubernetesIntOrString`, "x-kubernetes-int-or-string"],
  [`${APIEXTENSIONS_V1}.JSONSchemaProps.xKubernetesListMapKeys`, "x-kubernetes-list-map-keys"],
  [`${APIEXTENSIONS_V1}.JSONSchemaProps.xKubernetesListType`, "x-kubernetes-list-type"],
  [`${APIEXTENSIONS_V1}.JSONSchemaProps.xKubernetesMapType`, "x-kubernetes-map-type"],
  [`${APIEXTENSIONS_V1}.JSONSchemaProps.xKubernetesValidations`, "x-kubernetes-validations"],
]);

/**
 * Message fields that are embedded structs in Go (`json:",inline"`): their fields sit in the
 * parent's JSON object, while the wire nests them as a message.
 */
export const EMBEDDED: ReadonlySet<string> = new Set([`${ADMISSIONREGISTRATION_V1}.RuleWithOperations.rule`]);

/**
 * meta/v1 kinds that kube's metav1.AddToGroupVersion registers in *every* group version
 * (WatchEvent and the option types), so e.g. `rbac.authorization.k8s.io/v1` `DeleteOptions`
 * is the meta.v1 message.
 */
export const PER_GROUP_META_KINDS: ReadonlySet<string> = new Set([
  "WatchEvent",
  "DeleteOptions",
  "ListOptions",
  "GetOptions",
  "CreateOptions",
  "UpdateOptions",
  "PatchOptions",
]);

/** meta/v1 kinds registered as "unversioned" under apiVersion `v1` (AddUnversionedTypes). */
export const UNVERSIONED_META_KINDS: ReadonlySet<string> = new Set([
  "Status",
  "APIVersions",
  "APIGroupList",
  "APIGroup",
  "APIResourceList",
]);

/** meta.k8s.io kinds that have protobuf messages (Table is `+protobuf=false` in kube). */
export const META_GROUP_KINDS: ReadonlySet<string> = new Set([
  "PartialObjectMetadata",
  "PartialObjectMetadataList",
  "TableOptions",
]);

/** API groups whose Go package does not follow `k8s.io.api.<first label of group>`. */
const GROUP_PACKAGE_OVERRIDES: Readonly<Record<string, string>> = {
  "apiextensions.k8s.io": "k8s.io.apiextensions_apiserver.pkg.apis.apiextensions",
  "apiregistration.k8s.io": "k8s.io.kube_aggregator.pkg.apis.apiregistration",
  "internal.apiserver.k8s.io": "k8s.io.api.apiserverinternal",
  "meta.k8s.io": "k8s.io.apimachinery.pkg.apis.meta",
};

/**
 * The protobuf package kube's go-to-protobuf generates for a group version, e.g.
 * `v1` → `k8s.io.api.core.v1`, `rbac.authorization.k8s.io/v1` → `k8s.io.api.rbac.v1`.
 * Returns undefined for groups that are not built into kube (custom resources have no protobuf);
 * `apiextensions.k8s.io/v1` is `k8s.io.apiextensions_apiserver.pkg.apis.apiextensions.v1`.
 */
export function packageForApiVersion(apiVersion: string): string | undefined {
  const slash = apiVersion.indexOf("/");
  const group = slash < 0 ? "" : apiVersion.slice(0, slash);
  const version = slash < 0 ? apiVersion : apiVersion.slice(slash + 1);
  if (!/^v\d+((alpha|beta)\d+)?$/.test(version)) return undefined;
  if (group === "") return `k8s.io.api.core.${version}`;
  // The group is the client's (an envelope's apiVersion): only the table's own entries count.
  const override = Object.hasOwn(GROUP_PACKAGE_OVERRIDES, group) ? GROUP_PACKAGE_OVERRIDES[group] : undefined;
  if (override !== undefined) return `${override}.${version}`;
  if (!group.endsWith(".k8s.io") && group.includes(".")) return undefined;
  const short = group.split(".")[0];
  return `k8s.io.api.${short}.${version}`;
}
