#!/usr/bin/env bash
# Builds the real programs terdut's tests run against -- kube-apiserver, etcd
# and Alertmanager -- and helm (which lints and renders the Helm chart) from
# the Go module proxy into tools/bin/ (git-ignored).
#
# A binary is rebuilt only when its pinned versions change: the stamp file
# beside it records a hash of its module's go.mod + go.sum, the Go version,
# the build flags and this script. The first build takes about 12 minutes on
# a 2-core machine (see test/peers/README.md); later runs are a no-op.
#
# Usage: bash tools/build-peers.sh [--force] [kube-apiserver|etcd|alertmanager|helm ...]
set -euo pipefail

tools_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
bin_dir="$tools_dir/bin"
mkdir -p "$bin_dir"
# One build at a time (CI, a test run and a person may start it together).
exec 9>"$bin_dir/.lock"
flock 9

go_cmd=${GO:-$(command -v go || true)}
if [[ -z "$go_cmd" && -x /usr/local/go/bin/go ]]; then go_cmd=/usr/local/go/bin/go; fi
if [[ -z "$go_cmd" ]]; then
  echo "build-peers: Go is not installed; install Go >= 1.26 (https://go.dev/dl) or set GO=/path/to/go" >&2
  exit 1
fi

# Never let a go.mod line switch toolchains behind our back: the build must use
# the Go that is installed, or fail and say so.
export GOTOOLCHAIN=local GOFLAGS=-buildvcs=false CGO_ENABLED=0

force=false
wanted=()
for arg in "$@"; do
  case "$arg" in
    --force) force=true ;;
    kube-apiserver | etcd | alertmanager | helm) wanted+=("$arg") ;;
    *)
      echo "build-peers: unknown argument '$arg'; expected --force, kube-apiserver, etcd, alertmanager or helm" >&2
      exit 2
      ;;
  esac
done
all_peers=false
if [[ ${#wanted[@]} -eq 0 ]]; then
  wanted=(etcd kube-apiserver alertmanager helm)
  all_peers=true
fi

module_version() { # <module dir> <module path>
  (cd "$tools_dir/$1" && "$go_cmd" list -m -f '{{.Version}}' "$2")
}

# build <name> <module dir> <package> [extra -ldflags] [prepare function]
# The prepare function, if given, is called with a scratch dir and must print
# the directory to run `go build` in (default: the module dir itself).
build() {
  local name=$1 module_dir=$2 package=$3 extra_ldflags=${4:-} prepare=${5:-}
  local ldflags="-s -w $extra_ldflags"
  local stamp="$bin_dir/.$name.stamp"
  local want
  want=$(
    cat "$tools_dir/$module_dir/go.mod" "$tools_dir/$module_dir/go.sum"
    if [[ -n "$prepare" ]]; then cat "$tools_dir/$module_dir"/*/* 2>/dev/null || true; fi
    "$go_cmd" version
    echo "$ldflags"
    # This script too: a change in how a peer is built must rebuild it.
    cat "$tools_dir/build-peers.sh"
  )
  want=$(printf '%s' "$want" | sha256sum | cut -d' ' -f1)

  if ! $force && [[ -x "$bin_dir/$name" && -f "$stamp" && "$(cat "$stamp")" == "$want" ]]; then
    echo "build-peers: $name is up to date ($bin_dir/$name)"
    return
  fi

  echo "build-peers: building $name from $module_dir/go.mod ($package) ..."
  local started=$SECONDS
  local build_dir="$tools_dir/$module_dir" scratch="$bin_dir/.$name-src"
  if [[ -n "$prepare" ]]; then
    rm -rf "$scratch"
    build_dir=$("$prepare" "$scratch")
  fi
  # Build to a temporary name and rename, so an interrupted build never leaves
  # a half-written binary that a stale stamp would vouch for.
  (cd "$build_dir" && "$go_cmd" build -trimpath -ldflags="$ldflags" -o "$bin_dir/$name.partial" "$package")
  mv "$bin_dir/$name.partial" "$bin_dir/$name"
  rm -rf "$scratch"
  printf '%s\n' "$want" >"$stamp"
  echo "build-peers: built $name in $((SECONDS - started))s"
}

# Alertmanager's ui package embeds ui/app/dist, the output of an npm build in
# its repository that the Go module does not contain, so building the module
# as a dependency fails ("pattern app/dist: no matching files found"), and
# -overlay may not touch the module cache. Instead: copy the pinned release
# out of the module cache, add a one-page placeholder for the web UI, and
# build it as the main module -- with Alertmanager's own go.mod and go.sum,
# exactly the dependency versions upstream releases with. The API is complete.
prepare_alertmanager_source() {
  local scratch=$1 source
  source=$(cd "$tools_dir/alertmanager" && "$go_cmd" mod download -json github.com/prometheus/alertmanager | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
  if [[ -z "$source" ]]; then
    echo "build-peers: could not locate github.com/prometheus/alertmanager in the module cache" >&2
    return 1
  fi
  cp -R "$source" "$scratch"
  chmod -R u+w "$scratch"
  mkdir -p "$scratch/ui/app/dist/elm" "$scratch/ui/app/dist/mantine"
  cp "$tools_dir/alertmanager/ui-placeholder/index.html" "$scratch/ui/app/dist/elm/index.html"
  cp "$tools_dir/alertmanager/ui-placeholder/index.html" "$scratch/ui/app/dist/mantine/index.html"
  echo "$scratch"
}

total_started=$SECONDS
for name in "${wanted[@]}"; do
  case "$name" in
    etcd)
      build etcd etcd go.etcd.io/etcd/server/v3
      ;;
    kube-apiserver)
      # Stamp the release version into the binary as upstream's build does, so
      # /version reports v1.x.y instead of v0.0.0-master.
      k8s_version=$(module_version kube k8s.io/kubernetes)
      k8s_minor=$(echo "$k8s_version" | cut -d. -f2)
      build kube-apiserver kube k8s.io/kubernetes/cmd/kube-apiserver \
        "-X k8s.io/component-base/version.gitVersion=$k8s_version -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=$k8s_minor -X k8s.io/component-base/version.gitTreeState=clean"
      ;;
    alertmanager)
      am_version=$(module_version alertmanager github.com/prometheus/alertmanager)
      build alertmanager alertmanager ./cmd/alertmanager \
        "-X github.com/prometheus/common/version.Version=${am_version#v}" prepare_alertmanager_source
      ;;
    helm)
      helm_version=$(module_version helm helm.sh/helm/v4)
      build helm helm helm.sh/helm/v4/cmd/helm "-X helm.sh/helm/v4/internal/version.version=$helm_version"
      ;;
  esac
done
# The third-party CRDs test/peers/crds.ts installs come from these modules;
# fetch them now so that tests never wait on the network.
if $all_peers; then
  grep -Ev '^[[:space:]]*(#|$)' "$tools_dir/crds/versions.txt" | while read -r module version _files; do
    (cd / && "$go_cmd" mod download "$module@$version")
  done
  echo "build-peers: CRD sources in tools/crds/versions.txt are in the module cache"
fi
echo "build-peers: done in $((SECONDS - total_started))s"
