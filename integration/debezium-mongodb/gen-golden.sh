#!/usr/bin/env bash
# gen-golden.sh regenerates connectors/mongodb/testdata/golden-*.jsonl: the
# events Debezium 3.6.1's MongoDB event builder makes of the change events
# and documents in testdata/events.txt and testdata/fieldexclude.txt
# (GoldenEvents.java, run without a server). Needs a JDK and the jars of
# integration/pom.xml (bash integration/fetch-jars.sh).
#
# Usage: bash integration/debezium-mongodb/gen-golden.sh [JARS_DIR]
# GOLDEN_OUT=DIR writes the files there instead (the up-to-date test).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
jars="${1:-${TRIBUTARY_JARS:-$HOME/.cache/tributary/jars/kafka-4.4.0}}"
data="$here/../../connectors/mongodb/testdata"
out="${GOLDEN_OUT:-$data}"
ls "$jars"/debezium-connector-mongodb-*.jar >/dev/null 2>&1 || {
	echo "gen-golden: no debezium-connector-mongodb jar in $jars; run: bash integration/fetch-jars.sh" >&2
	exit 1
}
classes="$(mktemp -d)"
trap 'rm -rf "$classes"' EXIT
javac -nowarn --release 17 -d "$classes" -cp "$jars/*" "$here/GoldenEvents.java"
run() { java -cp "$classes:$jars/*" "$@" 2> >(grep -v '^SLF4J' >&2); }
run io.debezium.connector.mongodb.GoldenEvents "$data/events.txt" >"$out/golden-events.jsonl"
run -Dfield.exclude.list='shop.orders.secret,shop.*.nested.a.b,*.orders.arr.k,inv.items.qty' \
	io.debezium.connector.mongodb.GoldenEvents "$data/fieldexclude.txt" >"$out/golden-fieldexclude.jsonl"
echo "gen-golden: wrote $(wc -l <"$out/golden-events.jsonl") + $(wc -l <"$out/golden-fieldexclude.jsonl") events to $out"
