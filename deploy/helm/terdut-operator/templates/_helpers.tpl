{{- define "terdut-operator.name" -}}terdut-operator{{- end -}}

{{- define "terdut-operator.fullname" -}}
{{- if contains "terdut-operator" .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-terdut-operator" .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "terdut-operator.selectorLabels" -}}
app.kubernetes.io/name: terdut-operator
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "terdut-operator.labels" -}}
{{ include "terdut-operator.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{- end -}}

{{- define "terdut-operator.image" -}}
{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}
{{- end -}}

{{- define "terdut-operator.serverImage" -}}
{{ .Values.serverImage.repository }}:{{ .Values.serverImage.tag | default .Chart.AppVersion }}
{{- end -}}

{{/* The generated rules (npm run generate), parsed once. */}}
{{- define "terdut-operator.rules" -}}
{{- .Files.Get "files/rbac-rules.yaml" -}}
{{- end -}}
