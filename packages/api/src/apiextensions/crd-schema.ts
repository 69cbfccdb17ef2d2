/**
 * The OpenAPI schema of apiextensions.k8s.io/v1 CustomResourceDefinition
 * (k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1/types.go, types_jsonschema.go), as
 * shared definitions: JSONSchemaProps refers to itself. Fields holding any JSON (`default`, `enum`,
 * `example`) or a schema-or-bool/array are accepted as they come and checked by validation; their
 * definitions (`JSON`, `JSONSchemaPropsOr*`) have no type, as in kube's OpenAPI, so clients that
 * validate against it (kubectl, helm) take a string, a number or a list there.
 */
import { type Schema, s } from '../schema.js';

function ref(name: string, description?: string): Schema {
  return { $ref: name, 'x-go-type': `v1.${name.replace(/^Apiextensions/, '')}`, ...(description ? { description } : {}) };
}

/** Any JSON value, untyped (kube's `JSON`, `JSONSchemaPropsOrBool`, `JSONSchemaPropsOrArray`, …). */
const anyJSON = (name: string, description: string): Schema => ({ 'x-kubernetes-preserve-unknown-fields': true, description, 'x-go-type': `v1.${name}` });

const atomic = (description: string): Partial<Schema> => ({ description, 'x-kubernetes-list-type': 'atomic' });

const props = (): Schema => s.map(ref('JSONSchemaProps'));
const propsList = (): Schema => s.arr(ref('JSONSchemaProps'), { 'x-kubernetes-list-type': 'atomic' });

export const apiextensionsDefinitions: Record<string, Schema> = {
  JSON: anyJSON('JSON', 'JSON represents any valid JSON value. These types are supported: bool, int64, float64, string, []interface{}, map[string]interface{} and nil.'),
  JSONSchemaPropsOrArray: anyJSON('JSONSchemaPropsOrArray', 'JSONSchemaPropsOrArray represents a value that can either be a JSONSchemaProps or an array of JSONSchemaProps. Mainly here for serialization purposes.'),
  JSONSchemaPropsOrBool: anyJSON('JSONSchemaPropsOrBool', 'JSONSchemaPropsOrBool represents JSONSchemaProps or a boolean value. Defaults to true for the boolean property.'),
  JSONSchemaPropsOrStringArray: anyJSON('JSONSchemaPropsOrStringArray', 'JSONSchemaPropsOrStringArray represents a JSONSchemaProps or a string array.'),
  CustomResourceDefinitionSpec: s.obj(
    {
      group: s.str('group is the API group of the defined custom resource. The custom resources are served under `/apis/<group>/...`. Must match the name of the CustomResourceDefinition (in the form `<names.plural>.<group>`).'),
      names: ref('CustomResourceDefinitionNames', 'names specify the resource and kind names for the custom resource.'),
      scope: s.str('scope indicates whether the defined custom resource is cluster- or namespace-scoped. Allowed values are `Cluster` and `Namespaced`.'),
      versions: s.arr(ref('CustomResourceDefinitionVersion'), atomic('versions is the list of all API versions of the defined custom resource. Version names are used to compute the order in which served versions are listed in API discovery. If the version string is "kube-like", it will sort above non "kube-like" version strings, which are ordered lexicographically. "Kube-like" versions start with a "v", then are followed by a number (the major version), then optionally the string "alpha" or "beta" and another number (the minor version). These are sorted first by GA > beta > alpha (where GA is a version with no suffix such as beta or alpha), and then by comparing major version, then minor version. An example sorted list of versions: v10, v2, v1, v11beta2, v10beta3, v3beta1, v12alpha1, v11alpha2, foo1, foo10.')),
      conversion: ref('CustomResourceConversion', 'conversion defines conversion settings for the CRD.'),
      preserveUnknownFields: s.bool('preserveUnknownFields indicates that object fields which are not specified in the OpenAPI schema should be preserved when persisting to storage. apiVersion, kind, metadata and known fields inside metadata are always preserved. This field is deprecated in favor of setting `x-preserve-unknown-fields` to true in `spec.versions[*].schema.openAPIV3Schema`. See https://kubernetes.io/docs/tasks/extend-kubernetes/custom-resources/custom-resource-definitions/#field-pruning for details.'),
    },
    { description: 'CustomResourceDefinitionSpec describes how a user wants their resource to appear', required: ['group', 'names', 'scope', 'versions'], 'x-go-type': 'v1.CustomResourceDefinitionSpec' },
  ),
  CustomResourceDefinitionNames: s.obj(
    {
      plural: s.str('plural is the plural name of the resource to serve. The custom resources are served under `/apis/<group>/<version>/.../<plural>`. Must match the name of the CustomResourceDefinition (in the form `<names.plural>.<group>`). Must be all lowercase.'),
      singular: s.str('singular is the singular name of the resource. It must be all lowercase. Defaults to lowercased `kind`.'),
      shortNames: s.arr(s.str(), atomic('shortNames are short names for the resource, exposed in API discovery documents, and used by clients to support invocations like `kubectl get <shortname>`. It must be all lowercase.')),
      kind: s.str('kind is the serialized kind of the resource. It is normally CamelCase and singular. Custom resource instances will use this value as the `kind` attribute in API calls.'),
      listKind: s.str('listKind is the serialized kind of the list for this resource. Defaults to "`kind`List".'),
      categories: s.arr(s.str(), atomic('categories is a list of grouped resources this custom resource belongs to (e.g. \'all\'). This is published in API discovery documents, and used by clients to support invocations like `kubectl get all`.')),
    },
    { description: 'CustomResourceDefinitionNames indicates the names to serve this CustomResourceDefinition', required: ['plural', 'kind'], 'x-go-type': 'v1.CustomResourceDefinitionNames' },
  ),
  CustomResourceDefinitionVersion: s.obj(
    {
      name: s.str('name is the version name, e.g. “v1”, “v2beta1”, etc. The custom resources are served under this version at `/apis/<group>/<version>/...` if `served` is true.'),
      served: s.bool('served is a flag enabling/disabling this version from being served via REST APIs'),
      storage: s.bool('storage indicates this version should be used when persisting custom resources to storage. There must be exactly one version with storage=true.'),
      deprecated: s.bool('deprecated indicates this version of the custom resource API is deprecated. When set to true, API requests to this version receive a warning header in the server response. Defaults to false.'),
      deprecationWarning: s.str('deprecationWarning overrides the default warning returned to API clients. May only be set when `deprecated` is true. The default warning indicates this version is deprecated and recommends use of the newest served version of equal or greater stability, if one exists.'),
      schema: ref('CustomResourceValidation', 'schema describes the schema used for validation, pruning, and defaulting of this version of the custom resource.'),
      subresources: ref('CustomResourceSubresources', 'subresources specify what subresources this version of the defined custom resource have.'),
      additionalPrinterColumns: s.arr(ref('CustomResourceColumnDefinition'), atomic('additionalPrinterColumns specifies additional columns returned in Table output. See https://kubernetes.io/docs/reference/using-api/api-concepts/#receiving-resources-as-tables for details. If no columns are specified, a single column displaying the age of the custom resource is used.')),
    },
    { description: 'CustomResourceDefinitionVersion describes a version for CRD.', required: ['name', 'served', 'storage'], 'x-go-type': 'v1.CustomResourceDefinitionVersion' },
  ),
  CustomResourceColumnDefinition: s.obj(
    {
      name: s.str('name is a human readable name for the column.'),
      type: s.str('type is an OpenAPI type definition for this column. See https://github.com/OAI/OpenAPI-Specification/blob/master/versions/2.0.md#data-types for details.'),
      format: s.str('format is an optional OpenAPI type definition for this column. The \'name\' format is applied to the primary identifier column to assist in clients identifying column is the resource name. See https://github.com/OAI/OpenAPI-Specification/blob/master/versions/2.0.md#data-types for details.'),
      description: s.str('description is a human readable description of this column.'),
      priority: s.int('priority is an integer defining the relative importance of this column compared to others. Lower numbers are considered higher priority. Columns that may be omitted in limited space scenarios should be given a priority greater than 0.'),
      jsonPath: s.str('jsonPath is a simple JSON path (i.e. with array notation) which is evaluated against each custom resource to produce the value for this column.'),
    },
    { description: 'CustomResourceColumnDefinition specifies a column for server side printing.', required: ['name', 'type', 'jsonPath'], 'x-go-type': 'v1.CustomResourceColumnDefinition' },
  ),
  CustomResourceValidation: s.obj(
    { openAPIV3Schema: ref('JSONSchemaProps', 'openAPIV3Schema is the OpenAPI v3 schema to use for validation and pruning.') },
    { description: 'CustomResourceValidation is a list of validation methods for CustomResources.', 'x-go-type': 'v1.CustomResourceValidation' },
  ),
  CustomResourceSubresources: s.obj(
    {
      status: s.any('status indicates the custom resource should serve a `/status` subresource. When enabled: 1. requests to the custom resource primary endpoint ignore changes to the `status` stanza of the object. 2. requests to the custom resource `/status` subresource ignore changes to anything other than the `status` stanza of the object.'),
      scale: ref('CustomResourceSubresourceScale', 'scale indicates the custom resource should serve a `/scale` subresource that returns an `autoscaling/v1` Scale object.'),
    },
    { description: 'CustomResourceSubresources defines the status and scale subresources for CustomResources.', 'x-go-type': 'v1.CustomResourceSubresources' },
  ),
  CustomResourceSubresourceScale: s.obj(
    {
      specReplicasPath: s.str('specReplicasPath defines the JSON path inside of a custom resource that corresponds to Scale `spec.replicas`. Only JSON paths without the array notation are allowed. Must be a JSON Path under `.spec`. If there is no value under the given path in the custom resource, the `/scale` subresource will return an error on GET.'),
      statusReplicasPath: s.str('statusReplicasPath defines the JSON path inside of a custom resource that corresponds to Scale `status.replicas`. Only JSON paths without the array notation are allowed. Must be a JSON Path under `.status`. If there is no value under the given path in the custom resource, the `status.replicas` value in the `/scale` subresource will default to 0.'),
      labelSelectorPath: s.str('labelSelectorPath defines the JSON path inside of a custom resource that corresponds to Scale `status.selector`. Only JSON paths without the array notation are allowed. Must be a JSON Path under `.status` or `.spec`. Must be set to work with HorizontalPodAutoscaler. The field pointed by this JSON path must be a string field (not a complex selector struct) which contains a serialized label selector in string form. More info: https://kubernetes.io/docs/tasks/access-kubernetes-api/custom-resources/custom-resource-definitions#scale-subresource If there is no value under the given path in the custom resource, the `status.selector` value in the `/scale` subresource will default to the empty string.'),
    },
    { description: 'CustomResourceSubresourceScale defines how to serve the scale subresource for CustomResources.', required: ['specReplicasPath', 'statusReplicasPath'], 'x-go-type': 'v1.CustomResourceSubresourceScale' },
  ),
  CustomResourceConversion: s.obj(
    {
      strategy: s.str('strategy specifies how custom resources are converted between versions. Allowed values are: - `"None"`: The converter only change the apiVersion and would not touch any other field in the custom resource. - `"Webhook"`: API Server will call to an external webhook to do the conversion. Additional information\n  is needed for this option. This requires spec.preserveUnknownFields to be false, and spec.conversion.webhook to be set.'),
      webhook: ref('WebhookConversion', 'webhook describes how to call the conversion webhook. Required when `strategy` is set to `"Webhook"`.'),
    },
    { description: 'CustomResourceConversion describes how to convert different versions of a CR.', required: ['strategy'], 'x-go-type': 'v1.CustomResourceConversion' },
  ),
  WebhookConversion: s.obj(
    {
      clientConfig: ref('ApiextensionsWebhookClientConfig', 'clientConfig is the instructions for how to call the webhook if strategy is `Webhook`.'),
      conversionReviewVersions: s.arr(s.str(), atomic('conversionReviewVersions is an ordered list of preferred `ConversionReview` versions the Webhook expects. The API server will use the first version in the list which it supports. If none of the versions specified in this list are supported by API server, conversion will fail for the custom resource. If a persisted Webhook configuration specifies allowed versions and does not include any versions known to the API Server, calls to the webhook will fail.')),
    },
    { description: 'WebhookConversion describes how to call a conversion webhook', required: ['conversionReviewVersions'], 'x-go-type': 'v1.WebhookConversion' },
  ),
  // admissionregistration has its own WebhookClientConfig and ServiceReference in the flat definitions map.
  ApiextensionsWebhookClientConfig: s.obj(
    {
      url: s.str('url gives the location of the webhook, in standard URL form (`scheme://host:port/path`). Exactly one of `url` or `service` must be specified.'),
      service: ref('ApiextensionsServiceReference', 'service is a reference to the service for this webhook. Either service or url must be specified.\n\nIf the webhook is running within the cluster, then you should use `service`.'),
      caBundle: s.bytes('caBundle is a PEM encoded CA bundle which will be used to validate the webhook\'s server certificate. If unspecified, system trust roots on the apiserver are used.'),
    },
    { description: 'WebhookClientConfig contains the information to make a TLS connection with the webhook.', 'x-go-type': 'v1.WebhookClientConfig' },
  ),
  ApiextensionsServiceReference: s.obj(
    {
      namespace: s.str('namespace is the namespace of the service. Required'),
      name: s.str('name is the name of the service. Required'),
      path: s.str('path is an optional URL path at which the webhook will be contacted.'),
      port: s.int('port is an optional service port at which the webhook will be contacted. `port` should be a valid port number (1-65535, inclusive). Defaults to 443 for backward compatibility.'),
    },
    { description: 'ServiceReference holds a reference to Service.legacy.k8s.io', required: ['namespace', 'name'], 'x-go-type': 'v1.ServiceReference' },
  ),
  CustomResourceDefinitionStatus: s.obj(
    {
      conditions: s.arr(ref('CustomResourceDefinitionCondition'), {
        description: 'conditions indicate state for particular aspects of a CustomResourceDefinition',
        'x-kubernetes-list-type': 'map',
        'x-kubernetes-list-map-keys': ['type'],
      }),
      acceptedNames: ref('CustomResourceDefinitionNames', 'acceptedNames are the names that are actually being used to serve discovery. They may be different than the names in spec.'),
      storedVersions: s.arr(s.str(), atomic('storedVersions lists all versions of CustomResources that were ever persisted. Tracking these versions allows a migration path for stored versions in etcd. The field is mutable so a migration controller can finish a migration to another version (ensuring no old objects are left in storage), and then remove the rest of the versions from this list. Versions may not be removed from `spec.versions` while they exist in this list.')),
    },
    { description: 'CustomResourceDefinitionStatus indicates the state of the CustomResourceDefinition', 'x-go-type': 'v1.CustomResourceDefinitionStatus' },
  ),
  CustomResourceDefinitionCondition: s.obj(
    {
      type: s.str('type is the type of the condition. Types include Established, NamesAccepted and Terminating.'),
      status: s.str('status is the status of the condition. Can be True, False, Unknown.'),
      lastTransitionTime: s.time('lastTransitionTime last time the condition transitioned from one status to another.'),
      reason: s.str('reason is a unique, one-word, CamelCase reason for the condition\'s last transition.'),
      message: s.str('message is a human-readable message indicating details about last transition.'),
    },
    { description: 'CustomResourceDefinitionCondition contains details for the current condition of this pod.', required: ['type', 'status'], 'x-go-type': 'v1.CustomResourceDefinitionCondition' },
  ),
  JSONSchemaProps: s.obj(
    {
      id: s.str(),
      $schema: s.str(),
      $ref: s.str(),
      description: s.str(),
      type: s.str(),
      format: s.str('format is an OpenAPI v3 format string. Unknown formats are ignored. The following formats are validated:\n\n- bsonobjectid: a bson object ID, i.e. a 24 characters hex string - uri: an URI as parsed by Golang net/url.ParseRequestURI - email: an email address as parsed by Golang net/mail.ParseAddress - hostname: a valid representation for an Internet host name, as defined by RFC 1034, section 3.1 [RFC1034]. - ipv4: an IPv4 IP as parsed by Golang net.ParseIP - ipv6: an IPv6 IP as parsed by Golang net.ParseIP - cidr: a CIDR as parsed by Golang net.ParseCIDR - mac: a MAC address as parsed by Golang net.ParseMAC - uuid: an UUID that allows uppercase defined by the regex (?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$ - uuid3: an UUID3 that allows uppercase defined by the regex (?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?3[0-9a-f]{3}-?[0-9a-f]{4}-?[0-9a-f]{12}$ - uuid4: an UUID4 that allows uppercase defined by the regex (?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?4[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}$ - uuid5: an UUID5 that allows uppercase defined by the regex (?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?5[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}$ - isbn: an ISBN10 or ISBN13 number string like "0321751043" or "978-0321751041" - isbn10: an ISBN10 number string like "0321751043" - isbn13: an ISBN13 number string like "978-0321751041" - creditcard: a credit card number defined by the regex ^(?:4[0-9]{12}(?:[0-9]{3})?|5[1-5][0-9]{14}|6(?:011|5[0-9][0-9])[0-9]{12}|3[47][0-9]{13}|3(?:0[0-5]|[68][0-9])[0-9]{11}|(?:2131|1800|35\\d{3})\\d{11})$ with any non digit characters mixed in - ssn: a U.S. social security number following the regex ^\\d{3}[- ]?\\d{2}[- ]?\\d{4}$ - hexcolor: an hexadecimal color code like "#FFFFFF: following the regex ^#?([0-9a-fA-F]{3}|[0-9a-fA-F]{6})$ - rgbcolor: an RGB color code like rgb like "rgb(255,255,2559" - byte: base64 encoded binary data - password: any kind of string - date: a date string like "2006-01-02" as defined by full-date in RFC3339 - duration: a duration string like "22 ns" as parsed by Golang time.ParseDuration or compatible with Scala duration format - datetime: a date time string like "2014-12-15T19:30:20.000Z" as defined by date-time in RFC3339.'),
      title: s.str(),
      default: ref('JSON', 'default is a default value for undefined object fields. Defaulting is a beta feature under the CustomResourceDefaulting feature gate. Defaulting requires spec.preserveUnknownFields to be false.'),
      maximum: { type: 'number', format: 'double' },
      exclusiveMaximum: s.bool(),
      minimum: { type: 'number', format: 'double' },
      exclusiveMinimum: s.bool(),
      maxLength: s.int(undefined, 'int64'),
      minLength: s.int(undefined, 'int64'),
      pattern: s.str(),
      maxItems: s.int(undefined, 'int64'),
      minItems: s.int(undefined, 'int64'),
      uniqueItems: s.bool(),
      multipleOf: { type: 'number', format: 'double' },
      enum: s.arr(ref('JSON'), { 'x-kubernetes-list-type': 'atomic' }),
      maxProperties: s.int(undefined, 'int64'),
      minProperties: s.int(undefined, 'int64'),
      required: s.arr(s.str(), { 'x-kubernetes-list-type': 'atomic' }),
      items: ref('JSONSchemaPropsOrArray'),
      allOf: propsList(),
      oneOf: propsList(),
      anyOf: propsList(),
      not: ref('JSONSchemaProps'),
      properties: props(),
      additionalProperties: ref('JSONSchemaPropsOrBool'),
      patternProperties: props(),
      dependencies: s.map(ref('JSONSchemaPropsOrStringArray')),
      additionalItems: ref('JSONSchemaPropsOrBool'),
      definitions: props(),
      externalDocs: ref('ExternalDocumentation'),
      example: ref('JSON'),
      nullable: s.bool(),
      'x-kubernetes-preserve-unknown-fields': s.bool('x-kubernetes-preserve-unknown-fields stops the API server decoding step from pruning fields which are not specified in the validation schema. This affects fields recursively, but switches back to normal pruning behaviour if nested properties or additionalProperties are specified in the schema. This can either be true or undefined. False is forbidden.'),
      'x-kubernetes-embedded-resource': s.bool('x-kubernetes-embedded-resource defines that the value is an embedded Kubernetes runtime.Object, with TypeMeta and ObjectMeta. The type must be object. It is allowed to further restrict the embedded object. kind, apiVersion and metadata are validated automatically. x-kubernetes-preserve-unknown-fields is allowed to be true, but does not have to be if the object is fully specified (up to kind, apiVersion, metadata).'),
      'x-kubernetes-int-or-string': s.bool('x-kubernetes-int-or-string specifies that this value is either an integer or a string. If this is true, an empty type is allowed and type as child of anyOf is permitted if following one of the following patterns:\n\n1) anyOf:\n   - type: integer\n   - type: string\n2) allOf:\n   - anyOf:\n     - type: integer\n     - type: string\n   - ... zero or more'),
      'x-kubernetes-list-map-keys': s.arr(s.str(), atomic('x-kubernetes-list-map-keys annotates an array with the x-kubernetes-list-type `map` by specifying the keys used as the index of the map.\n\nThis tag MUST only be used on lists that have the "x-kubernetes-list-type" extension set to "map". Also, the values specified for this attribute must be a scalar typed field of the child structure (no nesting is supported).\n\nThe properties specified must either be required or have a default value, to ensure those properties are present for all list items.')),
      'x-kubernetes-list-type': s.str('x-kubernetes-list-type annotates an array to further describe its topology. This extension must only be used on lists and may have 3 possible values:\n\n1) `atomic`: the list is treated as a single entity, like a scalar.\n     Atomic lists will be entirely replaced when updated. This extension\n     may be used on any type of list (struct, scalar, ...).\n2) `set`:\n     Sets are lists that must not have multiple items with the same value. Each\n     value must be a scalar, an object with x-kubernetes-map-type `atomic` or an\n     array with x-kubernetes-list-type `atomic`.\n3) `map`:\n     These lists are like maps in that their elements have a non-index key\n     used to identify them. Order is preserved upon merge. The map tag\n     must only be used on a list with elements of type object.\nDefaults to atomic for arrays.'),
      'x-kubernetes-map-type': s.str('x-kubernetes-map-type annotates an object to further describe its topology. This extension must only be used when type is object and may have 2 possible values:\n\n1) `granular`:\n     These maps are actual maps (key-value pairs) and each fields are independent\n     from each other (they can each be manipulated by separate actors). This is\n     the default behaviour for all maps.\n2) `atomic`: the list is treated as a single entity, like a scalar.\n     Atomic maps will be entirely replaced when updated.'),
      'x-kubernetes-validations': s.arr(ref('ValidationRule'), {
        description: 'x-kubernetes-validations describes a list of validation rules written in the CEL expression language. This field is an alpha-level. Using this field requires the feature gate `CustomResourceValidationExpressions` to be enabled.',
        'x-kubernetes-list-type': 'map',
        'x-kubernetes-list-map-keys': ['rule'],
      }),
    },
    { description: 'JSONSchemaProps is a JSON-Schema following Specification Draft 4 (http://json-schema.org/).', 'x-go-type': 'v1.JSONSchemaProps' },
  ),
  ExternalDocumentation: s.obj({ description: s.str(), url: s.str() }, { description: 'ExternalDocumentation allows referencing an external resource for extended documentation.', 'x-go-type': 'v1.ExternalDocumentation' }),
  ValidationRule: s.obj(
    { rule: s.str('Rule represents the expression which will be evaluated by CEL.'), message: s.str('Message represents the message displayed when validation fails.') },
    { description: 'ValidationRule describes a validation rule written in the CEL expression language.', required: ['rule'], 'x-go-type': 'v1.ValidationRule' },
  ),
};

export const customResourceDefinitionSchema: Schema = s.obj(
  {
    spec: ref('CustomResourceDefinitionSpec', 'spec describes how the user wants the resources to appear'),
    status: ref('CustomResourceDefinitionStatus', 'status indicates the actual state of the CustomResourceDefinition'),
  },
  {
    description: 'CustomResourceDefinition represents a resource that should be exposed on the API server.  Its name MUST be in the format <.spec.name>.<.spec.group>.',
    required: ['spec'],
    'x-go-type': 'v1.CustomResourceDefinition',
  },
);
