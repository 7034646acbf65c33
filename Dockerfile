# The gns-guard action image: a static binary on a minimal base.
# It runs as root, as Docker actions must: the runner mounts the workspace and
# the GITHUB_OUTPUT / GITHUB_STEP_SUMMARY files owned by root.
#
# BINARY names the stage or image whose /out/gns-guard the image runs: the
# build stage below, or, for a release, an image holding the released
# linux/amd64 binary, stamped with its version (.gitea/workflows/release.yml).
# TAGS are the build tags: nometer leaves the meter and its store drivers
# out of the step's image, which every issue event pulls. The meter's image
# is the same file built with --build-arg TAGS= (docs/meter.md).
ARG BINARY=build

FROM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY cmd ./cmd
COPY internal ./internal
ARG TAGS=nometer
RUN CGO_ENABLED=0 go build -tags "$TAGS" -trimpath -ldflags="-s -w" -o /out/gns-guard ./cmd/gns-guard

FROM ${BINARY} AS binary

FROM gcr.io/distroless/static-debian12
COPY --from=binary /out/gns-guard /usr/local/bin/gns-guard
ENTRYPOINT ["/usr/local/bin/gns-guard"]
