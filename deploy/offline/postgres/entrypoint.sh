#!/bin/sh
# First start (an empty PGDATA): the cluster, its user and password, and POSTGRES_DB; then the server.
set -e
: "${POSTGRES_USER:=postgres}"
if [ ! -s "$PGDATA/PG_VERSION" ]; then
  password_file=$(mktemp)
  printf '%s' "${POSTGRES_PASSWORD:-postgres}" > "$password_file"
  initdb -D "$PGDATA" -E UTF8 --locale=C.UTF-8 --username="$POSTGRES_USER" --pwfile="$password_file" \
    --auth-local=trust --auth-host=scram-sha-256
  rm -f "$password_file"
  echo "host all all all scram-sha-256" >> "$PGDATA/pg_hba.conf"
  if [ -n "$POSTGRES_DB" ] && [ "$POSTGRES_DB" != postgres ]; then
    # Local socket only while the database is made: no client connects to a half-made cluster.
    pg_ctl -D "$PGDATA" -o "-c listen_addresses=''" -w start
    psql -v ON_ERROR_STOP=1 -U "$POSTGRES_USER" -d postgres -c "CREATE DATABASE \"$POSTGRES_DB\""
    pg_ctl -D "$PGDATA" -m fast -w stop
  fi
  echo "listen_addresses = '*'" >> "$PGDATA/postgresql.auto.conf"
fi
exec "$@"
