// Package file is the FileStream source and sink connector pair, compatible
// with Apache Kafka's org.apache.kafka.connect.file connectors: the same
// class names and aliases (FileStreamSource, FileStreamSourceConnector,
// FileStreamSink, FileStreamSinkConnector), the same settings (file, topic,
// batch.size; the sink reads the framework's topics) and the same source
// offsets: partition {"filename": path}, offset {"position": bytes}.
//
// The source emits each line of the file (without its terminator) as a
// STRING value, resuming after the last committed position; a missing file
// keeps the task running and polling, as in Kafka. The sink appends each
// record's value as a line and fsyncs on flush, so the offsets it reports
// durable are on disk.
package file
