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
# connect-file (the FileStream connectors), connect-basic-auth-extension and
# connect-mirror (MirrorMaker 2's connectors) are not on Maven Central for
# 4.4.0; the pom takes 4.3.1, whose classes
# reference
# org.apache.kafka.common.utils.AppInfoParser (and, in connect-mirror's
# driver, ...utils.Exit), moved to org.apache.kafka.common.utils.internals
# in 4.4. This script recompiles the 4.3.1 sources against the 4.4.0 jars
# with those imports rewritten and
# replaces each jar with NAME-4.3.1-rebuilt-4.4.0.jar. Needs a JDK
# (javac, jar) for that step. Debezium's PostgreSQL connector (3.6.1) needs
# one class Kafka 4.4 moved; see the shim below.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
pom="$here/pom.xml"
dest="${1:-${TRIBUTARY_JARS:-$HOME/.cache/tributary/jars/kafka-4.4.0}}"
marker="$dest/.complete"

# aws-msk-iam-auth and its AWS SDK (integration/msk-iam/pom.xml), for the
# MSK IAM test, in a directory of their own beside dest: their Jackson and
# Netty must not share a class path with Kafka's.
msk_pom="$here/msk-iam/pom.xml"
msk_dest="$(dirname "$dest")/aws-msk-iam-auth"
msk_sum="$(sha256sum "$msk_pom" | cut -d' ' -f1)"
if [[ ! -f "$msk_dest/.complete" || "$(cat "$msk_dest/.complete")" != "$msk_sum" ]] && command -v mvn >/dev/null 2>&1; then
	echo "fetch-jars: resolving $msk_pom into $msk_dest"
	mkdir -p "$(dirname "$dest")"
	msk_tmp="$(mktemp -d "$(dirname "$dest")/.fetch-msk.XXXXXX")"
	if mvn -q -B -f "$msk_pom" dependency:copy-dependencies -DincludeScope=runtime -DoutputDirectory="$msk_tmp"; then
		echo "$msk_sum" >"$msk_tmp/.complete"
		rm -rf "$msk_dest"
		mv -T "$msk_tmp" "$msk_dest" || rm -rf "$msk_tmp"
	else
		rm -rf "$msk_tmp"
		echo "fetch-jars: could not resolve $msk_pom" >&2
		exit 1
	fi
fi

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

# Rebuild connect-file and connect-basic-auth-extension against the 4.4.0
# jars (see the header).
rebuild_for_44() {
	local artifact=$1 version=$2
	local build="$tmp/.$artifact-build"
	mkdir -p "$build/src" "$build/classes"
	mvn -q -B -f "$pom" dependency:copy \
		-Dartifact="org.apache.kafka:$artifact:$version:jar:sources" \
		-DoutputDirectory="$build"
	(cd "$build/src" && jar xf "$build/$artifact-$version-sources.jar")
	find "$build/src" -name '*.java' -exec sed -i \
		's/org\.apache\.kafka\.common\.utils\.\(AppInfoParser\|Exit\)\b/org.apache.kafka.common.utils.internals.\1/g' {} +
	rm "$tmp/$artifact-$version.jar"
	javac -nowarn --release 17 -encoding UTF-8 -cp "$tmp/*" -d "$build/classes" \
		$(find "$build/src" -name '*.java')
	cp -r "$build/src/META-INF" "$build/classes/"
	rm -f "$build/classes/META-INF/MANIFEST.MF"
	jar cf "$tmp/$artifact-$version-rebuilt-4.4.0.jar" -C "$build/classes" .
	rm -rf "$build"
}
cf_version="$(sed -n 's:.*<connect-file.version>\(.*\)</connect-file.version>.*:\1:p' "$pom")"
rebuild_for_44 connect-file "$cf_version"
ba_version="$(sed -n 's:.*<basic-auth-extension.version>\(.*\)</basic-auth-extension.version>.*:\1:p' "$pom")"
rebuild_for_44 connect-basic-auth-extension "$ba_version"
mm_version="$(sed -n 's:.*<mirror-client.version>\(.*\)</mirror-client.version>.*:\1:p' "$pom")"
rebuild_for_44 connect-mirror "$mm_version"

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
