#!/bin/sh
# A small stand-in for the official postgres image's entrypoint, for the
# tests' locally built PostgreSQL 17 image (Debian trixie's packages; no
# registry is reachable here). It honours what docker/compose.lake.yaml
# uses of the official image: POSTGRES_PASSWORD, POSTGRES_USER (postgres),
# POSTGRES_DB (the user's name), PGDATA (/var/lib/postgresql/data),
# /docker-entrypoint-initdb.d/*.sql and *.sh on the first start, password
# (scram-sha-256) access from any host, and "postgres ARGS" as the command.
set -eu
PATH=/usr/lib/postgresql/17/bin:$PATH
export PGDATA="${PGDATA:-/var/lib/postgresql/data}"
user="${POSTGRES_USER:-postgres}"
db="${POSTGRES_DB:-$user}"

if [ "${1:-}" != postgres ]; then
	exec "$@"
fi
shift
if [ "$(id -u)" = 0 ]; then
	mkdir -p "$PGDATA" /var/run/postgresql
	chown -R postgres:postgres "$PGDATA" /var/run/postgresql
	chmod 700 "$PGDATA"
	exec setpriv --reuid=postgres --regid=postgres --init-groups "$0" postgres "$@"
fi
if [ ! -s "$PGDATA/PG_VERSION" ]; then
	if [ -z "${POSTGRES_PASSWORD:-}" ]; then
		echo "Error: POSTGRES_PASSWORD is not set (as the official image requires)" >&2
		exit 1
	fi
	pw=$(mktemp)
	printf '%s\n' "$POSTGRES_PASSWORD" > "$pw"
	initdb --username="$user" --pwfile="$pw" --auth-local=trust --auth-host=scram-sha-256 >/dev/null
	rm -f "$pw"
	echo "host all all all scram-sha-256" >> "$PGDATA/pg_hba.conf"
	pg_ctl -D "$PGDATA" -o "-c listen_addresses=''" -w start >/dev/null
	if [ "$db" != postgres ]; then
		psql -v ON_ERROR_STOP=1 --username "$user" --dbname postgres -c "CREATE DATABASE \"$db\"" >/dev/null
	fi
	for f in /docker-entrypoint-initdb.d/*; do
		case "$f" in
		*.sql) echo "running $f"; psql -v ON_ERROR_STOP=1 --username "$user" --dbname "$db" -f "$f" ;;
		*.sh) echo "running $f"; . "$f" ;;
		esac
	done
	pg_ctl -D "$PGDATA" -m fast -w stop >/dev/null
	echo "PostgreSQL init process complete; ready for start up."
fi
exec postgres -c listen_addresses='*' "$@"
