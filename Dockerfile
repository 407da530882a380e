# slipstream container image: a static binary on a distroless base, run as
# a non-root user, configured from a mounted volume.
#
#   docker build -t slipstream --build-arg VERSION=$(git describe --always) .
#   docker run -d -p 8317:8317 -v /srv/slipstream:/etc/slipstream:ro \
#     -e OPENAI_API_KEY -e ANTHROPIC_API_KEY --memory 256m -e GOMEMLIMIT=200MiB slipstream
#
# /etc/slipstream/slipstream.yaml must have client keys: the container
# listens on every interface (SLIPSTREAM_LISTEN below), and slipstream
# refuses to serve a non-loopback address without authentication.

FROM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=dev
# The same static build as `make static` (CGO_ENABLED=0, -trimpath, -s -w),
# which CI checks produces a binary with no dynamic loader.
RUN make static VERSION=${VERSION} BIN=/out/slipstream

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/slipstream /usr/local/bin/slipstream
USER nonroot:nonroot
ENV SLIPSTREAM_LISTEN=0.0.0.0:8317
EXPOSE 8317
VOLUME ["/etc/slipstream"]
# No curl in a distroless image: the binary checks itself, on the listener
# the config describes (https with tls:, trusting the config's cert_file).
HEALTHCHECK --interval=30s --timeout=5s --start-period=5s --retries=3 \
  CMD ["/usr/local/bin/slipstream", "health", "-config", "/etc/slipstream/slipstream.yaml"]
ENTRYPOINT ["/usr/local/bin/slipstream"]
CMD ["-config", "/etc/slipstream/slipstream.yaml"]
