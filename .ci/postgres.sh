#!/usr/bin/env bash
# A throwaway PostgreSQL server on 127.0.0.1 for the `postgres` tests.
#
#   pg_env="$(.ci/postgres.sh start)" && eval "$pg_env"   # sets POSTGRES_URL, AGENT_RULES_PG_DIR
#   .ci/postgres.sh stop                                  # stops it, removes its folder
#
# `start` installs Debian's `postgresql` package when no server binaries are found, creates a
# data folder with mktemp, runs initdb as a non-root user (the `postgres` system user when run
# as root), starts the server on a free port with fsync off and creates a database. Only the
# `export` lines go to stdout; progress and errors go to stderr. It exits non-zero, and removes
# the folder, if the server did not start.
set -euo pipefail

PG_USER=agent_rules
PG_DATABASE=agent_rules_test

log() { printf 'postgres.sh: %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

# The newest directory holding both initdb and pg_ctl: Debian keeps them off PATH.
find_bindir() {
    local candidate
    for candidate in $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V -r) \
        "$(dirname "$(command -v pg_ctl 2>/dev/null || echo /nonexistent/pg_ctl)")" \
        /usr/local/pgsql/bin; do
        if [[ -x "$candidate/initdb" && -x "$candidate/pg_ctl" ]]; then
            echo "$candidate"
            return 0
        fi
    done
    return 1
}

ensure_binaries() {
    if find_bindir >/dev/null; then
        return 0
    fi
    [[ "$(id -u)" == 0 ]] || die "no PostgreSQL server binaries found; install Debian's postgresql package"
    log "installing PostgreSQL from Debian's packages"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update >&2
    apt-get install -y --no-install-recommends postgresql >&2
    find_bindir >/dev/null || die "postgresql was installed but initdb/pg_ctl are still missing"
}

# Run a command as the server's owner: postgres refuses to run as root.
as_owner() {
    if [[ "$(id -u)" == 0 ]]; then
        runuser -u postgres -- "$@"
    else
        "$@"
    fi
}

ensure_owner_account() {
    [[ "$(id -u)" == 0 ]] || return 0
    if ! id postgres >/dev/null 2>&1; then
        log "creating the postgres system user"
        useradd --system --home-dir /nonexistent --shell /usr/sbin/nologin postgres
    fi
}

free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

start() {
    ensure_binaries
    ensure_owner_account
    local bindir folder data port password
    bindir="$(find_bindir)"
    folder="$(mktemp -d -t agent-rules-pg.XXXXXX)"
    data="$folder/data"
    START_BINDIR="$bindir" START_FOLDER="$folder"
    trap on_start_failure EXIT
    chmod 755 "$folder"
    password="$(python3 -c 'import secrets; print(secrets.token_hex(16))')"
    printf '%s\n' "$password" >"$folder/pwfile"
    chmod 600 "$folder/pwfile"
    if [[ "$(id -u)" == 0 ]]; then
        chown postgres "$folder" "$folder/pwfile"
    fi

    log "initdb in $data with $bindir"
    as_owner "$bindir/initdb" --pgdata="$data" --username="$PG_USER" --pwfile="$folder/pwfile" \
        --auth-local=trust --auth-host=scram-sha-256 --encoding=UTF8 --no-locale >"$folder/initdb.log" 2>&1
    rm -f "$folder/pwfile"

    port="$(free_port)"
    log "starting on 127.0.0.1:$port"
    as_owner "$bindir/pg_ctl" --pgdata="$data" --log="$folder/server.log" --wait --timeout=60 \
        -o "-c listen_addresses=127.0.0.1 -p $port -c unix_socket_directories='$folder' -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200" \
        start >&2

    PGPASSWORD="$password" "$bindir/psql" --no-psqlrc --quiet -h 127.0.0.1 -p "$port" -U "$PG_USER" \
        -d postgres -v ON_ERROR_STOP=1 -c "CREATE DATABASE $PG_DATABASE" >&2
    PGPASSWORD="$password" "$bindir/pg_isready" -q -h 127.0.0.1 -p "$port" -d "$PG_DATABASE" \
        || die "the server does not answer on 127.0.0.1:$port"
    trap - EXIT

    log "ready: database $PG_DATABASE on 127.0.0.1:$port"
    printf 'export POSTGRES_URL=%q\n' "postgresql://$PG_USER:$password@127.0.0.1:$port/$PG_DATABASE"
    printf 'export AGENT_RULES_PG_DIR=%q\n' "$folder"
}

# Runs on any exit of `start` before the server is ready: show the logs, clean up, fail.
on_start_failure() {
    local bindir="$START_BINDIR" folder="$START_FOLDER"
    log "error: the PostgreSQL server did not start"
    for file in "$folder/initdb.log" "$folder/server.log"; do
        if [[ -f "$file" ]]; then
            log "--- $file"
            cat "$file" >&2
        fi
    done
    as_owner "$bindir/pg_ctl" --pgdata="$folder/data" --mode=immediate stop >/dev/null 2>&1 || true
    rm -rf "$folder"
    exit 1
}

stop() {
    local folder="${1:-${AGENT_RULES_PG_DIR:-}}"
    [[ -n "$folder" ]] || die "stop needs the folder printed by start (AGENT_RULES_PG_DIR or an argument)"
    [[ -d "$folder/data" ]] || die "$folder is not a folder made by '$0 start'"
    local bindir
    bindir="$(find_bindir)" || die "no pg_ctl found"
    as_owner "$bindir/pg_ctl" --pgdata="$folder/data" --mode=fast --wait stop >&2 || true
    rm -rf "$folder"
    log "stopped and removed $folder"
}

case "${1:-}" in
    start) start ;;
    stop) shift; stop "$@" ;;
    *) die "usage: $0 start | stop [FOLDER]" ;;
esac
