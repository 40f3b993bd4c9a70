# keychaind container image.
#
#   docker build -t keychaind .
#   docker run -d --name keychaind -p 8420:8420 -v keychaind-data:/data -v "$PWD/tls:/tls:ro" \
#     -e KEYCHAIND_TLS_CERT_FILE=/tls/tls.crt -e KEYCHAIND_TLS_KEY_FILE=/tls/tls.key keychaind
#   docker exec keychaind cat /data/admin.token      # the first admin token
#
# The image listens on 0.0.0.0:8420, and keychaind refuses plain HTTP on an address other than
# loopback: give it a certificate and key as above (the key readable by uid 10001, not by others),
# or, behind a TLS-terminating proxy on a trusted network, -e KEYCHAIND_TLS_ALLOW_PLAINTEXT=true
# (docs/operations.md, "Docker").
#
# Two stages: Swift on Debian bookworm builds a release binary with the Swift runtime linked in
# statically (--static-swift-stdlib), and debian:bookworm-slim runs it with only the C libraries
# it links (libmicrohttpd12, libsqlite3-0, libssl3 for libcrypto, libpq5, libcurl4 for the token
# endpoint client of server-side refresh), ca-certificates (also what refresh verifies providers with), and curl for
# the HEALTHCHECK (which must speak HTTPS). This repository's CI has no container engine, so the
# image is not built there: scripts/dockerfile-check (run by scripts/test) checks the runtime
# stage's packages against `ldd` of the binary, the entrypoint against the path the builder stage
# installs, and that the image's environment without a certificate is refused at start.
ARG SWIFT_IMAGE=swift:6.3-bookworm
ARG RUNTIME_IMAGE=debian:bookworm-slim

FROM ${SWIFT_IMAGE} AS builder
RUN apt-get update \
    && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
        libmicrohttpd-dev libsqlite3-dev libssl-dev libpq-dev libcurl4-openssl-dev pkg-config \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /src
# Manifest first, so that dependency resolution is cached across source changes.
COPY Package.swift ./
RUN swift package resolve
COPY Sources ./Sources
COPY Tests ./Tests
COPY Examples ./Examples
RUN swift build -c release --product keychaind --static-swift-stdlib \
    && install -D -m 0755 .build/release/keychaind /out/usr/local/bin/keychaind

FROM ${RUNTIME_IMAGE}
RUN apt-get update \
    && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
        libmicrohttpd12 libsqlite3-0 libssl3 libpq5 libcurl4 ca-certificates curl \
    && rm -rf /var/lib/apt/lists/* \
    && groupadd --system --gid 10001 keychaind \
    && useradd --system --uid 10001 --gid keychaind --home-dir /data --no-create-home \
        --shell /usr/sbin/nologin keychaind \
    && install -d -o keychaind -g keychaind -m 0700 /data
COPY --from=builder /out/usr/local/bin/keychaind /usr/local/bin/keychaind
COPY config/keychaind.toml /etc/keychaind/keychaind.toml
# The environment overrides the file: listen on every interface (which needs TLS, see above), keep
# state in the volume.
ENV KEYCHAIND_LISTEN=0.0.0.0:8420 \
    KEYCHAIND_DATA_DIR=/data
VOLUME ["/data"]
EXPOSE 8420
USER keychaind:keychaind
# GET /v1/health on the listen port wants a 200 (503 = locked counts as unhealthy): over HTTPS
# first (-k: the certificate need not name 127.0.0.1; no token is sent), else plain HTTP.
HEALTHCHECK --interval=30s --timeout=5s --start-period=10s --retries=3 \
    CMD ["bash", "-c", "port=${KEYCHAIND_LISTEN##*:}; curl -fsk -o /dev/null --max-time 2 https://127.0.0.1:$port/v1/health || curl -fs -o /dev/null --max-time 2 http://127.0.0.1:$port/v1/health"]
ENTRYPOINT ["/usr/local/bin/keychaind"]
CMD ["serve", "--config", "/etc/keychaind/keychaind.toml"]
