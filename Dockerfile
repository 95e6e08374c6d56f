# hrsync: one static binary in a distroless image, run as a non-root user.
#   docker build --build-arg VERSION=$(git describe --tags --always) -t hrsync .
# The build stage compiles with CGO off (the SQLite driver is pure Go), so the
# binary needs no libc; the runtime stage is distroless "static" (CA
# certificates and time zone data, no shell) as the user 65532:65532.

ARG GO_VERSION=1.26

FROM golang:${GO_VERSION} AS build
WORKDIR /src
# Modules first, so that a change of the code alone reuses this layer.
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=dev
RUN CGO_ENABLED=0 GOOS=linux go build -trimpath \
      -ldflags "-s -w -X main.version=${VERSION}" \
      -o /out/hrsync ./cmd/hrsync

FROM gcr.io/distroless/static-debian12:nonroot AS runtime
ARG VERSION=dev
LABEL org.opencontainers.image.title="hrsync" \
      org.opencontainers.image.description="Keeps a company's people on the gifting platform in step with its HR system" \
      org.opencontainers.image.version="${VERSION}"
COPY --from=build /out/hrsync /usr/local/bin/hrsync
# Numeric, so that the kubelet can check runAsNonRoot without reading /etc/passwd
# (distroless's nonroot user is 65532).
USER 65532:65532
# State (SQLite) and the drop folder live on mounted volumes under /var/lib/hrsync.
WORKDIR /var/lib/hrsync
EXPOSE 9090
ENTRYPOINT ["/usr/local/bin/hrsync"]
CMD ["daemon", "--config", "/etc/hrsync/hrsync.yaml"]
