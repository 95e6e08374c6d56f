#!/usr/bin/env bash
# make image: builds hrsync's container image with buildah over scratch, pulling nothing from any
# registry, so that CI (and a machine with no Docker engine) builds and runs the real image.
# The content is the Dockerfile's runtime stage: the static binary (built with the Dockerfile's
# flags), the CA bundle and the time zones (distroless ships both; here they are this machine's,
# from Debian's ca-certificates and tzdata), /etc/passwd and /etc/group naming 65532 nonroot, and
# /tmp; the metadata (user 65532:65532, entrypoint, command, working folder, port, labels) is in
# deploy/image/Containerfile.
#
# IMAGE names the image (default localhost/hrsync:VERSION). IMAGE_STORAGE, when set, is a folder
# for buildah's storage (--root and --runroot under it) in place of the system's: the tests use a
# temporary one. The storage driver is vfs, which works without overlay mounts.
set -euo pipefail
cd "$(dirname "$0")/.."

VERSION=${VERSION:-dev}
IMAGE=${IMAGE:-localhost/hrsync:$VERSION}
CA_BUNDLE=/etc/ssl/certs/ca-certificates.crt
ZONEINFO=/usr/share/zoneinfo

fail() { printf 'make image: %s\n' "$*" >&2; exit 1; }
command -v buildah >/dev/null || fail "buildah is missing: make test-deps installs it (Debian: apt-get install buildah)"
[ -s "$CA_BUNDLE" ] || fail "no CA bundle at $CA_BUNDLE (Debian: apt-get install ca-certificates)"
[ -f "$ZONEINFO/Europe/Paris" ] || fail "no time zones in $ZONEINFO (Debian: apt-get install tzdata)"

ctx=$(mktemp -d)
trap 'rm -rf "$ctx"' EXIT
root=$ctx/rootfs
mkdir -p "$root/usr/local/bin" "$root/etc/ssl/certs" "$root/usr/share" "$root/tmp" "$root/home/nonroot"
chmod 1777 "$root/tmp"

# The Dockerfile's build: CGO off (the SQLite driver is pure Go), so the binary needs no libc.
CGO_ENABLED=0 GOOS=linux go build -trimpath -ldflags "-s -w -X main.version=$VERSION" \
  -o "$root/usr/local/bin/hrsync" ./cmd/hrsync
cp "$CA_BUNDLE" "$root/etc/ssl/certs/ca-certificates.crt"
cp -a "$ZONEINFO" "$root/usr/share/zoneinfo"
printf 'root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n' >"$root/etc/passwd"
printf 'root:x:0:\nnonroot:x:65532:\n' >"$root/etc/group"
chown 65532:65532 "$root/home/nonroot" 2>/dev/null || true
cp deploy/image/Containerfile "$ctx/Containerfile"

storage=(--storage-driver vfs)
if [ -n "${IMAGE_STORAGE:-}" ]; then
  storage+=(--root "$IMAGE_STORAGE/storage" --runroot "$IMAGE_STORAGE/run")
fi
# chroot isolation: the RUN-less build needs no namespaces a sandbox may refuse.
buildah "${storage[@]}" bud --quiet --isolation chroot --layers=false \
  --build-arg "VERSION=$VERSION" -t "$IMAGE" -f "$ctx/Containerfile" "$ctx" >/dev/null
echo "$IMAGE"
