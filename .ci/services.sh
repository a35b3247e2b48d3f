#!/usr/bin/env bash
# Starts the servers the store integration tests use: PostgreSQL on 127.0.0.1:5432 with a
# `ugent_test` database (user ugent, password ugent) and Redis on 127.0.0.1:6379.
# Idempotent; run as root on Debian bookworm. Prints the env exports the tests read:
#   eval "$(.ci/services.sh)"
set -euo pipefail

PG_USER=ugent
PG_PASSWORD=ugent
PG_DB=ugent_test
PG_PORT=5432
REDIS_PORT=6379

log() { echo "services: $*" >&2; }

export DEBIAN_FRONTEND=noninteractive
missing=()
command -v pg_ctlcluster >/dev/null 2>&1 || missing+=(postgresql)
command -v redis-server >/dev/null 2>&1 || missing+=(redis-server)
if [ "${#missing[@]}" -gt 0 ]; then
  log "installing ${missing[*]}"
  apt-get update -qq >&2
  # in a container without systemd the packages install but do not start; this script starts them below
  apt-get install -y -qq "${missing[@]}" >&2
fi

# PostgreSQL: the newest installed major version, cluster "main".
PG_VERSION=$(ls /usr/lib/postgresql | sort -V | tail -n 1)
if ! pg_lsclusters -h | awk '{print $1" "$2}' | grep -qx "$PG_VERSION main"; then
  log "creating cluster $PG_VERSION/main"
  pg_createcluster "$PG_VERSION" main --port "$PG_PORT" >&2
fi
CONF_DIR=/etc/postgresql/$PG_VERSION/main
sed -i -E "s/^#?\s*listen_addresses\s*=.*/listen_addresses = '127.0.0.1'/; s/^#?\s*port\s*=.*/port = $PG_PORT/" "$CONF_DIR/postgresql.conf"
# Password logins over TCP from loopback (the Debian default, asserted here).
grep -qE '^host\s+all\s+all\s+127\.0\.0\.1/32\s+(scram-sha-256|md5)' "$CONF_DIR/pg_hba.conf" ||
  echo "host all all 127.0.0.1/32 scram-sha-256" >>"$CONF_DIR/pg_hba.conf"
if ! pg_lsclusters -h | awk -v v="$PG_VERSION" '$1==v && $2=="main" {print $4}' | grep -q online; then
  log "starting PostgreSQL $PG_VERSION/main"
  pg_ctlcluster "$PG_VERSION" main start >&2
fi
for _ in $(seq 1 60); do
  pg_isready -q -h 127.0.0.1 -p "$PG_PORT" && break
  sleep 0.5
done
pg_isready -q -h 127.0.0.1 -p "$PG_PORT" || { log "PostgreSQL does not accept connections"; exit 1; }

as_postgres() { su postgres -c "psql -v ON_ERROR_STOP=1 -qAt -p $PG_PORT $*"; }
if [ "$(as_postgres "-c \"SELECT 1 FROM pg_roles WHERE rolname = '$PG_USER'\"")" != "1" ]; then
  as_postgres "-c \"CREATE ROLE $PG_USER LOGIN PASSWORD '$PG_PASSWORD'\"" >&2
else
  as_postgres "-c \"ALTER ROLE $PG_USER LOGIN PASSWORD '$PG_PASSWORD'\"" >&2
fi
if [ "$(as_postgres "-c \"SELECT 1 FROM pg_database WHERE datname = '$PG_DB'\"")" != "1" ]; then
  as_postgres "-c \"CREATE DATABASE $PG_DB OWNER $PG_USER\"" >&2
fi

# Redis
if ! redis-cli -h 127.0.0.1 -p "$REDIS_PORT" ping 2>/dev/null | grep -q PONG; then
  log "starting Redis on 127.0.0.1:$REDIS_PORT"
  redis-server --port "$REDIS_PORT" --bind 127.0.0.1 --daemonize yes --save "" --appendonly no >&2
fi
for _ in $(seq 1 60); do
  redis-cli -h 127.0.0.1 -p "$REDIS_PORT" ping 2>/dev/null | grep -q PONG && break
  sleep 0.5
done
redis-cli -h 127.0.0.1 -p "$REDIS_PORT" ping 2>/dev/null | grep -q PONG || { log "Redis does not answer"; exit 1; }

# A login over TCP with the password proves the URL the tests get.
PGPASSWORD=$PG_PASSWORD psql -qAt -h 127.0.0.1 -p "$PG_PORT" -U "$PG_USER" -d "$PG_DB" -c "SELECT 1" >/dev/null

echo "export UGENT_PG_URL=postgres://$PG_USER:$PG_PASSWORD@127.0.0.1:$PG_PORT/$PG_DB"
echo "export UGENT_REDIS_URL=redis://127.0.0.1:$REDIS_PORT"
