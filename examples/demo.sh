#!/usr/bin/env bash
# make demo: a full hrsync cycle on the embedded defaults (SQLite state, the emulator), in ./demo/.
# It syncs the sample export, places an order at the emulator for one of the new people, runs the
# personalization and orders jobs, and prints the summary and how to query the tables.
# The emulator listens on DEMO_ADDR (default 127.0.0.1:8080) and accepts DEMO_TOKEN (default
# demo-token). Nothing is sent before the emulator this script started answers on that address.
set -euo pipefail
BIN=${BIN:-bin/hrsync}
ADDR=${DEMO_ADDR:-127.0.0.1:8080}
export HRSYNC_API_TOKEN=${DEMO_TOKEN:-demo-token}
# No HRSYNC_STORE_URL: demo/hrsync.yaml's default store is hrsync.db beside it, demo/hrsync.db
# (relative paths in a configuration file are taken from the file's folder).
unset HRSYNC_STORE_URL
export HRSYNC_LOG_LEVEL=warn HRSYNC_LOG_FORMAT=console

fail() { printf 'make demo: %s\n' "$*" >&2; exit 1; }

# 1. The address must be free: anything that accepts a connection there (another emulator, a web
#    server) would otherwise receive the demo's people.
host=${ADDR%:*} port=${ADDR##*:}
host=${host#[} host=${host%]}
[ -n "$host" ] || host=127.0.0.1
if [ "$port" != 0 ] && timeout 2 bash -c 'exec 3<>"/dev/tcp/$1/$2"' _ "$host" "$port" 2>/dev/null; then
  fail "DEMO_ADDR $ADDR is taken: something already listens there. Stop it, or choose another address: make demo DEMO_ADDR=127.0.0.1:18080"
fi

rm -rf demo && mkdir -p demo/dropfolder
cp examples/demo.yaml demo/hrsync.yaml
cp examples/exports/employees.csv demo/dropfolder/employees.csv

# 2. Start the emulator and wait until it says where it listens and answers there. The base URL is
#    the one the emulator printed: the address this process bound, not whatever answers on ADDR.
"$BIN" emulator --listen "$ADDR" --token "$HRSYNC_API_TOKEN" --personalize-delay 1s > demo/emulator.log 2>&1 &
emulator=$!
trap 'kill $emulator 2>/dev/null || true' EXIT
base=
for _ in $(seq 100); do
  if ! kill -0 "$emulator" 2>/dev/null; then
    tail -n 5 demo/emulator.log >&2 || true
    fail "the emulator exited at start (is DEMO_ADDR $ADDR free?); see demo/emulator.log"
  fi
  line=$(grep -m1 '^emulator listening on ' demo/emulator.log || true)
  if [ -n "$line" ]; then
    base=$(awk '{print $4}' <<<"$line")
    curl -fsS -o /dev/null "$base/_emulator/dataset" 2>/dev/null && break
  fi
  base=
  sleep 0.1
done
[ -n "$base" ] || fail "the emulator did not answer on $ADDR/_emulator/dataset within 10s; see demo/emulator.log"
kill -0 "$emulator" 2>/dev/null || fail "the emulator stopped; see demo/emulator.log"
export HRSYNC_API_BASE_URL=$base

# Each step checks first that the emulator started above still runs.
step() {
  kill -0 "$emulator" 2>/dev/null || fail "the emulator stopped; see demo/emulator.log"
  printf '\n== %s\n' "$*"
}
step "hrsync validate";   "$BIN" validate --config demo/hrsync.yaml
step "hrsync plan";       "$BIN" plan --config demo/hrsync.yaml
step "hrsync run people"; "$BIN" run people --config demo/hrsync.yaml

step "an order placed at the emulator for 000101 (Amara Okafor)"
curl -fsS -X POST "$base/_emulator/orders" -H 'Content-Type: application/json' -d '{
  "collectionId":"20000000-0000-4000-8000-000000000002","externalId":"000101",
  "lines":[{"productId":"30000000-0000-4000-8000-000000000003","quantity":2}]}' -o /dev/null -w 'HTTP %{http_code}\n'

step "hrsync run all (people, grants, personalize, orders)"
rc=0
"$BIN" run all --config demo/hrsync.yaml || rc=$?
echo "exit code $rc"

step "hrsync plan grants --date 2026-07-22 (Amara Okafor's birthday)"
"$BIN" plan grants --config demo/hrsync.yaml --date 2026-07-22
step "hrsync run grants --date 2026-07-22 (that day's grants, once: a second run sends nothing)"
"$BIN" run grants --config demo/hrsync.yaml --date 2026-07-22
"$BIN" run grants --config demo/hrsync.yaml --date 2026-07-22

step "hrsync status"; "$BIN" status --config demo/hrsync.yaml

cat <<'TXT'

== where things are
state (SQLite):   demo/hrsync.db
archived export:  demo/dropfolder/processed/ (with its .report.json)
query the tables, for instance:
  sqlite3 demo/hrsync.db "SELECT external_id, state, amount FROM grants"
  sqlite3 demo/hrsync.db "SELECT * FROM order_facts"
  sqlite3 demo/hrsync.db "SELECT * FROM personalization_report LIMIT 5"
more queries: docs/reporting.md
TXT
# 4 is "done, with rows to look at"; the demo counts it as a success.
[ "$rc" -eq 0 ] || [ "$rc" -eq 4 ]
