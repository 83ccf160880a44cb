// Package wire is the compact binary encoding of records that travels inside
// the plugin protocol's RecordBatch messages, plus the encodings of source
// offset lists.
//
// A batch is a sequence of records. Schemas are written in full the first
// time they occur in a batch and referenced by index afterwards, so a batch
// of records sharing one schema pays for it once. Values with a schema are
// written without type tags (the schema says what follows); schemaless
// values carry a one-byte tag. Integers are zig-zag varints, so an int64
// offset round-trips exactly (unlike JSON or protobuf Struct).
//
// Record layout (see encode.go for the byte-level details):
//
//	flags:u8 partition:value offset:value topic:string
//	[kafka_partition:varint] kafka_offset:varint [timestamp:varint]
//	key:(schemaref value) value:(schemaref [length:u32le] value)
//	[headers: n:uvarint (key:string schemaref value)*n]
//
// The value's length is there when the flags say so (Encoder.ValueLengths):
// a decoder that keeps values encoded then cuts them out without walking
// them, and leaves checking them to whoever reads them. Such a value may
// hold at most 16 more array elements and map entries than it has bytes
// (an empty struct takes none), so that reading all of a batch's values
// costs work linear in its size; the Encoder writes a value that holds more
// without its length.
//
// Decoding is defensive: every length is checked against the input, nesting
// is limited and the number of decoded elements is bounded by the input size,
// so a hostile or corrupt batch yields an error, never a panic or an
// unbounded allocation (see FuzzDecode); a value cut by its length yields
// that error when it is read.
//
// The worker can also keep values in this encoding instead of Go values: a
// Decoder with RawValues hands each value over as a *Raw (walked with a
// ValueReader, or decoded), a ValueWriter builds schemaless values piece
// by piece, and an Encoder copies a *Raw into a batch as it is. The
// JsonConverter uses these to go from plugin to Kafka bytes and back
// without building Go values.
//
// Decoded records may share maps (consecutive records with equal source
// partitions share one Partition map) and schemas: treat them as read-only.
//
// The package depends only on sdk/schema so that both the SDK (plugin side)
// and the plugins package (host side) can use it.
package wire
