#!/usr/bin/env bash
# Installs what the tests start besides PostgreSQL and MariaDB, so that `make test` works on a fresh
# machine: Debian packages (OpenSSH's sshd for SFTP, promtool, the Prometheus Pushgateway, headless
# Chromium, podman, buildah and runc for the image test) when they are missing and this runs as root,
# and two Go programs built at pinned versions
# into bin/tools (versitygw, S3 over a folder; mailpit, an SMTP server). The tests fail, never skip,
# without them. kubectl is checked only: it is no Debian package, and CI machines come with it.
set -euo pipefail
cd "$(dirname "$0")/.."

VERSITYGW_VERSION=v1.8.0
MAILPIT_VERSION=v1.27.11

need_apt=()
[ -x /usr/sbin/sshd ] || need_apt+=(openssh-server)                    # SFTP drop-folder tests
command -v promtool >/dev/null || need_apt+=(prometheus)                 # alert rules and dashboard queries
command -v prometheus-pushgateway >/dev/null || need_apt+=(prometheus-pushgateway) # metrics push tests
[ -x /usr/bin/chromium ] || need_apt+=(chromium chromium-driver)         # the HTML report, rendered
# The image test (deploy/image): buildah builds the image over scratch with this machine's CA bundle
# and time zones; podman runs it with runc (crun refuses a hybrid cgroup hierarchy).
# Without their recommends (rootless helpers, fuse-overlayfs): root with vfs storage needs none.
need_image=()
for tool in podman buildah runc; do command -v $tool >/dev/null || need_image+=($tool); done
[ -s /etc/ssl/certs/ca-certificates.crt ] || need_image+=(ca-certificates)
[ -f /usr/share/zoneinfo/Europe/Paris ] || need_image+=(tzdata)
if [ $((${#need_apt[@]} + ${#need_image[@]})) -gt 0 ]; then
  if [ "$(id -u)" -ne 0 ] || ! command -v apt-get >/dev/null; then
    echo "test-deps: the tests need these Debian packages: sudo apt-get install ${need_apt[*]} ${need_image[*]}" >&2
    exit 1
  fi
  echo "test-deps: installing ${need_apt[*]} ${need_image[*]}"
  apt-get update -qq
  if [ ${#need_apt[@]} -gt 0 ]; then
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need_apt[@]}" >/dev/null
  fi
  if [ ${#need_image[@]} -gt 0 ]; then
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need_image[@]}" >/dev/null
  fi
fi
command -v kubectl >/dev/null || {
  echo "test-deps: kubectl is missing; the manifests' tests build the overlays with kubectl kustomize" >&2
  exit 1
}

# build NAME MODULE VERSION: go install MODULE@VERSION into bin/tools, unless the version recorded
# beside the binary is already VERSION (go install stamps none into it).
build() {
  local name=$1 module=$2 version=$3
  if [ -x "bin/tools/$name" ] && [ "$(cat "bin/tools/$name.version" 2>/dev/null)" = "$version" ]; then
    return 0
  fi
  echo "test-deps: building $name $version into bin/tools"
  GOBIN="$PWD/bin/tools" go install "$module@$version"
  echo "$version" > "bin/tools/$name.version"
}
build versitygw github.com/versity/versitygw/cmd/versitygw "$VERSITYGW_VERSION"
build mailpit github.com/axllent/mailpit "$MAILPIT_VERSION"
