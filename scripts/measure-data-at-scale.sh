#!/usr/bin/env bash
# The measurements of docs/data-at-scale.md: imports of 1,000,000 students and 1,000,000 devices
# (JSON and CSV) into SQLite and PostgreSQL, with time and peak memory; one GetStudentSchool
# answer for a school of 10,000 students on each store; the SQLite file's size. And a reference:
# PostgreSQL's own `\copy` of the same rows (the CSV files) into tables with the same indexes.
#
#   npm run build && scripts/measure-data-at-scale.sh [POSTGRES_URL]
#
# POSTGRES_URL defaults to postgres://postgres@127.0.0.1:5432/test; schemas sis_measure_* are
# dropped and recreated there. Files go to $OUT (default /tmp/sis-measure). Needs GNU time, curl
# and psql. The machine's load average is printed first and last: other work skews the figures.
set -euo pipefail
cd "$(dirname "$0")/.."
PG="${1:-postgres://postgres@127.0.0.1:5432/test}"
OUT="${OUT:-/tmp/sis-measure}"
SIS=(node dist/src/cli/main.js)
# A port nobody listens on (another service on a fixed port would answer in our place).
PORT="${PORT:-$(node -e "const s = require('net').createServer().listen(0, '127.0.0.1', () => { console.log(s.address().port); s.close(); })")}"

echo "commit $(git rev-parse --short HEAD 2>/dev/null || echo '?'), $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg)"
rm -rf "$OUT" && mkdir -p "$OUT"
node scripts/generate-dataset.js --out "$OUT/data"
ls -l "$OUT/data"

# Runs a command under GNU time; prints its output, wall time, CPU time of the command (user +
# system: less sensitive than wall time to other load on the machine) and peak resident memory.
measure() {
  local label="$1"
  shift
  /usr/bin/time -v "$@" >"$OUT/out.txt" 2>"$OUT/time.txt"
  printf '%-40s %s | wall %s | cpu %s+%s s | %s\n' "$label" "$(tail -1 "$OUT/out.txt")" \
    "$(grep 'Elapsed (wall clock)' "$OUT/time.txt" | sed 's/.*: //')" \
    "$(grep 'User time' "$OUT/time.txt" | sed 's/.*: //')" \
    "$(grep 'System time' "$OUT/time.txt" | sed 's/.*: //')" \
    "$(grep 'Maximum resident' "$OUT/time.txt" | sed 's/.*: //') kB"
}

for schema in sis_measure_json sis_measure_csv sis_measure_copy; do
  SIS_DATABASE_URL="$PG" node -e "
    const pg = require('pg'); const c = new pg.Client(process.env.SIS_DATABASE_URL);
    c.connect().then(() => c.query('drop schema if exists $schema cascade')).then(() => c.end());"
done

echo '--- import (wall clock; CPU of the sis process, user+system; maximum resident set size)'
measure 'SQLite, dataset.json (both tables)' env SIS_DATABASE_URL="sqlite:$OUT/json.db" "${SIS[@]}" import "$OUT/data/dataset.json"
measure 'SQLite, students.csv' env SIS_DATABASE_URL="sqlite:$OUT/csv.db" "${SIS[@]}" import --table students "$OUT/data/students.csv"
measure 'SQLite, devices.csv' env SIS_DATABASE_URL="sqlite:$OUT/csv.db" "${SIS[@]}" import --table devices "$OUT/data/devices.csv"
measure 'PostgreSQL, dataset.json (both tables)' env SIS_DATABASE_URL="$PG?schema=sis_measure_json" "${SIS[@]}" import "$OUT/data/dataset.json"
measure 'PostgreSQL, students.csv' env SIS_DATABASE_URL="$PG?schema=sis_measure_csv" "${SIS[@]}" import --table students "$OUT/data/students.csv"
measure 'PostgreSQL, devices.csv' env SIS_DATABASE_URL="$PG?schema=sis_measure_csv" "${SIS[@]}" import --table devices "$OUT/data/devices.csv"
# The reference: the same rows as CSV, loaded by PostgreSQL's own \copy into tables with the
# indexes of ours (students: primary key, school/active/order, unique order; devices: primary
# key, byte-order id); seq is filled by a sequence, as our imports number new rows.
psql -q "$PG" <<'SQL'
create schema sis_measure_copy;
create table sis_measure_copy.students (id_student text primary key, "fullName" text, id_device text, "ShowActive" text, school_base_url text, seq bigserial not null);
create index on sis_measure_copy.students (school_base_url, "ShowActive", seq);
create unique index on sis_measure_copy.students (seq);
create table sis_measure_copy.devices (id text primary key, token text);
create index on sis_measure_copy.devices (id collate "C");
SQL
measure 'PostgreSQL \copy, both CSV files' psql -q -tA "$PG" \
  -c "\\copy sis_measure_copy.students (id_student, \"fullName\", id_device, \"ShowActive\", school_base_url) from '$OUT/data/students.csv' with (format csv, header true, null '\\N')" \
  -c "\\copy sis_measure_copy.devices (id, token) from '$OUT/data/devices.csv' with (format csv, header true, null '\\N')" \
  -c "select count(*) || ' rows copied' from (select id_student from sis_measure_copy.students union all select id from sis_measure_copy.devices) t"
measure 'dry run, dataset.json' "${SIS[@]}" import --dry-run "$OUT/data/dataset.json"
measure 'SQLite, export JSON' env SIS_DATABASE_URL="sqlite:$OUT/json.db" "${SIS[@]}" export --output "$OUT/export.json"
measure 'PostgreSQL, export JSON' env SIS_DATABASE_URL="$PG?schema=sis_measure_json" "${SIS[@]}" export --output "$OUT/export-pg.json"
cmp "$OUT/export.json" "$OUT/export-pg.json" && echo 'the two exports are identical'

echo '--- SQLite file'
ls -l "$OUT"/json.db*

echo '--- GetStudentSchool, school of 10,000 students (http://school-0000.example, all active)'
QUERY='school_base_url=http%3A%2F%2Fschool-0000.example&show_active=1'
for url in "sqlite:$OUT/json.db" "$PG?schema=sis_measure_json"; do
  SIS_DATABASE_URL="$url" PORT="$PORT" HOST=127.0.0.1 SIS_DEMO_DATA=false LOG_LEVEL=warn "${SIS[@]}" serve &
  server=$!
  until curl -fs -o /dev/null "http://127.0.0.1:$PORT/NotificationNotes.asmx"; do
    kill -0 "$server" || { echo "the service did not start"; exit 1; }
    sleep 0.2
  done
  echo "$url"
  for i in 1 2 3 4 5; do
    curl -s -o "$OUT/answer.xml" -w "  GET  #$i: %{time_total} s, %{size_download} bytes, HTTP %{http_code}\n" \
      "http://127.0.0.1:$PORT/NotificationNotes.asmx/GetStudentSchool?$QUERY"
  done
  grep -o '<StudentInfo>' "$OUT/answer.xml" | wc -l | sed 's/^/  students in the answer: /'
  curl -s -o /dev/null -w "  SOAP 1.1: %{time_total} s, %{size_download} bytes, HTTP %{http_code}\n" \
    -H 'Content-Type: text/xml; charset=utf-8' -H 'SOAPAction: "http://tempuri.org/GetStudentSchool"' \
    --data '<?xml version="1.0" encoding="utf-8"?><soap:Envelope xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/"><soap:Body><GetStudentSchool xmlns="http://tempuri.org/"><school_base_url>http://school-0000.example</school_base_url><show_active>49</show_active></GetStudentSchool></soap:Body></soap:Envelope>' \
    "http://127.0.0.1:$PORT/NotificationNotes.asmx"
  kill "$server"
  wait "$server" || true
done
echo "load average at the end $(cut -d' ' -f1-3 /proc/loadavg)"
