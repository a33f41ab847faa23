#!/usr/bin/env bash
# Builds the images of deploy/docker-compose.yml (all but Grafana's) on a machine that
# reaches no image registry, from Debian's package sources and the host's
# own release build, and prints one KEY=VALUE line per image variable:
#
#   env $(deploy/local-images.sh) docker-compose -f deploy/docker-compose.yml up -d --scale fetcher=3
#
# - RABBITMQ_IMAGE: Debian bookworm's rabbitmq-server with the management
#   plugin. Like rabbitmq:3-management for what the compose file uses: runs as
#   the rabbitmq user, data in /var/lib/rabbitmq, RABBITMQ_DEFAULT_USER and
#   RABBITMQ_DEFAULT_PASS make the first user, RABBITMQ_ERLANG_COOKIE sets the
#   node's Erlang cookie (a cluster's nodes share it), AMQP on 5672 and the management
#   UI on 15672 from any address, `rabbitmq-diagnostics -q ping` answers.
# - REDIS_IMAGE: Debian bookworm's redis-server. Like redis:7: the command is
#   `redis-server [options]`, run as the redis user in /data, with protected
#   mode off (the network is the boundary), `redis-cli ping` answers.
# - PROMETHEUS_IMAGE: Debian bookworm's prometheus (for the `monitoring`
#   profile). Like prom/prometheus for what the compose file uses: the
#   entrypoint is the server, given flags as the command, run as nobody with
#   its data in /prometheus. (Grafana has no Debian package: the
#   `monitoring` profile's Grafana needs GRAFANA_IMAGE from a registry.)
# - CRAWLER_IMAGE: the five binaries of the `docker` profile (release,
#   stripped, no debug info) and `testsite`, on just the libraries they link
#   (libc6, libgcc-s1), as user 10001.
#
# The two service images are cached by a hash of their recipe (a second run
# reuses them: `docker images 'dedup-crawler-local/*'`); the crawler image is
# rebuilt from the current binaries every run, which takes seconds once
# cargo is up to date. Progress goes to stderr; stdout carries only the
# KEY=VALUE lines. Needs a running Docker engine, mmdebstrap and cargo; run
# as root (mmdebstrap and docker).

# The mmdebstrap hooks are single-quoted on purpose: mmdebstrap runs them
# with the rootfs as $1.
# shellcheck disable=SC2016
set -euo pipefail
cd "$(dirname "$0")/.."

REPO=dedup-crawler-local
SOURCES=/etc/apt/sources.list.d/debian.sources
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
log() { echo "local-images: $*" >&2; }

for tool in docker mmdebstrap cargo; do
    command -v "$tool" >/dev/null || { log "$tool is not installed"; exit 1; }
done
docker info >/dev/null 2>&1 || { log "no Docker engine answers (start dockerd)"; exit 1; }
[ -r "$SOURCES" ] || { log "$SOURCES is missing: mmdebstrap needs the package sources"; exit 1; }

# Entrypoints, written into the rootfs of each service image.
read -r -d '' RABBITMQ_ENTRYPOINT <<'EOF' || true
#!/bin/sh
# As the public image: the first user from RABBITMQ_DEFAULT_USER/PASS (used
# on the node's first boot only), listeners on every address, the node run
# as the rabbitmq user.
set -e
conf=/etc/rabbitmq/rabbitmq.conf
{
    echo "listeners.tcp.default = 5672"
    echo "management.tcp.port = 15672"
    echo "loopback_users = none"
    [ -n "${RABBITMQ_DEFAULT_USER:-}" ] && echo "default_user = $RABBITMQ_DEFAULT_USER"
    [ -n "${RABBITMQ_DEFAULT_PASS:-}" ] && echo "default_pass = $RABBITMQ_DEFAULT_PASS"
    [ -n "${RABBITMQ_DEFAULT_VHOST:-}" ] && echo "default_vhost = $RABBITMQ_DEFAULT_VHOST"
} > "$conf"
chmod 0640 "$conf"
chown root:rabbitmq "$conf"
# The nodes of a cluster share their Erlang cookie.
if [ -n "${RABBITMQ_ERLANG_COOKIE:-}" ]; then
    printf '%s' "$RABBITMQ_ERLANG_COOKIE" > /var/lib/rabbitmq/.erlang.cookie
    chmod 0400 /var/lib/rabbitmq/.erlang.cookie
fi
# Debian's /usr/sbin/rabbitmq-server wraps the server in a shell that logs to
# files and passes no signals on; the script it wraps stops the node cleanly
# on SIGTERM (docker stop), and logs to stdout with RABBITMQ_LOGS=-.
if [ "$1" = rabbitmq-server ]; then
    shift
    set -- /usr/lib/rabbitmq/bin/rabbitmq-server "$@"
fi
cd /var/lib/rabbitmq
if [ "$(id -u)" = 0 ]; then
    chown -R rabbitmq:rabbitmq /var/lib/rabbitmq /var/log/rabbitmq
    exec setpriv --reuid rabbitmq --regid rabbitmq --init-groups "$@"
fi
exec "$@"
EOF

read -r -d '' REDIS_ENTRYPOINT <<'EOF' || true
#!/bin/sh
# As the public image: `redis-server [options]` (or just options) runs as
# the redis user in /data, with protected mode off.
set -e
if [ "${1#-}" != "$1" ]; then set -- redis-server "$@"; fi
if [ "$1" = redis-server ]; then
    shift
    set -- redis-server --protected-mode no "$@"
    if [ "$(id -u)" = 0 ]; then
        chown -R redis:redis /data
        exec setpriv --reuid redis --regid redis --init-groups "$@"
    fi
fi
exec "$@"
EOF

read -r -d '' PROMETHEUS_ENTRYPOINT <<'EOF' || true
#!/bin/sh
# As the public image: flags go to the server.
set -e
if [ "${1#-}" != "$1" ]; then set -- /usr/bin/prometheus "$@"; fi
exec "$@"
EOF

# Builds (or finds) a service image: $1 name, $2 packages, $3 entrypoint,
# $4 shell run in the new rootfs, then the `docker import --change` lines.
service_image() {
    local name="$1" packages="$2" entry="$3" setup="$4"
    shift 4
    local key
    key="$(printf '%s\n' "$packages" "$entry" "$setup" "$@" | sha256sum | cut -c1-12)"
    local image="$REPO/$name:$key"
    if docker image inspect "$image" >/dev/null 2>&1; then
        log "$image: cached"
    else
        log "$image: building a bookworm rootfs with $packages"
        local t0=$SECONDS
        printf '%s\n' "$entry" > "$work/$name-entrypoint.sh"
        printf '%s\n' "$setup" \
            'rm -rf /var/lib/apt/lists/* /var/cache/apt/*.bin /tmp/setup.sh' > "$work/$name-setup.sh"
        mmdebstrap --quiet --variant=minbase --include="$packages" \
            --customize-hook="upload $work/$name-entrypoint.sh /usr/local/bin/docker-entrypoint.sh" \
            --customize-hook="upload $work/$name-setup.sh /tmp/setup.sh" \
            --customize-hook='chmod 0755 "$1/usr/local/bin/docker-entrypoint.sh"' \
            --customize-hook='chroot "$1" sh /tmp/setup.sh' \
            bookworm "$work/$name.tar" < "$SOURCES" >&2
        local changes=()
        for c in "$@"; do changes+=(--change "$c"); done
        docker import "${changes[@]}" "$work/$name.tar" "$image" >/dev/null
        rm -f "$work/$name.tar"
        log "$image: built in $((SECONDS - t0)) s"
    fi
    printf '%s\n' "$image"
}

# The crawler's binaries build while the service images do: the build is
# CPU, the images mostly downloads and unpacking, so on a machine with no
# cached image this hides the images' time behind the build's.
bins=(frontier fetcher extractor contentseen crawler testsite)
pkgs=()
for b in "${bins[@]}"; do pkgs+=(-p "$b"); done
log "building the binaries (cargo build --profile docker), beside the service images"
cargo build --quiet --locked --profile docker "${pkgs[@]}" --bins >&2 &
cargo_pid=$!
trap 'kill "$cargo_pid" 2>/dev/null || true; rm -rf "$work"' EXIT

# The service images build side by side (downloads overlap unpacking).
service_image rabbitmq rabbitmq-server "$RABBITMQ_ENTRYPOINT" \
    'rabbitmq-plugins enable --offline rabbitmq_management >/dev/null
     mkdir -p /var/lib/rabbitmq /var/log/rabbitmq
     chown -R rabbitmq:rabbitmq /var/lib/rabbitmq /var/log/rabbitmq /etc/rabbitmq' \
    'ENV HOME=/var/lib/rabbitmq' \
    'ENV LANG=C.UTF-8' \
    'ENV RABBITMQ_LOGS=-' \
    'VOLUME /var/lib/rabbitmq' \
    'EXPOSE 4369 5671 5672 15672 25672' \
    'ENTRYPOINT ["docker-entrypoint.sh"]' \
    'CMD ["rabbitmq-server"]' > "$work/rabbitmq.image" &
rabbitmq_pid=$!

service_image prometheus prometheus "$PROMETHEUS_ENTRYPOINT" \
    'mkdir -p /prometheus && chown 65534:65534 /prometheus' \
    'USER 65534:65534' \
    'WORKDIR /prometheus' \
    'VOLUME /prometheus' \
    'EXPOSE 9090' \
    'ENTRYPOINT ["docker-entrypoint.sh"]' \
    'CMD ["--config.file=/etc/prometheus/prometheus.yml", "--storage.tsdb.path=/prometheus"]' > "$work/prometheus.image" &
prometheus_pid=$!

redis_image="$(service_image redis redis-server "$REDIS_ENTRYPOINT" \
    'mkdir -p /data && chown redis:redis /data' \
    'WORKDIR /data' \
    'VOLUME /data' \
    'EXPOSE 6379' \
    'ENTRYPOINT ["docker-entrypoint.sh"]' \
    'CMD ["redis-server"]')"
wait "$rabbitmq_pid" || { log "building the RabbitMQ image failed"; exit 1; }
rabbitmq_image="$(cat "$work/rabbitmq.image")"
wait "$prometheus_pid" || { log "building the Prometheus image failed"; exit 1; }
prometheus_image="$(cat "$work/prometheus.image")"

# The crawler image: just the libraries the binaries link (libc6,
# libgcc-s1) unpacked, with no shell and no package manager, and the binaries
# of the `docker` profile (Cargo.toml) added. HTTPS needs no CA bundle: the
# fetcher carries its roots (rustls with webpki-roots).
base_packages=libc6,libgcc-s1
base_key="$(printf '%s\n' "$base_packages" | sha256sum | cut -c1-12)"
base_tar="${XDG_CACHE_HOME:-$HOME/.cache}/dedup-crawler/runtime-$base_key.tar"
if [ -s "$base_tar" ]; then
    log "crawler runtime base: cached ($base_tar)"
else
    log "crawler runtime base: unpacking $base_packages"
    mkdir -p "$(dirname "$base_tar")"
    mmdebstrap --quiet --variant=extract --format=tar --include="$base_packages" \
        --customize-hook='rm -rf "$1"/var/lib/apt/lists/* "$1"/var/cache/apt/*.bin "$1"/usr/share/doc "$1"/usr/share/man "$1"/usr/share/locale' \
        bookworm "$base_tar.part" < "$SOURCES" >&2
    mv "$base_tar.part" "$base_tar"
fi

t_build=$SECONDS
wait "$cargo_pid" || { log "building the binaries failed"; exit 1; }
log "binaries ready ($((SECONDS - t_build)) s waited for them after the service images)"
mkdir -p "$work/crawler/usr/local/bin"
target_dir="$(scripts/cargo-target-dir.sh)"
for b in "${bins[@]}"; do install -m 0755 "$target_dir/docker/$b" "$work/crawler/usr/local/bin/"; done
cp "$base_tar" "$work/crawler.tar"
tar --append --file "$work/crawler.tar" --owner=0 --group=0 -C "$work/crawler" ./usr/local/bin
# /warc and /var/lib/crawler/texts, the user's: a new named volume mounted
# there (compose's warc-data and texts) takes its owner, so contentseen can
# write its WARC files and its text segments.
mkdir -p "$work/crawler/warc" "$work/crawler/var/lib/crawler/texts"
tar --append --file "$work/crawler.tar" --owner=10001 --group=10001 --no-recursion -C "$work/crawler" \
    ./warc ./var/lib/crawler ./var/lib/crawler/texts
# The image key covers the binaries and the directories added above.
crawler_key="$( { cat "$work"/crawler/usr/local/bin/*; echo "/warc /var/lib/crawler/texts 10001:10001"; } | sha256sum | cut -c1-12)"
crawler_image="$REPO/crawler:$crawler_key"
if docker image inspect "$crawler_image" >/dev/null 2>&1; then
    log "$crawler_image: cached"
else
    docker import \
        --change 'ENV PATH=/usr/local/bin:/usr/bin:/bin' \
        --change 'USER 10001:10001' \
        --change 'CMD ["crawler", "--help"]' \
        "$work/crawler.tar" "$crawler_image" >/dev/null
    log "$crawler_image: built"
fi

echo "RABBITMQ_IMAGE=$rabbitmq_image"
echo "REDIS_IMAGE=$redis_image"
echo "CRAWLER_IMAGE=$crawler_image"
echo "PROMETHEUS_IMAGE=$prometheus_image"
