#!/usr/bin/env bash
# make test-db: creates the databases the tests use, when missing, on the servers that
# HRSYNC_TEST_POSTGRES_URL and HRSYNC_TEST_MYSQL_DSN name (by default a database named test in
# PostgreSQL and in MariaDB on loopback, logged into as postgres and root without a password).
# Safe to run again: an existing database is left as it is. When a server refuses the login, it
# says what the server needs, and fails.
set -euo pipefail

PG_URL=${HRSYNC_TEST_POSTGRES_URL:-postgres://postgres@127.0.0.1:5432/test?sslmode=disable}
MYSQL_DSN=${HRSYNC_TEST_MYSQL_DSN:-root@tcp(127.0.0.1:3306)/test?parseTime=true}

fail() { printf 'test-db: %s\n' "$*" >&2; exit 1; }

# PostgreSQL: connect to the server's postgres database with the same login, and create the
# URL's database there.
[[ $PG_URL =~ ^(postgres(ql)?://[^/]+)/([A-Za-z0-9_]+)(\?.*)?$ ]] ||
  fail "HRSYNC_TEST_POSTGRES_URL $PG_URL: want postgres://user@host:port/database[?options]"
pg_db=${BASH_REMATCH[3]}
pg_admin="${BASH_REMATCH[1]}/postgres${BASH_REMATCH[4]}"
command -v psql >/dev/null || fail "psql is missing (Debian: apt-get install postgresql-client)"
if ! out=$(psql "$pg_admin" -X -v ON_ERROR_STOP=1 -tAc "select 1 from pg_database where datname = '$pg_db'" 2>&1); then
  fail "cannot log into PostgreSQL as ${pg_admin%%\?*}: $out
  The tests need a PostgreSQL server there with a login that needs no password: on a local
  server, make pg_hba.conf's line for 127.0.0.1/32 read 'host all all 127.0.0.1/32 trust' (the
  first line that matches decides) and reload the server; or set HRSYNC_TEST_POSTGRES_URL to a
  server and login of your own."
fi
if [ "$out" = 1 ]; then
  echo "test-db: PostgreSQL database $pg_db exists"
else
  psql "$pg_admin" -X -v ON_ERROR_STOP=1 -qc "create database \"$pg_db\"" >/dev/null
  echo "test-db: PostgreSQL database $pg_db created"
fi

# MariaDB: the DSN is the Go driver's, user[:password]@tcp(host:port)/database[?options].
[[ $MYSQL_DSN =~ ^([^:@]+)(:([^@]*))?@tcp\(([^:\)]+):([0-9]+)\)/([A-Za-z0-9_]+)(\?.*)?$ ]] ||
  fail "HRSYNC_TEST_MYSQL_DSN $MYSQL_DSN: want user[:password]@tcp(host:port)/database[?options]"
my_user=${BASH_REMATCH[1]} my_pass=${BASH_REMATCH[3]} my_host=${BASH_REMATCH[4]} my_port=${BASH_REMATCH[5]} my_db=${BASH_REMATCH[6]}
command -v mariadb >/dev/null || fail "the mariadb client is missing (Debian: apt-get install mariadb-client)"
my=(mariadb --protocol=tcp -h "$my_host" -P "$my_port" -u "$my_user")
[ -n "$my_pass" ] && my+=("-p$my_pass")
if ! out=$("${my[@]}" -e "create database if not exists \`$my_db\`" 2>&1); then
  fail "cannot create MariaDB database $my_db as $my_user at $my_host:$my_port: $out
  The tests need a MariaDB server there with a login that needs no password and may create a
  database: as MariaDB's administrator (sudo mariadb),
    CREATE USER IF NOT EXISTS '$my_user'@'$my_host' IDENTIFIED BY '';
    GRANT ALL ON *.* TO '$my_user'@'$my_host';
  or set HRSYNC_TEST_MYSQL_DSN to a server and login of your own."
fi
echo "test-db: MariaDB database $my_db ready"
