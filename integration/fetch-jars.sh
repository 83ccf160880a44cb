#!/usr/bin/env bash
# fetch-jars.sh downloads the Apache Kafka 4.4 / Kafka Connect 4.4 jars listed
# in integration/pom.xml from Maven Central into a cache directory, for the
# test-only reference components started by integration/harness.
#
# Usage: bash integration/fetch-jars.sh [DIR]
#   DIR defaults to ${TRIBUTARY_JARS:-$HOME/.cache/tributary/jars/kafka-4.4.0}.
#
# Idempotent: a marker file holding the pom's checksum is written last; when it
# matches the current pom the script does nothing. The jars are downloaded into
# a sibling temporary directory and moved into place in one rename, so a
# concurrent or interrupted run never leaves a half-filled directory behind.
# The jars are never committed.
#
# connect-file (the FileStream connectors) is not on Maven Central for 4.4.0;
# the pom takes 4.3.1, whose classes reference
# org.apache.kafka.common.utils.AppInfoParser, moved to
# org.apache.kafka.common.utils.internals in 4.4. This script recompiles the
# 4.3.1 sources against the 4.4.0 jars with that one import rewritten and
# replaces the jar with connect-file-4.3.1-rebuilt-4.4.0.jar. Needs a JDK
# (javac, jar) for that step. Debezium's PostgreSQL connector (3.6.1) needs
# one class Kafka 4.4 moved; see the shim below.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
pom="$here/pom.xml"
dest="${1:-${TRIBUTARY_JARS:-$HOME/.cache/tributary/jars/kafka-4.4.0}}"
marker="$dest/.complete"

sum="$(cat "$pom" "${BASH_SOURCE[0]}" | sha256sum | cut -d' ' -f1)"
if [[ -f "$marker" && "$(cat "$marker")" == "$sum" ]]; then
	echo "fetch-jars: $dest is up to date"
	exit 0
fi

for tool in java javac jar mvn; do
	if ! command -v "$tool" >/dev/null 2>&1; then
		echo "fetch-jars: $tool not found on PATH (install a JDK 17+ and Maven)" >&2
		exit 1
	fi
done

parent="$(dirname "$dest")"
mkdir -p "$parent"
tmp="$(mktemp -d "$parent/.fetch.XXXXXX")"
trap 'rm -rf "$tmp"' EXIT

echo "fetch-jars: resolving $pom into $dest"
mvn -q -B -f "$pom" dependency:copy-dependencies \
	-DincludeScope=runtime \
	-DoutputDirectory="$tmp"

# Rebuild connect-file against the 4.4.0 jars (see the header).
cf_version="$(sed -n 's:.*<connect-file.version>\(.*\)</connect-file.version>.*:\1:p' "$pom")"
build="$tmp/.connect-file-build"
mkdir -p "$build/src" "$build/classes"
mvn -q -B -f "$pom" dependency:copy \
	-Dartifact="org.apache.kafka:connect-file:$cf_version:jar:sources" \
	-DoutputDirectory="$build"
(cd "$build/src" && jar xf "$build/connect-file-$cf_version-sources.jar")
find "$build/src" -name '*.java' -exec sed -i \
	's/org\.apache\.kafka\.common\.utils\.AppInfoParser/org.apache.kafka.common.utils.internals.AppInfoParser/g' {} +
rm "$tmp/connect-file-$cf_version.jar"
javac -nowarn --release 17 -encoding UTF-8 -cp "$tmp/*" -d "$build/classes" \
	$(find "$build/src" -name '*.java')
cp -r "$build/src/META-INF" "$build/classes/"
rm -f "$build/classes/META-INF/MANIFEST.MF"
jar cf "$tmp/connect-file-$cf_version-rebuilt-4.4.0.jar" -C "$build/classes" .
rm -rf "$build"

# Debezium 3.6.1 calls org.apache.kafka.common.utils.Sanitizer, which Kafka
# 4.4 moved to ...utils.internals (the only class Debezium references that
# 4.4 lacks). A three-method class under the old name that delegates to the
# new one lets Debezium run on Kafka Connect 4.4.
shim="$tmp/.sanitizer-shim"
mkdir -p "$shim/src/org/apache/kafka/common/utils" "$shim/classes"
cat >"$shim/src/org/apache/kafka/common/utils/Sanitizer.java" <<'JAVA'
package org.apache.kafka.common.utils;

/** Kafka 4.3's Sanitizer, delegating to its Kafka 4.4 home (test harness only). */
public final class Sanitizer {
    private Sanitizer() {}
    public static String sanitize(String name) { return org.apache.kafka.common.utils.internals.Sanitizer.sanitize(name); }
    public static String desanitize(String name) { return org.apache.kafka.common.utils.internals.Sanitizer.desanitize(name); }
    public static String jmxSanitize(String name) { return org.apache.kafka.common.utils.internals.Sanitizer.jmxSanitize(name); }
}
JAVA
javac -nowarn --release 17 -cp "$tmp/*" -d "$shim/classes" "$shim/src/org/apache/kafka/common/utils/Sanitizer.java"
jar cf "$tmp/kafka-4.4-sanitizer-shim-for-debezium.jar" -C "$shim/classes" .
rm -rf "$shim"

# The Prometheus JMX exporter's Java agent, which the metrics tests attach
# to Kafka Connect to list the series its MBeans become under Strimzi's and
# Confluent's exporter rules (the golden list of Tributary's /metrics). It
# is kept out of the class path, in agents/.
mvn -q -B -f "$pom" dependency:copy \
	-Dartifact="io.prometheus.jmx:jmx_prometheus_javaagent:$(sed -n 's:.*<jmx-exporter.version>\(.*\)</jmx-exporter.version>.*:\1:p' "$pom")" \
	-DoutputDirectory="$tmp/agents"

echo "$sum" >"$tmp/.complete"

# Replace an old or partial directory; if another run finished first, keep it.
if [[ -d "$dest" ]]; then
	old="$(mktemp -d "$parent/.old.XXXXXX")"
	mv "$dest" "$old/" 2>/dev/null || true
	rm -rf "$old"
fi
if ! mv -T "$tmp" "$dest" 2>/dev/null; then
	if [[ -f "$marker" && "$(cat "$marker")" == "$sum" ]]; then
		echo "fetch-jars: $dest was completed by a concurrent run"
		exit 0
	fi
	echo "fetch-jars: could not move jars into $dest" >&2
	exit 1
fi
trap - EXIT
echo "fetch-jars: $(find "$dest" -name '*.jar' | wc -l) jars in $dest"
