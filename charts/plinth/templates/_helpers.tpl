{{/* Names, labels and the plinth-apiserver command line. */}}

{{- define "plinth.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* The release's full name; the bundled etcd's names add "-etcd-headless" (15 chars), so 48 max. */}}
{{- define "plinth.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 48 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 48 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 48 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{- define "plinth.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "plinth.labels" -}}
helm.sh/chart: {{ include "plinth.chart" . }}
app.kubernetes.io/name: {{ include "plinth.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: plinth
{{- end }}

{{/* Selector labels of the API server pods (the etcd pods have component etcd). */}}
{{- define "plinth.selectorLabels" -}}
app.kubernetes.io/name: {{ include "plinth.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: apiserver
{{- end }}

{{- define "plinth.etcd.selectorLabels" -}}
app.kubernetes.io/name: {{ include "plinth.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: etcd
{{- end }}

{{- define "plinth.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "plinth.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{- define "plinth.image" -}}
{{- $tag := default .Chart.AppVersion .Values.image.tag }}
{{- if .Values.image.digest }}
{{- printf "%s@%s" .Values.image.repository .Values.image.digest }}
{{- else }}
{{- printf "%s:%s" .Values.image.repository $tag }}
{{- end }}
{{- end }}

{{/* The Service's DNS names: the serving certificate covers them. */}}
{{- define "plinth.serviceDnsNames" -}}
{{- $svc := include "plinth.fullname" . }}
{{- $ns := .Release.Namespace }}
{{- list $svc (printf "%s.%s" $svc $ns) (printf "%s.%s.svc" $svc $ns) (printf "%s.%s.svc.%s" $svc $ns .Values.clusterDomain) | toJson }}
{{- end }}

{{/* "true" when the chart generates plinth's serving certificate (no Secret named, no cert-manager). */}}
{{- define "plinth.tls.generated" -}}
{{- if not (or .Values.tls.existingSecret .Values.tls.certManager.enabled) }}true{{ end }}
{{- end }}

{{- define "plinth.tlsSecretName" -}}
{{- if .Values.tls.existingSecret }}{{ .Values.tls.existingSecret }}{{ else }}{{ include "plinth.fullname" . }}-tls{{ end }}
{{- end }}

{{- define "plinth.adminTokenSecretName" -}}
{{- default (printf "%s-admin-token" (include "plinth.fullname" .)) .Values.auth.adminToken.existingSecret }}
{{- end }}

{{- define "plinth.saKeySecretName" -}}
{{- default (printf "%s-sa-key" (include "plinth.fullname" .)) .Values.serviceAccountTokens.signingKey.existingSecret }}
{{- end }}

{{- define "plinth.tokenFileSecretName" -}}
{{- default (printf "%s-tokens" (include "plinth.fullname" .)) .Values.auth.tokenAuthFile.existingSecret }}
{{- end }}

{{- define "plinth.metricsTokenSecretName" -}}
{{- printf "%s-metrics-token" (include "plinth.fullname" .) }}
{{- end }}

{{/* Bundled etcd: names of the StatefulSet, its headless Service and member i's DNS name. */}}
{{- define "plinth.etcd.fullname" -}}
{{- printf "%s-etcd" (include "plinth.fullname" .) }}
{{- end }}

{{- define "plinth.etcd.headless" -}}
{{- printf "%s-etcd-headless" (include "plinth.fullname" .) }}
{{- end }}

{{/* "true" when the release runs its own etcd: etcd.bundled (the default) and no etcd.endpoints. */}}
{{- define "plinth.etcd.bundled" -}}
{{- if and .Values.etcd.bundled (not .Values.etcd.endpoints) }}true{{ end }}
{{- end }}

{{/* "true" when the bundled members talk TLS (peers and clients). */}}
{{- define "plinth.etcd.tls" -}}
{{- if and (include "plinth.etcd.bundled" .) .Values.etcd.tls.enabled }}true{{ end }}
{{- end }}

{{/* The bundled members' certificate Secret: the named one or the chart's generated one. */}}
{{- define "plinth.etcd.tlsSecretName" -}}
{{- default (printf "%s-etcd-tls" (include "plinth.fullname" .)) .Values.etcd.tls.existingSecret }}
{{- end }}

{{- define "plinth.etcd.scheme" -}}
{{- if include "plinth.etcd.tls" . }}https{{ else }}http{{ end }}
{{- end }}

{{/* The members' "<name>.<headless>.<ns>.svc.<domain>" host names, as a JSON list. */}}
{{- define "plinth.etcd.memberHosts" -}}
{{- $hosts := list }}
{{- $sts := include "plinth.etcd.fullname" . }}
{{- $headless := include "plinth.etcd.headless" . }}
{{- range $i := until (int .Values.etcd.replicas) }}
{{- $hosts = append $hosts (printf "%s-%d.%s.%s.svc.%s" $sts $i $headless $.Release.Namespace $.Values.clusterDomain) }}
{{- end }}
{{- $hosts | toJson }}
{{- end }}

{{/* --etcd-servers: the external endpoints or the bundled members' client URLs. */}}
{{- define "plinth.etcdServers" -}}
{{- if include "plinth.etcd.bundled" . }}
{{- $urls := list }}
{{- $scheme := include "plinth.etcd.scheme" . }}
{{- range $h := include "plinth.etcd.memberHosts" . | fromJsonArray }}
{{- $urls = append $urls (printf "%s://%s:2379" $scheme $h) }}
{{- end }}
{{- join "," $urls }}
{{- else }}
{{- join "," .Values.etcd.endpoints }}
{{- end }}
{{- end }}

{{/* The Secret with the client certificate plinth presents to etcd ("" for none). */}}
{{- define "plinth.etcdClientSecret" -}}
{{- if .Values.etcd.clientTLS.existingSecret }}{{ .Values.etcd.clientTLS.existingSecret }}
{{- else if include "plinth.etcd.tls" . }}{{ include "plinth.etcd.tlsSecretName" . }}
{{- end }}
{{- end }}

{{/* The preStop sleep counted in the grace period (0 without a hook). */}}
{{- define "plinth.preStopSeconds" -}}
{{- if .Values.preStop.enabled }}{{ int .Values.preStop.sleepSeconds }}{{ else }}0{{ end }}
{{- end }}

{{/*
terminationGracePeriodSeconds: the kubelet counts the preStop hook inside the grace period, then
SIGTERM starts --shutdown-delay-duration, then requests drain. A grace period that does not cover
the hook and the delay has the kubelet SIGKILL a replica that is still serving.
*/}}
{{- define "plinth.gracePeriod" -}}
{{- $floor := add (include "plinth.preStopSeconds" . | int) (int .Values.shutdownDelaySeconds) }}
{{- if kindIs "invalid" .Values.terminationGracePeriodSeconds }}
{{- add $floor (int .Values.drainSeconds) }}
{{- else }}
{{- $set := int .Values.terminationGracePeriodSeconds }}
{{- if le $set $floor }}
{{- fail (printf "terminationGracePeriodSeconds (%d) must be above preStop.sleepSeconds + shutdownDelaySeconds (%d): the kubelet would kill plinth before it stops serving" $set $floor) }}
{{- end }}
{{- $set }}
{{- end }}
{{- end }}

{{/* Every check that must stop a render, with a message that says what to set. */}}
{{- define "plinth.validate" -}}
{{- if and .Values.tls.existingSecret .Values.tls.certManager.enabled }}
{{- fail "set only one TLS source: tls.existingSecret or tls.certManager.enabled" }}
{{- end }}
{{- if and .Values.tls.certManager.enabled (not .Values.tls.certManager.issuerRef.name) }}
{{- fail "tls.certManager.enabled needs tls.certManager.issuerRef.name" }}
{{- end }}
{{- if not (or .Values.etcd.bundled .Values.etcd.endpoints) }}
{{- fail "plinth needs etcd: set etcd.endpoints (a list of client URLs) or leave etcd.bundled=true (the image has no embedded etcd)" }}
{{- end }}
{{- if and (include "plinth.etcd.bundled" .) (lt (int .Values.etcd.replicas) 1) }}
{{- fail "etcd.replicas must be at least 1" }}
{{- end }}
{{- if and (include "plinth.etcd.bundled" .) (eq (mod (int .Values.etcd.replicas) 2) 0) }}
{{- fail (printf "etcd.replicas (%d) must be odd: an even member count adds no fault tolerance" (int .Values.etcd.replicas)) }}
{{- end }}
{{- if and .Values.metrics.serviceMonitor.enabled .Values.auth.tokenAuthFile.existingSecret (not .Values.metrics.serviceMonitor.bearerTokenSecret.name) }}
{{- fail "with auth.tokenAuthFile.existingSecret the chart cannot add the scraper's token: set metrics.serviceMonitor.bearerTokenSecret.name to a Secret holding a token of your file in group system:monitoring" }}
{{- end }}
{{- $_ := include "plinth.gracePeriod" . }}
{{- end }}

{{/* "k1=v1,k2=v2" of a map, keys sorted (a stable command line: no rollout from map order). */}}
{{- define "plinth.sortedPairs" -}}
{{- $pairs := list }}
{{- range $k := keys . | sortAlpha }}
{{- $pairs = append $pairs (printf "%s=%v" $k (index $ $k)) }}
{{- end }}
{{- join "," $pairs }}
{{- end }}

{{/* The plinth-apiserver arguments as a JSON list (quoting-safe), extraArgs last. */}}
{{- define "plinth.args" -}}
{{- $v := .Values }}
{{- $a := list (printf "--secure-port=%d" (int $v.securePort)) "--bind-address=0.0.0.0" (printf "--data-dir=%s" $v.dataDir.path) }}
{{- $a = concat $a (list "--tls-cert-file=/etc/plinth/tls/tls.crt" "--tls-private-key-file=/etc/plinth/tls/tls.key") }}
{{- $a = append $a (printf "--etcd-servers=%s" (include "plinth.etcdServers" .)) }}
{{- $a = append $a (printf "--etcd-prefix=%s" $v.etcd.prefix) }}
{{- if include "plinth.etcdClientSecret" . }}
{{- $a = concat $a (list "--etcd-cafile=/etc/plinth/etcd/ca.crt" "--etcd-certfile=/etc/plinth/etcd/tls.crt" "--etcd-keyfile=/etc/plinth/etcd/tls.key") }}
{{- end }}
{{- $a = append $a (printf "--etcd-compaction-interval=%s" $v.etcd.compactionInterval) }}
{{- $saKey := printf "/etc/plinth/sa/%s" $v.serviceAccountTokens.signingKey.key }}
{{- $a = concat $a (list (printf "--service-account-signing-key-file=%s" $saKey) (printf "--service-account-key-file=%s" $saKey)) }}
{{- range $v.serviceAccountTokens.issuers }}
{{- $a = append $a (printf "--service-account-issuer=%s" .) }}
{{- end }}
{{- with $v.serviceAccountTokens.apiAudiences }}
{{- $a = append $a (printf "--api-audiences=%s" (join "," .)) }}
{{- end }}
{{- $a = append $a (printf "--token-auth-file=/etc/plinth/tokens/%s" $v.auth.tokenAuthFile.key) }}
{{- $a = append $a (printf "--anonymous-auth=%t" $v.auth.anonymousAuth) }}
{{- if $v.auth.clientCA.existingSecret }}
{{- $a = append $a (printf "--client-ca-file=/etc/plinth/client-ca/%s" $v.auth.clientCA.key) }}
{{- end }}
{{- $a = append $a (printf "--authorization-mode=%s" (join "," $v.authorizationMode)) }}
{{- with $v.admissionPlugins.enable }}
{{- $a = append $a (printf "--enable-admission-plugins=%s" (join "," .)) }}
{{- end }}
{{- with $v.admissionPlugins.disable }}
{{- $a = append $a (printf "--disable-admission-plugins=%s" (join "," .)) }}
{{- end }}
{{- $a = append $a (printf "--shutdown-delay-duration=%ds" (int $v.shutdownDelaySeconds)) }}
{{- $le := $v.leaderElection }}
{{- $a = append $a (printf "--leader-elect=%t" $le.enabled) }}
{{- if $le.enabled }}
{{- $a = concat $a (list (printf "--leader-elect-lease-duration=%s" $le.leaseDuration) (printf "--leader-elect-renew-deadline=%s" $le.renewDeadline) (printf "--leader-elect-retry-period=%s" $le.retryPeriod)) }}
{{- $a = concat $a (list (printf "--leader-elect-resource-lock=%s" $le.resourceLock) (printf "--leader-elect-resource-name=%s" $le.resourceName) (printf "--leader-elect-resource-namespace=%s" $le.resourceNamespace)) }}
{{- end }}
{{- if $v.audit.enabled }}
{{- $au := $v.audit }}
{{- $a = concat $a (list "--audit-policy-file=/etc/plinth/audit/policy.yaml" (printf "--audit-log-path=%s" $au.logPath) (printf "--audit-log-format=%s" $au.format)) }}
{{- $a = concat $a (list (printf "--audit-log-maxsize=%d" (int $au.maxSize)) (printf "--audit-log-maxbackup=%d" (int $au.maxBackup)) (printf "--audit-log-maxage=%d" (int $au.maxAge))) }}
{{- end }}
{{- with $v.runtimeConfig }}
{{- $a = append $a (printf "--runtime-config=%s" (include "plinth.sortedPairs" .)) }}
{{- end }}
{{- with $v.featureGates }}
{{- $a = append $a (printf "--feature-gates=%s" (include "plinth.sortedPairs" .)) }}
{{- end }}
{{- $a = append $a (printf "--v=%d" (int $v.logVerbosity)) }}
{{- range $v.extraArgs }}
{{- $a = append $a (toString .) }}
{{- end }}
{{- toJson $a }}
{{- end }}
