#!/usr/bin/env bash
# fetch-iceberg-jars.sh downloads the Apache Iceberg 1.12 jars listed in
# integration/iceberg/pom.xml (Iceberg's Java library as an independent
# reader, its JDBC catalog on SQLite, S3FileIO, and Apache's Kafka Connect
# sink) from Maven Central into a cache directory, for the Iceberg sink's
# tests (integration/harness: IcebergJarsDir). Never committed.
#
# Usage: bash integration/fetch-iceberg-jars.sh [DIR]
#   DIR defaults to ${TRIBUTARY_ICEBERG_JARS:-$HOME/.cache/tributary/jars/iceberg-1.12.0}.
#
# Idempotent as fetch-jars.sh: a marker holding the pom's checksum is written
# last, and the directory is moved into place in one rename.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
pom="$here/iceberg/pom.xml"
dest="${1:-${TRIBUTARY_ICEBERG_JARS:-$HOME/.cache/tributary/jars/iceberg-1.12.0}}"
marker="$dest/.complete"

sum="$(cat "$pom" "${BASH_SOURCE[0]}" | sha256sum | cut -d' ' -f1)"
if [[ -f "$marker" && "$(cat "$marker")" == "$sum" ]]; then
	echo "fetch-iceberg-jars: $dest is up to date"
	exit 0
fi
for tool in java mvn; do
	if ! command -v "$tool" >/dev/null 2>&1; then
		echo "fetch-iceberg-jars: $tool not found on PATH (install a JDK 17+ and Maven)" >&2
		exit 1
	fi
done

parent="$(dirname "$dest")"
mkdir -p "$parent"
tmp="$(mktemp -d "$parent/.fetch-iceberg.XXXXXX")"
trap 'rm -rf "$tmp"' EXIT
echo "fetch-iceberg-jars: resolving $pom into $dest"
mvn -q -B -f "$pom" dependency:copy-dependencies -DincludeScope=runtime -DoutputDirectory="$tmp"
echo "$sum" >"$tmp/.complete"
if [[ -d "$dest" ]]; then
	old="$(mktemp -d "$parent/.old.XXXXXX")"
	mv "$dest" "$old/" 2>/dev/null || true
	rm -rf "$old"
fi
if ! mv -T "$tmp" "$dest" 2>/dev/null; then
	if [[ -f "$marker" && "$(cat "$marker")" == "$sum" ]]; then
		echo "fetch-iceberg-jars: $dest was completed by a concurrent run"
		exit 0
	fi
	echo "fetch-iceberg-jars: could not move jars into $dest" >&2
	exit 1
fi
trap - EXIT
echo "fetch-iceberg-jars: $(find "$dest" -name '*.jar' | wc -l) jars in $dest"
