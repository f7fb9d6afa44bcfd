# shellcheck shell=bash
# .ci/services.sh -- start the backing services for integration tests.
#
# Meant to be SOURCED (by .ci/run, or by hand):
#
#     source .ci/services.sh || exit 1
#     trap ci_services_stop EXIT
#     ... run tests using $REDIS_URL and $MONGODB_URI ...
#
# It starts, on loopback only:
#   * redis-server on 127.0.0.1:$CI_REDIS_PORT (default 6390), no persistence;
#     installed with apt-get if missing.
#   * FerretDB (MongoDB wire protocol, SQLite backend) on
#     127.0.0.1:$CI_FERRETDB_PORT (default 27027), built from tools/ferretdb
#     with Go and cached in ${XDG_CACHE_HOME:-$HOME/.cache}/scheduler-ci/.
# and exports REDIS_URL, MONGODB_URI, POSTGRES_URL and defines ci_services_stop.
# All state lives in a fresh temp dir that ci_services_stop removes.
#
#   * PostgreSQL (Debian's postgresql package, installed with apt-get if missing): a private
#     cluster initialised in the temp dir on 127.0.0.1:$CI_POSTGRES_PORT (default 5499), for the
#     PostgreSQL store (SCHEDULER_STORE=postgres); exports POSTGRES_URL.
# CI_FERRETDB_BACKEND=postgresql (default sqlite) runs FerretDB on that PostgreSQL (database
# `ferretdb`) instead of its SQLite backend: for the cluster benchmark (load-tests/README.md).
#
# Requires: bash, apt-get (only if Redis is missing), Go >= 1.21 on PATH or
# in /usr/local/go/bin (go.mod asks for 1.24; newer-than-1.21 toolchains fetch
# it automatically). Nothing here changes the caller's shell options.

CI_REDIS_PORT="${CI_REDIS_PORT:-6390}"
CI_FERRETDB_PORT="${CI_FERRETDB_PORT:-27027}"
CI_SERVICES_START_TIMEOUT="${CI_SERVICES_START_TIMEOUT:-60}"
CI_FERRETDB_BACKEND="${CI_FERRETDB_BACKEND:-sqlite}"
CI_POSTGRES_PORT="${CI_POSTGRES_PORT:-5499}"

_ci_log() { printf '[ci-services] %s\n' "$*" >&2; }
_ci_fail() { printf '[ci-services] ERROR: %s\n' "$*" >&2; return 1; }

# True if something accepts TCP connections on 127.0.0.1:$1.
_ci_tcp_open() {
  (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}

_ci_sudo() {
  if [ "$(id -u)" -eq 0 ]; then "$@"
  elif command -v sudo >/dev/null 2>&1; then sudo "$@"
  else _ci_fail "need root or sudo to run: $*"
  fi
}

_ci_ensure_redis() {
  if command -v redis-server >/dev/null 2>&1 && command -v redis-cli >/dev/null 2>&1; then
    return 0
  fi
  _ci_log "redis-server not found; installing with apt-get"
  command -v apt-get >/dev/null 2>&1 || { _ci_fail "redis-server missing and apt-get unavailable"; return 1; }
  _ci_sudo apt-get update -qq >&2 \
    || { _ci_fail "apt-get update failed"; return 1; }
  # redis-server depends on redis-tools, which provides redis-cli.
  _ci_sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq redis-server >&2 \
    || { _ci_fail "apt-get install redis-server failed"; return 1; }
  command -v redis-server >/dev/null 2>&1 || { _ci_fail "redis-server still not on PATH after install"; return 1; }
}

_ci_find_go() {
  if command -v go >/dev/null 2>&1; then command -v go
  elif [ -x /usr/local/go/bin/go ]; then echo /usr/local/go/bin/go
  else return 1
  fi
}

# Prints the path of a cached ferretdb-embedded binary, building it if needed.
_ci_ferretdb_binary() {
  local src="$CI_REPO_ROOT/tools/ferretdb" cache hash bin go tmp t0
  [ -f "$src/main.go" ] && [ -f "$src/go.sum" ] || { _ci_fail "missing $src/main.go or go.sum"; return 1; }

  cache="${XDG_CACHE_HOME:-$HOME/.cache}/scheduler-ci"
  # Key on everything that determines the build (go.mod is included too: it
  # pins the FerretDB version, go.sum alone could in theory stay the same).
  hash="$(cat "$src/go.mod" "$src/go.sum" "$src/main.go" | sha256sum | cut -c1-16)"
  bin="$cache/ferretdb-$hash"
  if [ -x "$bin" ]; then
    _ci_log "FerretDB: using cached build $bin"
    printf '%s\n' "$bin"
    return 0
  fi

  go="$(_ci_find_go)" || { _ci_fail "Go toolchain not found (need go >= 1.21 on PATH or /usr/local/go/bin/go)"; return 1; }
  mkdir -p "$cache" || { _ci_fail "cannot create cache dir $cache"; return 1; }
  _ci_log "FerretDB: building $bin with $("$go" version | cut -d' ' -f3) (first run on this machine; takes a while)"
  # Build to a temp name and rename, so an interrupted build never leaves a
  # half-written binary that a later run would treat as a cache hit.
  tmp="$bin.tmp.$$"
  t0=$SECONDS
  if ! (cd "$src" && CGO_ENABLED=0 "$go" build -trimpath -o "$tmp" .) >&2; then
    rm -f "$tmp"
    _ci_fail "go build of tools/ferretdb failed"
    return 1
  fi
  mv -f "$tmp" "$bin" || { _ci_fail "cannot move $tmp to $bin"; return 1; }
  _ci_log "FerretDB: built in $((SECONDS - t0))s"
  printf '%s\n' "$bin"
}

# Prints the bin directory of the newest installed PostgreSQL, installing Debian's package if none.
_ci_postgres_bindir() {
  local d
  d="$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)"
  if [ -z "$d" ]; then
    _ci_log "PostgreSQL not found; installing with apt-get"
    _ci_sudo apt-get update -qq >&2 || { _ci_fail "apt-get update failed"; return 1; }
    _ci_sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >&2 \
      || { _ci_fail "apt-get install postgresql failed"; return 1; }
    d="$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)"
  fi
  [ -x "$d/initdb" ] || { _ci_fail "no initdb under /usr/lib/postgresql"; return 1; }
  printf '%s\n' "$d"
}

# Runs a PostgreSQL command as the owner of the data directory (initdb refuses root).
_ci_as_pg() {
  if [ "$(id -u)" -eq 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

# Starts a private PostgreSQL in $CI_SERVICES_DIR/postgres (superuser `scheduler`, trust on
# loopback, database `scheduler`; default durability: fsync and synchronous_commit on) and exports
# POSTGRES_URL for the PostgreSQL store's tests and benchmarks.
_ci_postgres_start() {
  local bindir="$1" data="$CI_SERVICES_DIR/postgres"
  mkdir -p "$data" && chmod 700 "$data"
  if [ "$(id -u)" -eq 0 ]; then chmod 711 "$CI_SERVICES_DIR" && chown postgres "$data"; fi
  _ci_as_pg "$bindir/initdb" -D "$data" -U scheduler -A trust --no-sync >"$CI_SERVICES_DIR/postgres-init.log" 2>&1 \
    || { tail -n 20 "$CI_SERVICES_DIR/postgres-init.log" >&2; _ci_fail "initdb failed"; return 1; }
  _ci_log "PostgreSQL: starting on 127.0.0.1:$CI_POSTGRES_PORT"
  _ci_as_pg "$bindir/pg_ctl" -D "$data" -l "$data/postgres.log" -w -t "$CI_SERVICES_START_TIMEOUT" \
    -o "-p $CI_POSTGRES_PORT -k $data -c listen_addresses=127.0.0.1 -c max_connections=300" start >&2 \
    || { tail -n 20 "$data/postgres.log" >&2; _ci_fail "PostgreSQL did not start"; return 1; }
  _ci_as_pg "$bindir/createdb" -h 127.0.0.1 -p "$CI_POSTGRES_PORT" -U scheduler scheduler >&2 \
    || { _ci_fail "createdb scheduler failed"; return 1; }
  export POSTGRES_URL="postgres://scheduler@127.0.0.1:$CI_POSTGRES_PORT/scheduler"
  _ci_log "PostgreSQL: ready ($POSTGRES_URL)"
}

# Creates FerretDB's database in the private PostgreSQL and prints FerretDB's URL for it.
_ci_ferretdb_postgres_url() {
  local bindir="$1"
  _ci_as_pg "$bindir/createdb" -h 127.0.0.1 -p "$CI_POSTGRES_PORT" -U scheduler ferretdb >&2 \
    || { _ci_fail "createdb ferretdb failed"; return 1; }
  # GIN companions of FerretDB's btree indexes, which its pushed-down filters cannot use (see the file).
  _ci_as_pg "$bindir/psql" -q -v ON_ERROR_STOP=1 -h 127.0.0.1 -p "$CI_POSTGRES_PORT" -U scheduler -d ferretdb \
    <"$CI_REPO_ROOT/tools/ferretdb/postgresql-gin-companions.sql" >&2 \
    || { _ci_fail "loading tools/ferretdb/postgresql-gin-companions.sql failed"; return 1; }
  printf 'postgres://scheduler@127.0.0.1:%s/ferretdb\n' "$CI_POSTGRES_PORT"
}

ci_services_stop() {
  local pid i
  if [ -n "${CI_FERRETDB_PID:-}" ] && kill -0 "$CI_FERRETDB_PID" 2>/dev/null; then
    kill -TERM "$CI_FERRETDB_PID" 2>/dev/null
    for i in $(seq 1 50); do kill -0 "$CI_FERRETDB_PID" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$CI_FERRETDB_PID" 2>/dev/null || true
    wait "$CI_FERRETDB_PID" 2>/dev/null || true
    _ci_log "FerretDB stopped"
  fi
  CI_FERRETDB_PID=

  if [ -n "${CI_SERVICES_DIR:-}" ] && [ -f "$CI_SERVICES_DIR/redis/redis.pid" ]; then
    pid="$(cat "$CI_SERVICES_DIR/redis/redis.pid" 2>/dev/null)"
    if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
      kill -TERM "$pid" 2>/dev/null
      for i in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
      kill -KILL "$pid" 2>/dev/null || true
      _ci_log "Redis stopped"
    fi
  fi

  if [ -n "${CI_POSTGRES_BINDIR:-}" ] && [ -n "${CI_SERVICES_DIR:-}" ]; then
    _ci_as_pg "$CI_POSTGRES_BINDIR/pg_ctl" -D "$CI_SERVICES_DIR/postgres" -m fast -w stop >/dev/null 2>&1 \
      && _ci_log "PostgreSQL stopped"
  fi
  CI_POSTGRES_BINDIR=

  if [ -n "${CI_SERVICES_DIR:-}" ] && [ -d "$CI_SERVICES_DIR" ]; then
    rm -rf "$CI_SERVICES_DIR"
  fi
  CI_SERVICES_DIR=
  return 0
}

_ci_services_start() {
  local bin deadline backend_args pgbin pgurl

  CI_REPO_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)" || return 1

  # Refuse to silently reuse something else already on our ports.
  _ci_tcp_open "$CI_REDIS_PORT" && { _ci_fail "127.0.0.1:$CI_REDIS_PORT is already in use"; return 1; }
  _ci_tcp_open "$CI_FERRETDB_PORT" && { _ci_fail "127.0.0.1:$CI_FERRETDB_PORT is already in use"; return 1; }

  _ci_ensure_redis || return 1
  bin="$(_ci_ferretdb_binary)" || return 1

  CI_SERVICES_DIR="$(mktemp -d "${TMPDIR:-/tmp}/scheduler-ci.XXXXXX")" || { _ci_fail "mktemp failed"; return 1; }
  mkdir -p "$CI_SERVICES_DIR/redis" "$CI_SERVICES_DIR/ferretdb"

  _ci_log "Redis: starting on 127.0.0.1:$CI_REDIS_PORT"
  redis-server --bind 127.0.0.1 --port "$CI_REDIS_PORT" \
    --daemonize yes --save '' --appendonly no \
    --dir "$CI_SERVICES_DIR/redis" \
    --pidfile "$CI_SERVICES_DIR/redis/redis.pid" \
    --logfile "$CI_SERVICES_DIR/redis/redis.log" \
    || { _ci_fail "redis-server failed to start"; return 1; }

  _ci_tcp_open "$CI_POSTGRES_PORT" && { _ci_fail "127.0.0.1:$CI_POSTGRES_PORT is already in use"; return 1; }
  pgbin="$(_ci_postgres_bindir)" || return 1
  CI_POSTGRES_BINDIR="$pgbin"
  _ci_postgres_start "$pgbin" || return 1

  case "$CI_FERRETDB_BACKEND" in
    sqlite) backend_args=(-dir "$CI_SERVICES_DIR/ferretdb/data") ;;
    postgresql)
      pgurl="$(_ci_ferretdb_postgres_url "$pgbin")" || return 1
      backend_args=(-postgresql-url "$pgurl")
      ;;
    *) _ci_fail "CI_FERRETDB_BACKEND must be sqlite or postgresql, not $CI_FERRETDB_BACKEND"; return 1 ;;
  esac

  _ci_log "FerretDB ($CI_FERRETDB_BACKEND backend): starting on 127.0.0.1:$CI_FERRETDB_PORT (log: $CI_SERVICES_DIR/ferretdb.log)"
  "$bin" -listen "127.0.0.1:$CI_FERRETDB_PORT" "${backend_args[@]}" \
    </dev/null >"$CI_SERVICES_DIR/ferretdb.log" 2>&1 &
  CI_FERRETDB_PID=$!

  deadline=$((SECONDS + CI_SERVICES_START_TIMEOUT))
  until [ "$(redis-cli -h 127.0.0.1 -p "$CI_REDIS_PORT" ping 2>/dev/null)" = PONG ]; do
    if [ $SECONDS -ge $deadline ]; then
      tail -n 20 "$CI_SERVICES_DIR/redis/redis.log" >&2 2>/dev/null
      _ci_fail "Redis did not answer PING within ${CI_SERVICES_START_TIMEOUT}s"
      return 1
    fi
    sleep 0.2
  done
  _ci_log "Redis: ready"

  until _ci_tcp_open "$CI_FERRETDB_PORT"; do
    if ! kill -0 "$CI_FERRETDB_PID" 2>/dev/null; then
      tail -n 20 "$CI_SERVICES_DIR/ferretdb.log" >&2 2>/dev/null
      _ci_fail "FerretDB exited during startup (see log above)"
      return 1
    fi
    if [ $SECONDS -ge $deadline ]; then
      tail -n 20 "$CI_SERVICES_DIR/ferretdb.log" >&2 2>/dev/null
      _ci_fail "FerretDB did not accept connections within ${CI_SERVICES_START_TIMEOUT}s"
      return 1
    fi
    sleep 0.2
  done
  _ci_log "FerretDB: ready"

  export REDIS_URL="redis://127.0.0.1:$CI_REDIS_PORT"
  export MONGODB_URI="mongodb://127.0.0.1:$CI_FERRETDB_PORT/"
  _ci_log "exported REDIS_URL=$REDIS_URL MONGODB_URI=$MONGODB_URI POSTGRES_URL=$POSTGRES_URL"
}

# On any failure, tear down whatever was started, then report failure.
_ci_services_start || { ci_services_stop; _ci_fail "services did not start"; }
