{{/*
Names and labels.
*/}}
{{- define "offsetsync.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 40 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 40 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "offsetsync.selectorLabels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "offsetsync.labels" -}}
{{ include "offsetsync.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{/*
One service Deployment's component name: the role, plus the cluster alias for the roles that serve one
cluster ("collector-onprem", "committer-cloud", "health"). Names the Deployment (after the fullname) and its
key in the ConfigMap. Argument: dict "root" . "role" <role> "alias" <alias or "">.
*/}}
{{- define "offsetsync.component" -}}
{{- if .alias -}}{{ printf "%s-%s" .role .alias }}{{- else -}}{{ .role }}{{- end -}}
{{- end -}}

{{/*
Deep-merges .src into the map .dst, in place: maps merge key by key, every other value (lists, false, 0,
null included) replaces. Written out instead of sprig's mergeOverwrite so that the rule is this one line,
which deploy-config.test.ts mirrors (helmMerge) without guessing at mergo's treatment of empty values.
Pass a deepCopy as .src: its maps are linked into .dst, not copied.
Argument: dict "dst" <map> "src" <map>.
*/}}
{{- define "offsetsync.mergeInto" -}}
{{- $dst := .dst -}}
{{- range $key, $value := .src -}}
{{- $current := get $dst $key -}}
{{- if and (hasKey $dst $key) (kindIs "map" $current) (kindIs "map" $value) -}}
{{- include "offsetsync.mergeInto" (dict "dst" $current "src" $value) -}}
{{- else -}}
{{- $_ := set $dst $key $value -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/*
The `components` entry of a component name, and the one under "*" that every component shares.
Argument: dict "root" . "component" <name>. Returns the entry as YAML ("{}" when there is none).
*/}}
{{- define "offsetsync.componentValues" -}}
{{- $components := default (dict) .root.Values.components -}}
{{- toYaml (default (dict) (get $components .component)) -}}
{{- end -}}

{{/*
The config file of one service Deployment, deep-merged from general to specific (later layers win):
  1. `config`                                  (shared by all components)
  2. `components."*".config`
  3. <role>.settings, as the <role> section     (shared by the role's Deployments)
  4. `components.<component>.config`            (this Deployment only)
  5. what the chart sets: <role>.cluster (collector) or <role>.target (translator, committer) = the alias,
     and `probes` (the endpoint of the liveness and readiness probes).
With provision.enabled, `nats.provisioning` becomes `verify` unless a layer sets it: the provision hook Job
creates the streams, the KV bucket and the durable consumers, so no service needs JetStream admin rights.
deploy-config.test.ts builds the same files in TypeScript and validates them against the config schema.
Argument: dict "root" . "role" <role> "alias" <alias or "">.
*/}}
{{- define "offsetsync.serviceConfig" -}}
{{- $values := .root.Values -}}
{{- $component := include "offsetsync.component" . -}}
{{- $shared := include "offsetsync.componentValues" (dict "root" .root "component" "*") | fromYaml -}}
{{- $own := include "offsetsync.componentValues" (dict "root" .root "component" $component) | fromYaml -}}
{{- $fixed := dict -}}
{{- if eq .role "collector" -}}
{{- $_ := set $fixed "cluster" .alias -}}
{{- else if or (eq .role "translator") (eq .role "committer") -}}
{{- $_ := set $fixed "target" .alias -}}
{{- end -}}
{{- $layers := list
  (default (dict) $values.config)
  (default (dict) $shared.config)
  (dict .role (default (dict) (index $values .role "settings")))
  (default (dict) $own.config)
  (dict .role $fixed "probes" (dict "enabled" true "host" "0.0.0.0" "port" $values.probes.port)) -}}
{{- $config := dict -}}
{{- range $layer := $layers -}}
{{- include "offsetsync.mergeInto" (dict "dst" $config "src" (deepCopy $layer)) -}}
{{- end -}}
{{- if $values.provision.enabled -}}
{{- $nats := get $config "nats" -}}
{{- if not (kindIs "map" $nats) -}}
{{- $nats = dict -}}
{{- $_ := set $config "nats" $nats -}}
{{- end -}}
{{- if not (hasKey $nats "provisioning") -}}
{{- $_ := set $nats "provisioning" "verify" -}}
{{- end -}}
{{- end -}}
{{- toYaml $config -}}
{{- end -}}

{{/*
The config file of the provision Job (`offsetsync provision`), component "provision":
  1. `config`   2. `components."*".config`   3. the committer's ack wait (below)   4. `components.provision.config`
It has no service section and no probes: the command runs once and exits. `offsetsync provision` gives
every committer durable consumer the ack wait of its own config's committer section; so that it is the
one the committers run with, committer.settings.ackWaitMs (when set) is passed on as a committer section
naming the first committer target (the schema requires a target there; provision reads only ackWaitMs).
Set ackWaitMs in committer.settings, not per committer component: provisioning gives all committer
consumers the same ack wait.
*/}}
{{- define "offsetsync.provisionConfig" -}}
{{- $values := .Values -}}
{{- $shared := include "offsetsync.componentValues" (dict "root" . "component" "*") | fromYaml -}}
{{- $own := include "offsetsync.componentValues" (dict "root" . "component" "provision") | fromYaml -}}
{{- $committer := dict -}}
{{- $committerSettings := default (dict) $values.committer.settings -}}
{{- if and $values.committer.enabled $values.committer.targets (hasKey $committerSettings "ackWaitMs") -}}
{{- $committer = dict "committer" (dict "target" (first $values.committer.targets) "ackWaitMs" $committerSettings.ackWaitMs) -}}
{{- end -}}
{{- $layers := list
  (default (dict) $values.config)
  (default (dict) $shared.config)
  $committer
  (default (dict) $own.config) -}}
{{- $config := dict -}}
{{- range $layer := $layers -}}
{{- include "offsetsync.mergeInto" (dict "dst" $config "src" (deepCopy $layer)) -}}
{{- end -}}
{{- toYaml $config -}}
{{- end -}}

{{/*
The component names the chart renders, space-separated, in the order of the manifests.
*/}}
{{- define "offsetsync.componentNames" -}}
{{- $names := list -}}
{{- if .Values.collector.enabled -}}
{{- range $alias := .Values.collector.clusters -}}
{{- $names = append $names (printf "collector-%s" $alias) -}}
{{- end -}}
{{- end -}}
{{- range $role := list "translator" "committer" -}}
{{- if (index $.Values $role).enabled -}}
{{- range $alias := (index $.Values $role).targets -}}
{{- $names = append $names (printf "%s-%s" $role $alias) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- if .Values.health.enabled -}}
{{- $names = append $names "health" -}}
{{- end -}}
{{- if .Values.provision.enabled -}}
{{- $names = append $names "provision" -}}
{{- end -}}
{{- join " " $names -}}
{{- end -}}

{{/*
Fails the rendering on a `components` entry that would be silently ignored or give a pod it cannot start
with: a key that names no rendered component (a typo, or a disabled one), a field other than config,
secretMounts and secretEnv, a Secret mount without secretName or mountPath, a mountPath that is not
absolute or lies in the config volume (/etc/offsetsync), two mounts at one path in one pod.
deploy-config.test.ts mirrors these checks.
*/}}
{{- define "offsetsync.checkComponents" -}}
{{- $names := splitList " " (include "offsetsync.componentNames" .) -}}
{{- $components := default (dict) .Values.components -}}
{{- range $key, $entry := $components -}}
{{- if and (ne $key "*") (not (has $key $names)) -}}
{{- fail (printf `components.%s: no such component; this release renders %s ("*" applies to all)` $key (join ", " $names)) -}}
{{- end -}}
{{- range $field, $_ := (default (dict) $entry) -}}
{{- if not (has $field (list "config" "secretMounts" "secretEnv")) -}}
{{- fail (printf "components.%s.%s: unknown field; a component takes config, secretMounts and secretEnv" $key $field) -}}
{{- end -}}
{{- end -}}
{{- range $index, $mount := (default (list) (default (dict) $entry).secretMounts) -}}
{{- $where := printf "components.%s.secretMounts[%d]" $key $index -}}
{{- if not $mount.secretName -}}
{{- fail (printf "%s: secretName is required" $where) -}}
{{- end -}}
{{- if not (hasPrefix "/" (toString $mount.mountPath)) -}}
{{- fail (printf "%s: mountPath must be an absolute path" $where) -}}
{{- end -}}
{{- if or (eq (trimSuffix "/" $mount.mountPath) "/etc/offsetsync") (hasPrefix "/etc/offsetsync/" $mount.mountPath) -}}
{{- fail (printf "%s: mountPath %s lies in the config volume /etc/offsetsync; use another directory, for example /var/run/secrets/offsetsync/<name>" $where $mount.mountPath) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- range $name := $names -}}
{{- $seen := list -}}
{{- range $mount := include "offsetsync.secretMounts" (dict "root" $ "component" $name) | fromYamlArray -}}
{{- $path := trimSuffix "/" $mount.mountPath -}}
{{- if has $path $seen -}}
{{- fail (printf `%s: two Secrets mounted at %s (from components."*" and components.%s)` $name $path $name) -}}
{{- end -}}
{{- $seen = append $seen $path -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/*
The Secret mounts of one component: those under components."*" (shared things such as a CA bundle), then
its own. Argument: dict "root" . "component" <name>. Returns a YAML list.
*/}}
{{- define "offsetsync.secretMounts" -}}
{{- $shared := include "offsetsync.componentValues" (dict "root" .root "component" "*") | fromYaml -}}
{{- $own := include "offsetsync.componentValues" (dict "root" .root "component" .component) | fromYaml -}}
{{- toYaml (concat (default (list) $shared.secretMounts) (default (list) $own.secretMounts)) -}}
{{- end -}}

{{/*
The env list of one component's container: NODE_OPTIONS from heapMb, the global secretEnv (which reaches
every container), components."*".secretEnv, the component's own secretEnv, then extraEnv.
Argument: dict "root" . "component" <name> "heapMb" <MB or nil>.
*/}}
{{- define "offsetsync.env" -}}
{{- $root := .root -}}
{{- $shared := include "offsetsync.componentValues" (dict "root" $root "component" "*") | fromYaml -}}
{{- $own := include "offsetsync.componentValues" (dict "root" $root "component" .component) | fromYaml -}}
{{- $secretEnv := concat (default (list) $root.Values.secretEnv) (default (list) $shared.secretEnv) (default (list) $own.secretEnv) -}}
{{- with .heapMb }}
- name: NODE_OPTIONS
  value: {{ printf "--max-old-space-size=%v" . | quote }}
{{- end }}
{{- range $secretEnv }}
- name: {{ .name }}
  valueFrom:
    secretKeyRef:
      name: {{ .secretName }}
      key: {{ .key }}
{{- end }}
{{- with $root.Values.extraEnv }}
{{ toYaml . }}
{{- end }}
{{- end -}}

{{/*
The config volume mount, a writable /tmp (the root filesystem is read-only) and one read-only mount per
Secret of the component.
Argument: dict "root" . "component" <name>.
*/}}
{{- define "offsetsync.volumeMounts" -}}
- name: config
  mountPath: /etc/offsetsync
  readOnly: true
- name: tmp
  mountPath: /tmp
{{- range $index, $mount := include "offsetsync.secretMounts" . | fromYamlArray }}
- name: secret-{{ $index }}
  mountPath: {{ $mount.mountPath }}
  readOnly: true
{{- end }}
{{- end -}}

{{/*
The config volume (key <configKey> of ConfigMap <configMap>, as offsetsync.yaml), the emptyDir for /tmp
(tmpVolume) and the component's Secret volumes. The Secret files are 0440 (r--r-----, given in decimal:
288) and belong to group podSecurityContext.fsGroup, which the non-root user is in; nobody else can read them.
Argument: dict "root" . "component" <name> "configMap" <name> "configKey" <key>.
*/}}
{{- define "offsetsync.volumes" -}}
- name: config
  configMap:
    name: {{ .configMap }}
    items:
      - key: {{ .configKey }}
        path: offsetsync.yaml
- name: tmp
  emptyDir:
    sizeLimit: {{ .root.Values.tmpVolume.sizeLimit }}
{{- range $index, $mount := include "offsetsync.secretMounts" . | fromYamlArray }}
- name: secret-{{ $index }}
  secret:
    secretName: {{ $mount.secretName }}
    defaultMode: 288
    {{- with $mount.items }}
    items:
      {{- toYaml . | nindent 6 }}
    {{- end }}
{{- end }}
{{- end -}}

{{/*
Where one service Deployment serves its Prometheus metrics, from its own config file (so that a
components.<name>.config override of telemetry.prometheus counts): YAML {enabled, port}, with the config
schema's defaults (enabled, 9464). Argument: dict "root" . "role" <role> "alias" <alias or "">.
*/}}
{{- define "offsetsync.metrics" -}}
{{- $config := include "offsetsync.serviceConfig" . | fromYaml -}}
{{- $prometheus := dig "telemetry" "prometheus" (dict) $config -}}
{{- toYaml (dict "enabled" (ternary $prometheus.enabled true (hasKey $prometheus "enabled")) "port" (default 9464 $prometheus.port)) -}}
{{- end -}}

{{/*
The health service's gRPC API port, from its own config file: health.grpc.port (default 50051).
*/}}
{{- define "offsetsync.healthGrpcPort" -}}
{{- $config := include "offsetsync.serviceConfig" (dict "root" . "role" "health" "alias" "") | fromYaml -}}
{{- dig "health" "grpc" "port" 50051 $config -}}
{{- end -}}

{{/*
Every service Deployment as a list of dicts {role, alias, component}, in the order of the manifests.
*/}}
{{- define "offsetsync.serviceDeployments" -}}
{{- $deployments := list -}}
{{- if .Values.collector.enabled -}}
{{- range $alias := .Values.collector.clusters -}}
{{- $deployments = append $deployments (dict "role" "collector" "alias" $alias "component" (printf "collector-%s" $alias)) -}}
{{- end -}}
{{- end -}}
{{- range $role := list "translator" "committer" -}}
{{- if (index $.Values $role).enabled -}}
{{- range $alias := (index $.Values $role).targets -}}
{{- $deployments = append $deployments (dict "role" $role "alias" $alias "component" (printf "%s-%s" $role $alias)) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- if .Values.health.enabled -}}
{{- $deployments = append $deployments (dict "role" "health" "alias" "" "component" "health") -}}
{{- end -}}
{{- toYaml $deployments -}}
{{- end -}}

{{/*
The pod spec fields every pod of the chart shares, Deployments and the hook Job alike: no Service
environment variables (enableServiceLinks: false; Kubernetes would otherwise inject <SERVICE>_PORT=tcp://...
variables, and a Service named like an OFFSETSYNC_ prefix could collide with the config's env vars), no
API token (no component talks to the Kubernetes API), the pod security context, image pull secrets and
scheduling constraints. Argument: the root context.
*/}}
{{- define "offsetsync.podSpecCommon" -}}
enableServiceLinks: false
automountServiceAccountToken: false
{{- with .Values.imagePullSecrets }}
imagePullSecrets:
  {{- toYaml . | nindent 2 }}
{{- end }}
securityContext:
  {{- toYaml .Values.podSecurityContext | nindent 2 }}
{{- with .Values.nodeSelector }}
nodeSelector:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .Values.affinity }}
affinity:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .Values.tolerations }}
tolerations:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- end -}}

{{/*
The spread of one component's pods over zones (topologySpread, when enabled), counting only the pods of its current
ReplicaSet (matchLabelKeys pod-template-hash), so that a rolling update is not skewed by the old pods.
Argument: dict "root" . "component" <name>.
*/}}
{{- define "offsetsync.topologySpread" -}}
{{- $spread := .root.Values.topologySpread -}}
topologySpreadConstraints:
  - maxSkew: {{ $spread.maxSkew }}
    topologyKey: {{ $spread.topologyKey }}
    whenUnsatisfiable: {{ $spread.whenUnsatisfiable }}
    labelSelector:
      matchLabels:
        {{- include "offsetsync.selectorLabels" .root | nindent 8 }}
        app.kubernetes.io/component: {{ .component }}
    matchLabelKeys: [pod-template-hash]
{{- end -}}

{{/*
One service Deployment: its config file from the ConfigMap, and only its own Secrets (and those under
components."*"), as read-only files and env vars. Argument: dict "root" . "role" <role> "alias" <alias or "">.
*/}}
{{- define "offsetsync.deployment" -}}
{{- $root := .root -}}
{{- $service := index $root.Values .role -}}
{{- $component := include "offsetsync.component" . -}}
{{- $metrics := include "offsetsync.metrics" . | fromYaml -}}
apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ include "offsetsync.fullname" $root }}-{{ $component }}
  labels:
    {{- include "offsetsync.labels" $root | nindent 4 }}
    app.kubernetes.io/component: {{ $component }}
    offsetsync.io/role: {{ .role }}
spec:
  replicas: {{ $service.replicas }}
  selector:
    matchLabels:
      {{- include "offsetsync.selectorLabels" $root | nindent 6 }}
      app.kubernetes.io/component: {{ $component }}
  template:
    metadata:
      labels:
        {{- include "offsetsync.selectorLabels" $root | nindent 8 }}
        app.kubernetes.io/component: {{ $component }}
        offsetsync.io/role: {{ .role }}
        {{- if $metrics.enabled }}
        # Selected by the metrics Service (monitoring.serviceMonitor) and its NetworkPolicy rule.
        offsetsync.io/metrics: "true"
        {{- end }}
        {{- with $root.Values.podLabels }}
        {{- toYaml . | nindent 8 }}
        {{- end }}
      annotations:
        checksum/config: {{ include (print $root.Template.BasePath "/configmap.yaml") $root | sha256sum }}
        {{- if $metrics.enabled }}
        prometheus.io/scrape: "true"
        prometheus.io/port: {{ $metrics.port | quote }}
        prometheus.io/path: /metrics
        {{- end }}
        {{- with $root.Values.podAnnotations }}
        {{- toYaml . | nindent 8 }}
        {{- end }}
    spec:
      {{- include "offsetsync.podSpecCommon" $root | nindent 6 }}
      {{- if $root.Values.topologySpread.enabled }}
      {{- include "offsetsync.topologySpread" (dict "root" $root "component" $component) | nindent 6 }}
      {{- end }}
      terminationGracePeriodSeconds: {{ $root.Values.terminationGracePeriodSeconds }}
      containers:
        - name: {{ .role }}
          image: "{{ $root.Values.image.repository }}:{{ $root.Values.image.tag | default $root.Chart.AppVersion }}"
          imagePullPolicy: {{ $root.Values.image.pullPolicy }}
          args: [{{ .role | quote }}, "--config", "/etc/offsetsync/offsetsync.yaml"]
          {{- $env := include "offsetsync.env" (dict "root" $root "component" $component "heapMb" $service.heapMb) | trim }}
          {{- if $env }}
          env:
            {{- $env | nindent 12 }}
          {{- end }}
          ports:
            - name: probes
              containerPort: {{ $root.Values.probes.port }}
              protocol: TCP
            {{- if $metrics.enabled }}
            - name: metrics
              containerPort: {{ $metrics.port }}
              protocol: TCP
            {{- end }}
            {{- if eq .role "health" }}
            - name: grpc
              containerPort: {{ include "offsetsync.healthGrpcPort" $root }}
              protocol: TCP
            {{- end }}
          livenessProbe:
            grpc:
              port: {{ $root.Values.probes.port }}
            {{- toYaml $root.Values.probes.liveness | nindent 12 }}
          readinessProbe:
            grpc:
              port: {{ $root.Values.probes.port }}
            {{- toYaml $root.Values.probes.readiness | nindent 12 }}
          resources:
            {{- toYaml $service.resources | nindent 12 }}
          securityContext:
            {{- toYaml $root.Values.securityContext | nindent 12 }}
          volumeMounts:
            {{- include "offsetsync.volumeMounts" (dict "root" $root "component" $component) | nindent 12 }}
      volumes:
        {{- include "offsetsync.volumes" (dict "root" $root "component" $component "configMap" (include "offsetsync.fullname" $root) "configKey" (printf "%s.yaml" $component)) | nindent 8 }}
{{- end -}}
