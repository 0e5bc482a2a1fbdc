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
The config file of one service Deployment: `config` from the values, plus the service's own section
(its `settings`, with `cluster` or `target` set to the alias), plus the probe endpoint.
deploy-config.test.ts builds the same files in TypeScript and validates them against the config schema.
*/}}
{{- define "offsetsync.serviceConfig" -}}
{{- $values := .root.Values -}}
{{- $config := deepCopy (default (dict) $values.config) -}}
{{- $section := deepCopy (default (dict) (index $values .role "settings")) -}}
{{- if eq .role "collector" -}}
{{- $_ := set $section "cluster" .alias -}}
{{- else if or (eq .role "translator") (eq .role "committer") -}}
{{- $_ := set $section "target" .alias -}}
{{- end -}}
{{- $_ := set $config .role $section -}}
{{- $_ := set $config "probes" (dict "enabled" true "host" "0.0.0.0" "port" $values.probes.port) -}}
{{- toYaml $config -}}
{{- end -}}

{{/*
The port Prometheus scrapes: telemetry.prometheus.port of the config (default 9464).
*/}}
{{- define "offsetsync.metricsPort" -}}
{{- dig "telemetry" "prometheus" "port" 9464 (default (dict) .Values.config) -}}
{{- end -}}

{{- define "offsetsync.metricsEnabled" -}}
{{- dig "telemetry" "prometheus" "enabled" true (default (dict) .Values.config) -}}
{{- end -}}

{{/*
The health service's gRPC API port: health.settings.grpc.port (default 50051).
*/}}
{{- define "offsetsync.healthGrpcPort" -}}
{{- dig "grpc" "port" 50051 (default (dict) .Values.health.settings) -}}
{{- end -}}

{{/*
One service Deployment. Argument: dict "root" . "role" <role> "alias" <alias or "">.
*/}}
{{- define "offsetsync.deployment" -}}
{{- $root := .root -}}
{{- $service := index $root.Values .role -}}
{{- $component := include "offsetsync.component" . -}}
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
        {{- with $root.Values.podLabels }}
        {{- toYaml . | nindent 8 }}
        {{- end }}
      annotations:
        checksum/config: {{ include (print $root.Template.BasePath "/configmap.yaml") $root | sha256sum }}
        {{- if eq (include "offsetsync.metricsEnabled" $root) "true" }}
        prometheus.io/scrape: "true"
        prometheus.io/port: {{ include "offsetsync.metricsPort" $root | quote }}
        prometheus.io/path: /metrics
        {{- end }}
        {{- with $root.Values.podAnnotations }}
        {{- toYaml . | nindent 8 }}
        {{- end }}
    spec:
      {{- with $root.Values.imagePullSecrets }}
      imagePullSecrets:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      securityContext:
        {{- toYaml $root.Values.podSecurityContext | nindent 8 }}
      terminationGracePeriodSeconds: {{ $root.Values.terminationGracePeriodSeconds }}
      containers:
        - name: {{ .role }}
          image: "{{ $root.Values.image.repository }}:{{ $root.Values.image.tag | default $root.Chart.AppVersion }}"
          imagePullPolicy: {{ $root.Values.image.pullPolicy }}
          args: [{{ .role | quote }}, "--config", "/etc/offsetsync/offsetsync.yaml"]
          {{- if or $root.Values.secretEnv $root.Values.extraEnv $service.heapMb }}
          env:
            {{- with $service.heapMb }}
            - name: NODE_OPTIONS
              value: {{ printf "--max-old-space-size=%v" . | quote }}
            {{- end }}
            {{- range $root.Values.secretEnv }}
            - name: {{ .name }}
              valueFrom:
                secretKeyRef:
                  name: {{ .secretName }}
                  key: {{ .key }}
            {{- end }}
            {{- with $root.Values.extraEnv }}
            {{- toYaml . | nindent 12 }}
            {{- end }}
          {{- end }}
          ports:
            - name: probes
              containerPort: {{ $root.Values.probes.port }}
            - name: metrics
              containerPort: {{ include "offsetsync.metricsPort" $root }}
            {{- if eq .role "health" }}
            - name: grpc
              containerPort: {{ include "offsetsync.healthGrpcPort" $root }}
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
            - name: config
              mountPath: /etc/offsetsync
              readOnly: true
      volumes:
        - name: config
          configMap:
            name: {{ include "offsetsync.fullname" $root }}
            items:
              - key: {{ $component }}.yaml
                path: offsetsync.yaml
      {{- with $root.Values.nodeSelector }}
      nodeSelector:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      {{- with $root.Values.affinity }}
      affinity:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      {{- with $root.Values.tolerations }}
      tolerations:
        {{- toYaml . | nindent 8 }}
      {{- end }}
{{- end -}}
