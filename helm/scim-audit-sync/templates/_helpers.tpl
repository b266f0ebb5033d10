{{/* Names, labels and the rendered daemon configuration. */}}

{{- define "scim-audit-sync.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "scim-audit-sync.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- $name := default .Chart.Name .Values.nameOverride -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{- define "scim-audit-sync.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* Selects the daemon pods only (not the helm test pod): the component is part of it. */}}
{{- define "scim-audit-sync.selectorLabels" -}}
app.kubernetes.io/name: {{ include "scim-audit-sync.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: daemon
{{- end -}}

{{- define "scim-audit-sync.commonLabels" -}}
helm.sh/chart: {{ include "scim-audit-sync.chart" . }}
app.kubernetes.io/name: {{ include "scim-audit-sync.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: scim-audit-sync
{{- with .Values.commonLabels }}
{{ toYaml . }}
{{- end }}
{{- end -}}

{{- define "scim-audit-sync.labels" -}}
{{ include "scim-audit-sync.commonLabels" . }}
app.kubernetes.io/component: daemon
{{- end -}}

{{- define "scim-audit-sync.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "scim-audit-sync.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- default "default" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{- define "scim-audit-sync.image" -}}
{{- if .Values.image.digest -}}
{{- printf "%s@%s" .Values.image.repository .Values.image.digest -}}
{{- else -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) -}}
{{- end -}}
{{- end -}}

{{/* Where every credential file is mounted; the config's *File keys point here. */}}
{{- define "scim-audit-sync.secretsDir" -}}/var/run/secrets/scim-audit-sync{{- end -}}
{{- define "scim-audit-sync.configDir" -}}/etc/scim-audit-sync{{- end -}}

{{/* Entries of the chart-created Secret (file name → value); empty when everything comes from existing Secrets. */}}
{{- define "scim-audit-sync.chartSecretData" -}}
{{- $data := dict -}}
{{- range $k, $v := .Values.credentials.values -}}
{{- if or (eq $k "platform-token") (eq $k "redis-password") -}}
{{- fail (printf "credentials.values.%s: this file name is reserved; use platformToken or redis instead" $k) -}}
{{- end -}}
{{- $_ := set $data $k $v -}}
{{- end -}}
{{- if and .Values.platformToken.value (not .Values.platformToken.existingSecret) -}}
{{- $_ := set $data "platform-token" .Values.platformToken.value -}}
{{- end -}}
{{- if and .Values.redis.password (not .Values.redis.existingSecret) -}}
{{- $_ := set $data "redis-password" .Values.redis.password -}}
{{- end -}}
{{- toYaml $data -}}
{{- end -}}

{{- define "scim-audit-sync.hasPlatformToken" -}}
{{- if or .Values.platformToken.existingSecret .Values.platformToken.value -}}true{{- end -}}
{{- end -}}

{{- define "scim-audit-sync.hasRedisPassword" -}}
{{- if or .Values.redis.existingSecret .Values.redis.password -}}true{{- end -}}
{{- end -}}

{{/*
The daemon configuration: the user's `config` plus the keys the chart owns (HTTP port, the
status page's bind address, port, allowed host names and, with the sidecar, trusted proxy,
shutdown bound, Redis connection, mounted token path, a writable state dir). values.schema.json
already refuses the owned keys in `config`; the checks below catch what a schema cannot.
*/}}
{{- define "scim-audit-sync.config" -}}
{{- $cfg := deepCopy (.Values.config | default dict) -}}
{{- $secrets := include "scim-audit-sync.secretsDir" . -}}
{{- if not .Values.redis.url -}}
{{- fail "redis.url is required: the daemon keeps its queues and state in Redis (e.g. redis://redis-master:6379)" -}}
{{- end -}}
{{- if and (not (hasKey $cfg "platform")) (not (hasKey $cfg "tenants")) -}}
{{- fail "config: set config.platform (one tenant) or config.tenants (several); see docs/kubernetes.md" -}}
{{- end -}}
{{- if le (int .Values.terminationGracePeriodSeconds) (add (int .Values.shutdownTimeoutSeconds) 4) -}}
{{- fail (printf "terminationGracePeriodSeconds (%v) must exceed shutdownTimeoutSeconds (%v) by at least 5 s, or the kubelet kills the daemon before it has closed its sinks and Redis" .Values.terminationGracePeriodSeconds .Values.shutdownTimeoutSeconds) -}}
{{- end -}}
{{- if hasKey $cfg "platform" -}}
{{- $platform := $cfg.platform -}}
{{- if not (dig "baseUrl" "" $platform) -}}
{{- fail "config.platform.baseUrl is required, e.g. https://acme.analytics.example.com" -}}
{{- end -}}
{{- if not (or (hasKey $platform "token") (hasKey $platform "tokenFile")) -}}
{{- if not (include "scim-audit-sync.hasPlatformToken" .) -}}
{{- fail "the platform token is missing: set platformToken.existingSecret (or platformToken.value), or config.platform.tokenFile" -}}
{{- end -}}
{{- $_ := set $platform "tokenFile" (printf "%s/platform-token" $secrets) -}}
{{- end -}}
{{- end -}}
{{- range $i, $t := (get $cfg "tenants" | default list) -}}
{{- $p := get $t "platform" | default dict -}}
{{- if not (or (hasKey $p "token") (hasKey $p "tokenFile")) -}}
{{- fail (printf "config.tenants[%d].platform.tokenFile is required with several tenants, e.g. %s/platform-token-%v (a credentials entry)" $i $secrets (get $t "tenant")) -}}
{{- end -}}
{{- end -}}
{{- $redis := dict "url" .Values.redis.url "keyPrefix" .Values.redis.keyPrefix -}}
{{- if include "scim-audit-sync.hasRedisPassword" . -}}
{{- $_ := set $redis "passwordFile" (printf "%s/redis-password" $secrets) -}}
{{- end -}}
{{- $_ := set $cfg "redis" (merge $redis (get $cfg "redis" | default dict)) -}}
{{- $userDaemon := get $cfg "daemon" | default dict -}}
{{- $userUi := get $userDaemon "ui" | default dict -}}
{{- /* The status page: loopback unless someone may reach its port (ui.ingressFrom, the Ingress); behind the sidecar always loopback. */ -}}
{{- $uiBind := "127.0.0.1" -}}
{{- if and (not .Values.ui.oauth2Proxy.enabled) (or .Values.ui.ingressFrom .Values.ingress.enabled) -}}
{{- $uiBind = "0.0.0.0" -}}
{{- end -}}
{{- $fullname := include "scim-audit-sync.fullname" . -}}
{{- $ns := .Release.Namespace -}}
{{- $hosts := list $fullname (printf "%s.%s" $fullname $ns) (printf "%s.%s.svc" $fullname $ns) (printf "%s.%s.svc.cluster.local" $fullname $ns) -}}
{{- if .Values.ingress.host -}}
{{- $hosts = append $hosts .Values.ingress.host -}}
{{- end -}}
{{- $ui := dict "host" $uiBind "port" (int .Values.ui.port) "allowedHosts" (concat $hosts (get $userUi "allowedHosts" | default list)) -}}
{{- if .Values.ui.oauth2Proxy.enabled -}}
{{- $_ := set $ui "trustedProxy" (dict "addresses" (list "127.0.0.1")) -}}
{{- end -}}
{{- $_ := set $userDaemon "ui" (merge $ui $userUi) -}}
{{- $daemon := dict "http" (dict "host" "0.0.0.0" "port" (int .Values.httpPort)) "shutdownTimeoutSeconds" .Values.shutdownTimeoutSeconds -}}
{{- $_ := set $cfg "daemon" (merge $daemon $userDaemon) -}}
{{- /* One-shot commands run through `kubectl exec` need a writable state dir; the daemon itself keeps state in Redis. */ -}}
{{- $_ := set $cfg "state" (merge (get $cfg "state" | default dict) (dict "dir" "/tmp/scim-audit-sync")) -}}
{{- toYaml $cfg -}}
{{- end -}}

{{/*
Label matchers for this release's series in alert expressions: what the ServiceMonitor
attaches, unless prometheusRule.seriesSelector says otherwise.
*/}}
{{- define "scim-audit-sync.seriesSelector" -}}
{{- if .Values.prometheusRule.seriesSelector -}}
{{- .Values.prometheusRule.seriesSelector -}}
{{- else -}}
{{- printf "namespace=%q,service=%q" .Release.Namespace (include "scim-audit-sync.fullname" .) -}}
{{- end -}}
{{- end -}}
