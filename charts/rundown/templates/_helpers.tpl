{{/* vim: set filetype=mustache: */}}

{{/*
Every service the chart knows: each top-level values block with `containerPorts` (sorted by name). Adding a
service is adding its block; nothing here names one. A service is rendered when .Values.<name>.enabled.
*/}}
{{- define "rundown.serviceNames" -}}
{{- $names := list -}}
{{- range $key, $value := .Values -}}
{{- if kindIs "map" $value -}}
{{- if hasKey $value "containerPorts" -}}
{{- $names = append $names $key -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- join " " $names -}}
{{- end -}}

{{/*
The secret variables a service reads: its secretEnv, plus INTERNAL_CONTEXT_KEYS, which every service needs to
sign and verify internal calls (not the migration Jobs: they make none). JSON list.
Usage: include "rundown.secretVars" (dict "svc" $svc "hook" false)
*/}}
{{- define "rundown.secretVars" -}}
{{- $vars := .svc.secretEnv | default list -}}
{{- /* Sentinel and cluster: no URL; the passwords, when named, from externalRedis.existingSecret. */ -}}
{{- if and .ctx (has "REDIS_URL" $vars) (ne .ctx.Values.externalRedis.mode "standalone") -}}
{{- $r := .ctx.Values.externalRedis -}}
{{- $vars = without $vars "REDIS_URL" -}}
{{- if $r.passwordKey }}{{ $vars = append $vars "REDIS_PASSWORD" }}{{ end -}}
{{- if and (eq $r.mode "sentinel") $r.sentinel.passwordKey }}{{ $vars = append $vars "REDIS_SENTINEL_PASSWORD" }}{{ end -}}
{{- end -}}
{{- if not .hook -}}
{{- $vars = append $vars "INTERNAL_CONTEXT_KEYS" | uniq -}}
{{- end -}}
{{- toJson $vars -}}
{{- end -}}

{{- define "rundown.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/*
Fully qualified app name. Service objects are "<fullname>-<service>", so fullname is kept to 40 characters
to leave room for the longest suffix ("-gateway-admin", "-migrate-rundown").
*/}}
{{- define "rundown.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 40 | trimSuffix "-" -}}
{{- else -}}
{{- $name := default .Chart.Name .Values.nameOverride -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 40 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 40 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{- define "rundown.namespace" -}}
{{- default .Release.Namespace .Values.namespaceOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "rundown.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* "<fullname>-<service>". Usage: include "rundown.componentName" (dict "ctx" $ "name" "auth") */}}
{{- define "rundown.componentName" -}}
{{- printf "%s-%s" (include "rundown.fullname" .ctx) .name | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* Selector labels. Usage: include "rundown.selectorLabels" (dict "ctx" $ "name" "auth") */}}
{{- define "rundown.selectorLabels" -}}
app.kubernetes.io/name: {{ include "rundown.name" .ctx }}
app.kubernetes.io/instance: {{ .ctx.Release.Name }}
{{- if .name }}
app.kubernetes.io/component: {{ .name }}
{{- end }}
{{- end -}}

{{/* Standard labels. Usage: include "rundown.labels" (dict "ctx" $ "name" "auth"); name may be "" */}}
{{- define "rundown.labels" -}}
{{ include "rundown.selectorLabels" . }}
helm.sh/chart: {{ include "rundown.chart" .ctx }}
app.kubernetes.io/version: {{ .ctx.Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .ctx.Release.Service }}
app.kubernetes.io/part-of: rundown
{{- with .ctx.Values.commonLabels }}
{{ toYaml . }}
{{- end }}
{{- end -}}

{{/* Common annotations block (metadata.annotations), merged with extra annotations passed as .extra */}}
{{- define "rundown.annotations" -}}
{{- $all := merge (deepCopy (.extra | default dict)) (deepCopy (.ctx.Values.commonAnnotations | default dict)) -}}
{{- if $all -}}
annotations:
{{- toYaml $all | nindent 2 }}
{{- end -}}
{{- end -}}

{{/*
Image reference for a service: per-service image keys win over image.*, global.imageRegistry over both
registries. A digest wins over the tag; a tag may itself carry "@sha256:..." (skaffold).
Usage: include "rundown.image" (dict "ctx" $ "svc" $svc)
*/}}
{{- define "rundown.image" -}}
{{- $root := .ctx.Values.image -}}
{{- $own := .svc.image | default dict -}}
{{- $registry := coalesce .ctx.Values.global.imageRegistry $own.registry $root.registry | default "" -}}
{{- $repository := default $root.repository $own.repository -}}
{{- /* trimSuffix "@": skaffold renders "<tag>@" when it has no digest (dry-run / local digest source) */ -}}
{{- $tag := default (default .ctx.Chart.AppVersion $root.tag) $own.tag | toString | trimSuffix "@" -}}
{{- $digest := default $root.digest $own.digest -}}
{{- $name := ternary (printf "%s/%s" $registry $repository) $repository (ne $registry "") -}}
{{- if $digest -}}
{{- printf "%s@%s" $name $digest -}}
{{- else -}}
{{- printf "%s:%s" $name $tag -}}
{{- end -}}
{{- end -}}

{{- define "rundown.imagePullPolicy" -}}
{{- $own := .svc.image | default dict -}}
{{- default .ctx.Values.image.pullPolicy $own.pullPolicy -}}
{{- end -}}

{{- define "rundown.imagePullSecrets" -}}
{{- $secrets := concat (.Values.global.imagePullSecrets | default list) (.Values.image.pullSecrets | default list) | uniq -}}
{{- if $secrets -}}
imagePullSecrets:
{{- range $secrets }}
  - name: {{ if kindIs "map" . }}{{ .name }}{{ else }}{{ . }}{{ end }}
{{- end }}
{{- end -}}
{{- end -}}

{{- define "rundown.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "rundown.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- default "default" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{- define "rundown.migrationsServiceAccountName" -}}
{{- if .Values.migrations.serviceAccountName -}}
{{- .Values.migrations.serviceAccountName -}}
{{- else if not .Values.serviceAccount.create -}}
{{- default "default" .Values.serviceAccount.name -}}
{{- else -}}
default
{{- end -}}
{{- end -}}

{{/* Name of the Secret the chart creates (regular object) and of its hook-scoped copy for migrations. */}}
{{- define "rundown.chartSecretName" -}}
{{- include "rundown.fullname" . -}}
{{- end -}}
{{- define "rundown.hookSecretName" -}}
{{- printf "%s-migrate" (include "rundown.fullname" .) -}}
{{- end -}}

{{/*
Where a secret env var of a service comes from. Returns JSON {"secret": <name>|"", "key": <key>}; secret ""
means "the chart's own Secret" (caller substitutes the regular or the hook-scoped name).
Order: DATABASE_URL: <svc>.database.existingSecret > externalDatabase.existingSecret > externalDatabase.url
(chart Secret) > secrets.existingSecret > chart Secret. REDIS_URL likewise with externalRedis. The other keys:
secrets.existingSecret > chart Secret.
Usage: include "rundown.secretSource" (dict "ctx" $ "svc" $svc "var" "DATABASE_URL")
*/}}
{{- define "rundown.secretSource" -}}
{{- $v := .ctx.Values -}}
{{- $src := dict "secret" $v.secrets.existingSecret "key" .var -}}
{{- if eq .var "DATABASE_URL" -}}
{{- $db := .svc.database | default dict -}}
{{- if $db.existingSecret -}}
{{- $src = dict "secret" $db.existingSecret "key" (default "DATABASE_URL" $db.existingSecretKey) -}}
{{- else if $v.externalDatabase.existingSecret -}}
{{- $src = dict "secret" $v.externalDatabase.existingSecret "key" (default "DATABASE_URL" $v.externalDatabase.existingSecretKey) -}}
{{- else if $v.externalDatabase.url -}}
{{- $src = dict "secret" "" "key" "DATABASE_URL" -}}
{{- end -}}
{{- else if eq .var "REDIS_PASSWORD" -}}
{{- $src = dict "secret" (required "externalRedis.existingSecret is required with externalRedis.passwordKey" $v.externalRedis.existingSecret) "key" $v.externalRedis.passwordKey -}}
{{- else if eq .var "REDIS_SENTINEL_PASSWORD" -}}
{{- $src = dict "secret" (required "externalRedis.existingSecret is required with externalRedis.sentinel.passwordKey" $v.externalRedis.existingSecret) "key" $v.externalRedis.sentinel.passwordKey -}}
{{- else if eq .var "REDIS_URL" -}}
{{- if $v.externalRedis.existingSecret -}}
{{- $src = dict "secret" $v.externalRedis.existingSecret "key" (default "REDIS_URL" $v.externalRedis.existingSecretKey) -}}
{{- else if $v.externalRedis.url -}}
{{- $src = dict "secret" "" "key" "REDIS_URL" -}}
{{- end -}}
{{- end -}}
{{- toJson $src -}}
{{- end -}}

{{/*
The value the chart stores for a secret key, validated. Fails with a clear message when it is missing or weak.
Usage: include "rundown.secretValue" (dict "ctx" $ "key" "V0_TOKEN_SECRET")
*/}}
{{- define "rundown.secretValue" -}}
{{- $v := .ctx.Values -}}
{{- $hint := "or set secrets.existingSecret" -}}
{{- if eq .key "DATABASE_URL" -}}
{{- $url := required "externalDatabase.url (or externalDatabase.existingSecret / secrets.existingSecret) is required" $v.externalDatabase.url -}}
{{- if and $url (not (regexMatch "^postgres(ql)?://" $url)) -}}{{- fail "externalDatabase.url must start with postgres:// or postgresql://" -}}{{- end -}}
{{- $url -}}
{{- else if eq .key "REDIS_URL" -}}
{{- $url := required "externalRedis.url (or externalRedis.existingSecret / secrets.existingSecret) is required" $v.externalRedis.url -}}
{{- if and $url (not (regexMatch "^rediss?://" $url)) -}}{{- fail "externalRedis.url must start with redis:// or rediss://" -}}{{- end -}}
{{- $url -}}
{{- else if eq .key "JWT_PRIVATE_KEYS" -}}
{{- $keys := $v.secrets.jwtPrivateKeys -}}
{{- $raw := "" -}}
{{- if kindIs "string" $keys -}}{{- $raw = $keys -}}{{- $keys = fromJsonArray $keys -}}{{- end -}}
{{- $_ := required (printf "secrets.jwtPrivateKeys (JWT_PRIVATE_KEYS) is required %s" $hint) $keys -}}
{{- range $keys -}}
{{- if not (kindIs "map" .) -}}
{{- fail "secrets.jwtPrivateKeys must be a JSON array of private JWKs (objects), each with kid and kty" -}}
{{- end -}}
{{- if not (and (hasKey . "kid") (hasKey . "kty") (hasKey . "d")) -}}
{{- fail "secrets.jwtPrivateKeys: every JWK needs kid, kty and d (a private key)" -}}
{{- end -}}
{{- if hasKey . "true" -}}
{{- fail "secrets.jwtPrivateKeys: a JWK has a key \"true\": quote the EC coordinate \"y\" (YAML 1.1 reads a bare y as true) or give the JSON string" -}}
{{- end -}}
{{- end -}}
{{- $raw | default (toJson $keys) -}}
{{- else if has .key (list "INTERNAL_CONTEXT_KEYS" "WEBHOOKS_SECRET_KEYS") -}}
{{- /* Keyrings (services/shared/src/keyring.ts): kid:secret[,kid:secret], the first signs or seals. */ -}}
{{- $field := get (dict "INTERNAL_CONTEXT_KEYS" "internalContextKeys" "WEBHOOKS_SECRET_KEYS" "webhooksSecretKeys") .key -}}
{{- $value := required (printf "secrets.%s (%s) is required %s" $field .key $hint) (get $v.secrets $field | default "" | toString) -}}
{{- range $entry := ternary (splitList "," $value) list (ne $value "") -}}
{{- if not (regexMatch "^[A-Za-z0-9_-]{1,32}:.{32,}$" (trim $entry)) -}}
{{- fail (printf "secrets.%s (%s) must be kid:secret[,kid:secret] (kid [A-Za-z0-9_-]{1,32}, secret at least 32 characters) %s" $field $.key $hint) -}}
{{- end -}}
{{- end -}}
{{- $value -}}
{{- else -}}
{{- $field := get (dict "V0_TOKEN_SECRET" "v0TokenSecret" "CURSOR_SECRET" "cursorSecret" "ADMIN_SECRET" "adminSecret") .key -}}
{{- if not $field -}}{{- fail (printf "unknown secret variable %s in a secretEnv list" .key) -}}{{- end -}}
{{- $value := required (printf "secrets.%s (%s) is required %s" $field .key $hint) (get $v.secrets $field | default "" | toString) -}}
{{- $min := ternary 16 32 (eq .key "ADMIN_SECRET") -}}
{{- if and $value (lt (len $value) $min) -}}
{{- fail (printf "secrets.%s (%s) must be at least %d characters %s" $field .key $min $hint) -}}
{{- end -}}
{{- $value -}}
{{- end -}}
{{- end -}}

{{/*
Data of the chart-owned Secret: every key some enabled service reads from it (JSON object, validated).
*/}}
{{- define "rundown.chartSecretData" -}}
{{- $ctx := . -}}
{{- $data := dict -}}
{{- range $name := splitList " " (include "rundown.serviceNames" $ctx) -}}
{{- $svc := index $ctx.Values $name -}}
{{- if $svc.enabled -}}
{{- range $var := include "rundown.secretVars" (dict "ctx" $ctx "svc" $svc "hook" false) | fromJsonArray -}}
{{- $src := include "rundown.secretSource" (dict "ctx" $ctx "svc" $svc "var" $var) | fromJson -}}
{{- if not $src.secret -}}
{{- $_ := set $data $src.key (include "rundown.secretValue" (dict "ctx" $ctx "key" $src.key)) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- toJson $data -}}
{{- end -}}

{{/*
Secret env entries of a service. Usage: include "rundown.secretEnv" (dict "ctx" $ "svc" $svc "hook" false)
*/}}
{{- define "rundown.secretEnv" -}}
{{- $ctx := .ctx -}}
{{- $svc := .svc -}}
{{- $own := ternary (include "rundown.hookSecretName" $ctx) (include "rundown.chartSecretName" $ctx) (.hook | default false) -}}
{{- range $var := include "rundown.secretVars" (dict "ctx" $ctx "svc" $svc "hook" (.hook | default false)) | fromJsonArray }}
{{- $src := include "rundown.secretSource" (dict "ctx" $ctx "svc" $svc "var" $var) | fromJson }}
- name: {{ $var }}
  valueFrom:
    secretKeyRef:
      name: {{ default $own $src.secret }}
      key: {{ $src.key }}
{{- end }}
{{- end -}}

{{/*
Name of a service's headless Service (one DNS A record per ready pod), which internal gRPC clients resolve.
Usage: include "rundown.headlessName" (dict "ctx" $ "name" "auth")
*/}}
{{- define "rundown.headlessName" -}}
{{- include "rundown.componentName" (dict "ctx" .ctx "name" (printf "%s-headless" .name)) -}}
{{- end -}}

{{/*
The services a service calls, space-separated: its `upstreams`, and every service whose block names it in
`callers` (a new service says who calls it in its own block: no other block changes).
*/}}
{{- define "rundown.upstreamsOf" -}}
{{- $svc := index .ctx.Values .name -}}
{{- $ups := $svc.upstreams | default list -}}
{{- range $other := splitList " " (include "rundown.serviceNames" .ctx) -}}
{{- $o := index $.ctx.Values $other -}}
{{- if and (has $.name ($o.callers | default list)) (not (has $other $ups)) -}}
{{- $ups = append $ups $other -}}
{{- end -}}
{{- end -}}
{{- join " " $ups -}}
{{- end -}}

{{/*
The services some enabled service calls (see rundown.upstreamsOf), space-separated: they
get a headless Service.
*/}}
{{- define "rundown.calledServices" -}}
{{- $called := list -}}
{{- range $name := splitList " " (include "rundown.serviceNames" .) -}}
{{- $svc := index $.Values $name -}}
{{- if $svc.enabled -}}
{{- $called = concat $called (compact (splitList " " (include "rundown.upstreamsOf" (dict "ctx" $ "name" $name)))) -}}
{{- end -}}
{{- end -}}
{{- join " " ($called | uniq) -}}
{{- end -}}

{{/*
Address of an upstream service or "" when it is neither enabled nor overridden: dns:/// of its headless Service
with the container port (a headless Service maps no ports: clients connect to the pods themselves).
Usage: include "rundown.upstreamAddr" (dict "ctx" $ "svc" $svc "up" "auth")
*/}}
{{- define "rundown.upstreamAddr" -}}
{{- $override := get (.svc.upstreamAddresses | default dict) .up -}}
{{- $target := index .ctx.Values .up | default dict -}}
{{- if not (has .up (splitList " " (include "rundown.serviceNames" .ctx))) -}}
{{- fail (printf "unknown upstream %q (one of: %s)" .up (include "rundown.serviceNames" .ctx)) -}}
{{- end -}}
{{- if $override -}}
{{- $override -}}
{{- else if $target.enabled -}}
{{- printf "dns:///%s.%s.svc.%s:%v" (include "rundown.headlessName" (dict "ctx" .ctx "name" .up)) (include "rundown.namespace" .ctx) .ctx.Values.clusterDomain $target.containerPorts.grpc -}}
{{- end -}}
{{- end -}}

{{/*
Address of an upstream's admin gRPC port (dns:/// of its headless Service), or "" when it has none (not enabled, no grpc-admin
port). Override: <svc>.upstreamAddresses.<up>-admin.
Usage: include "rundown.upstreamAdminAddr" (dict "ctx" $ "svc" $svc "up" "auth")
*/}}
{{- define "rundown.upstreamAdminAddr" -}}
{{- $override := get (.svc.upstreamAddresses | default dict) (printf "%s-admin" .up) -}}
{{- $target := index .ctx.Values .up | default dict -}}
{{- $port := index ($target.containerPorts | default dict) "grpc-admin" -}}
{{- if $override -}}
{{- $override -}}
{{- else if and $target.enabled $port -}}
{{- printf "dns:///%s.%s.svc.%s:%v" (include "rundown.headlessName" (dict "ctx" .ctx "name" .up)) (include "rundown.namespace" .ctx) .ctx.Values.clusterDomain $port -}}
{{- end -}}
{{- end -}}

{{/* PUBLIC_URL: config.publicUrl, else derived from the ingress host. */}}
{{- define "rundown.publicUrl" -}}
{{- if .Values.config.publicUrl -}}
{{- .Values.config.publicUrl | trimSuffix "/" -}}
{{- else if .Values.ingress.enabled -}}
{{- printf "%s://%s" (ternary "https" "http" .Values.ingress.tls) .Values.ingress.hostname -}}
{{- else -}}
{{- required "config.publicUrl is required when the ingress is disabled (PUBLIC_URL of the gateway)" .Values.config.publicUrl -}}
{{- end -}}
{{- end -}}

{{/*
Non-secret environment of a service as a JSON object of strings (ConfigMap data; inlined into hook Jobs).
Usage: include "rundown.configEnv" (dict "ctx" $ "name" "auth")
*/}}
{{- define "rundown.configEnv" -}}
{{- $ctx := .ctx -}}
{{- $v := $ctx.Values -}}
{{- $name := .name -}}
{{- $svc := index $v $name -}}
{{- $env := dict -}}
{{- $_ := set $env "LOG_LEVEL" (default $v.config.logLevel $svc.logLevel) -}}
{{- $_ := set $env "OTEL_SERVICE_NAME" (printf "%s%s" ($v.config.otel.serviceNamePrefix | default "") $name) -}}
{{- if $v.config.otel.exporterOtlpEndpoint -}}
{{- $_ := set $env "OTEL_EXPORTER_OTLP_ENDPOINT" $v.config.otel.exporterOtlpEndpoint -}}
{{- end -}}
{{- if $v.config.otel.tracesSamplerArg -}}
{{- $_ := set $env "OTEL_TRACES_SAMPLER_ARG" $v.config.otel.tracesSamplerArg -}}
{{- end -}}
{{- $_ := set $env "TOKEN_ENVIRONMENT" $v.config.tokenEnvironment -}}
{{- with $v.config.shutdown -}}
{{- $_ := set $env "SHUTDOWN_DELAY_MS" (toString .delayMs) -}}
{{- $_ := set $env "SHUTDOWN_GRACE_MS" (toString .graceMs) -}}
{{- $total := add (mul (.preStopSeconds | default 0) 1000) .delayMs .graceMs -}}
{{- if le (mul $svc.terminationGracePeriodSeconds 1000) $total -}}
{{- fail (printf "%s.terminationGracePeriodSeconds (%v s) must exceed config.shutdown.preStopSeconds + delayMs + graceMs (%v ms): the kubelet would kill a draining pod" $name $svc.terminationGracePeriodSeconds $total) -}}
{{- end -}}
{{- end -}}
{{- with $v.config.grpc -}}
{{- $_ := set $env "GRPC_MAX_CONNECTION_AGE_MS" (toString .maxConnectionAgeMs) -}}
{{- $_ := set $env "GRPC_MAX_CONNECTION_AGE_GRACE_MS" (toString .maxConnectionAgeGraceMs) -}}
{{- if gt (int .maxConnectionAgeGraceMs) (int $v.config.shutdown.graceMs) -}}
{{- fail (printf "config.grpc.maxConnectionAgeGraceMs (%v ms) must fit in config.shutdown.graceMs (%v ms): a stopping pod lets its gRPC calls finish that long" .maxConnectionAgeGraceMs $v.config.shutdown.graceMs) -}}
{{- end -}}
{{- end -}}
{{- if $v.metrics.enabled -}}
{{- $_ := set $env "METRICS_PORT" (toString $v.metrics.port) -}}
{{- end -}}
{{- if has "REDIS_URL" ($svc.secretEnv | default list) -}}
{{- range $k, $val := include "rundown.redisEnv" $ctx | fromJson }}{{ $_ := set $env $k $val }}{{ end -}}
{{- end -}}
{{- $_ := set $env "GRPC_PORT" (toString $svc.containerPorts.grpc) -}}
{{- with (index $svc.containerPorts "grpc-admin") }}{{ $_ := set $env "ADMIN_GRPC_PORT" (toString .) }}{{ end -}}
{{- with $svc.containerPorts.http }}{{ $_ := set $env "HTTP_PORT" (toString .) }}{{ end -}}
{{- with $svc.containerPorts.admin }}{{ $_ := set $env "ADMIN_PORT" (toString .) }}{{ end -}}
{{- /* A service that serves public HTTP states the public address in its answers. */ -}}
{{- if $svc.containerPorts.http -}}
{{- $_ := set $env "PUBLIC_URL" (include "rundown.publicUrl" $ctx) -}}
{{- end -}}
{{- $required := $svc.requiredUpstreams | default list -}}
{{- $adminCaller := has $name ($v.adminCallers | default list) -}}
{{- $ups := compact (splitList " " (include "rundown.upstreamsOf" (dict "ctx" $ctx "name" $name))) -}}
{{- range $up := $ups -}}
{{- $addr := include "rundown.upstreamAddr" (dict "ctx" $ctx "svc" $svc "up" $up) -}}
{{- if $addr -}}
{{- $_ := set $env (printf "%s_ADDR" (upper $up)) $addr -}}
{{- else if has $up $required -}}
{{- fail (printf "%s needs %s_ADDR: enable %s or set %s.upstreamAddresses.%s" $name (upper $up) $up $name $up) -}}
{{- end -}}
{{- if $adminCaller -}}
{{- with (include "rundown.upstreamAdminAddr" (dict "ctx" $ctx "svc" $svc "up" $up)) -}}
{{- $_ := set $env (printf "%s_ADMIN_ADDR" (upper $up)) . -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- range $up := $required -}}
{{- if not (has $up $ups) -}}
{{- fail (printf "%s.upstreams must include %s" $name $up) -}}
{{- end -}}
{{- end -}}
{{- /* The block's own settings: config.adminHost -> ADMIN_HOST. */ -}}
{{- range $key, $value := ($svc.config | default dict) -}}
{{- $_ := set $env (snakecase $key | upper) (toString $value) -}}
{{- end -}}
{{- toJson $env -}}
{{- end -}}

{{/*
Downward-API env shared by service pods and migration Jobs (OTel resource attributes).
*/}}
{{- define "rundown.podEnv" -}}
- name: POD_NAME
  valueFrom:
    fieldRef:
      fieldPath: metadata.name
- name: POD_NAMESPACE
  valueFrom:
    fieldRef:
      fieldPath: metadata.namespace
{{- $attrs := list "k8s.pod.name=$(POD_NAME)" "k8s.namespace.name=$(POD_NAMESPACE)" (printf "service.version=%s" .Chart.AppVersion) -}}
{{- range $k, $val := .Values.config.otel.resourceAttributes -}}
{{- $attrs = append $attrs (printf "%s=%v" $k $val) -}}
{{- end }}
- name: OTEL_RESOURCE_ATTRIBUTES
  value: {{ join "," $attrs | quote }}
{{- end -}}

{{/* securityContext objects without the chart's "enabled" switch. Usage: include "rundown.podSecurityContext" (dict "ctx" $ "svc" $svc) */}}
{{- define "rundown.podSecurityContext" -}}
{{- $sc := .svc.podSecurityContext | default .ctx.Values.podSecurityContext -}}
{{- if $sc.enabled -}}
{{- toYaml (omit $sc "enabled") -}}
{{- end -}}
{{- end -}}

{{- define "rundown.containerSecurityContext" -}}
{{- $sc := .svc.containerSecurityContext | default .ctx.Values.containerSecurityContext -}}
{{- if $sc.enabled -}}
{{- toYaml (omit $sc "enabled") -}}
{{- end -}}
{{- end -}}

{{/*
One probe. Custom probe wins; else, when enabled, timings from the probe block plus the handler:
native gRPC (grpc.health.v1) for gRPC services, HTTP GET for the gateway.
Usage: include "rundown.probe" (dict "svc" $svc "probe" "livenessProbe" "path" "/healthz")
*/}}
{{- define "rundown.probe" -}}
{{- $custom := get .svc (printf "custom%s" (title .probe)) -}}
{{- $cfg := get .svc .probe -}}
{{- if $custom -}}
{{ .probe }}:
{{- toYaml $custom | nindent 2 }}
{{- else if and $cfg $cfg.enabled -}}
{{ .probe }}:
{{- toYaml (omit $cfg "enabled") | nindent 2 }}
{{- if eq .svc.healthCheck.type "http" }}
  httpGet:
    path: {{ .path }}
    port: {{ .svc.healthCheck.port | default "http" }}
{{- else }}
  grpc:
    port: {{ .svc.containerPorts.grpc }}
    {{- with .svc.healthCheck.grpcService }}
    service: {{ . | quote }}
    {{- end }}
{{- end }}
{{- end -}}
{{- end -}}

{{/* emptyDir spec of the writable /tmp volume */}}
{{- define "rundown.tmpEmptyDir" -}}
{{- $spec := dict -}}
{{- with .Values.tmpVolume.medium }}{{ $_ := set $spec "medium" . }}{{ end -}}
{{- with .Values.tmpVolume.sizeLimit }}{{ $_ := set $spec "sizeLimit" . }}{{ end -}}
{{- toYaml $spec -}}
{{- end -}}

{{/*
The non-secret Redis settings of a service that uses Redis (JSON object), validated: REDIS_MODE and, by
mode, the sentinels and the primary's name, or the cluster's seed nodes (services/shared/src/redis.ts).
*/}}
{{- define "rundown.redisEnv" -}}
{{- $r := .Values.externalRedis -}}
{{- $env := dict "REDIS_MODE" $r.mode -}}
{{- if eq $r.mode "sentinel" -}}
{{- if not $r.sentinel.addresses -}}{{- fail "externalRedis.sentinel.addresses is required with externalRedis.mode sentinel" -}}{{- end -}}
{{- $_ := set $env "REDIS_SENTINELS" (join "," $r.sentinel.addresses) -}}
{{- $_ := set $env "REDIS_SENTINEL_MASTER" (required "externalRedis.sentinel.masterName is required with externalRedis.mode sentinel" $r.sentinel.masterName) -}}
{{- if $r.sentinel.tls }}{{ $_ := set $env "REDIS_SENTINEL_TLS" "true" }}{{ end -}}
{{- else if eq $r.mode "cluster" -}}
{{- if not $r.cluster.nodes -}}{{- fail "externalRedis.cluster.nodes is required with externalRedis.mode cluster" -}}{{- end -}}
{{- $_ := set $env "REDIS_CLUSTER_NODES" (join "," $r.cluster.nodes) -}}
{{- end -}}
{{- if ne $r.mode "standalone" -}}
{{- if $r.username }}{{ $_ := set $env "REDIS_USERNAME" $r.username }}{{ end -}}
{{- if $r.tls }}{{ $_ := set $env "REDIS_TLS" "true" }}{{ end -}}
{{- end -}}
{{- if not (kindIs "invalid" $r.waitReplicas) }}{{ $_ := set $env "REDIS_WAIT_REPLICAS" (toString $r.waitReplicas) }}{{ end -}}
{{- toJson $env -}}
{{- end -}}
