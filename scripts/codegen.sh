#!/usr/bin/env bash
# Regenerates the TypeScript for every .proto under protos/ with buf + ts-proto (local plugin), and the
# types of the tests' typed v1 client from the OpenAPI document (scripts/openapi-types.ts).
# --check: regenerate into a scratch copy and fail if the committed code differs.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root/protos"
out="$root/services/shared/src/generated"
buf="$root/node_modules/.bin/buf"

"$buf" lint
if [[ "${1:-}" == "--check" ]]; then
  scratch="$(mktemp -d)"
  trap 'rm -rf "$scratch"' EXIT
  cp -r "$out" "$scratch/committed"
  rm -rf "$out"
  "$buf" generate
  if ! diff -r "$scratch/committed" "$out"; then
    rm -rf "$out"; cp -r "$scratch/committed" "$out"
    echo "codegen drift: the committed generated code differs from what the protos produce; run npm run codegen" >&2
    exit 1
  fi
  echo "codegen: generated code is up to date"
else
  rm -rf "$out"
  "$buf" generate
  echo "codegen: wrote $out"
fi

cd "$root"
node --conditions=source --import tsx scripts/openapi-types.ts ${1:-}
