package s3

import (
	"time"

	"github.com/tributary-dev/tributary/sdk"
)

// Rotation reasons, the tributary_s3_rotations_total{reason} label (after
// the FileRotationTracker counters Confluent's sink logs at DEBUG).
const (
	rotateFlushSize = "flush_size"      // flush.size records
	rotateInterval  = "rotate_interval" // rotate.interval.ms of record time, or the encoded partition changed
	rotateSchedule  = "scheduled"       // rotate.schedule.interval.ms of wall clock
	rotateWallclock = "wallclock"       // rotate.interval.ms with the Wallclock extractor
	rotateSchema    = "schema"          // schema.compatibility asked for a new file
)

// sinkMetrics are the sink's own series (Confluent's S3 sink has none):
// what it made durable in the store, why files rotated, how long uploads
// take and how many failed. Labelled by topic; the worker adds connector
// and task.
type sinkMetrics struct {
	files, records, bytes, errors *sdk.CounterVec
	rotations                     *sdk.CounterVec
	upload                        *sdk.HistogramVec
}

// uploadBuckets are the upload duration histogram's bounds, in seconds.
var uploadBuckets = []float64{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60}

func newSinkMetrics(reg *sdk.Metrics) *sinkMetrics {
	return &sinkMetrics{
		files:     reg.Counter("tributary_s3_files_committed_total", "Objects made durable in the store (value, keys and headers files).", "topic"),
		records:   reg.Counter("tributary_s3_records_uploaded_total", "Records in the value files made durable in the store.", "topic"),
		bytes:     reg.Counter("tributary_s3_bytes_uploaded_total", "Bytes of the objects made durable in the store.", "topic"),
		errors:    reg.Counter("tributary_s3_upload_errors_total", "Rotations whose upload failed (their records are delivered again).", "topic"),
		rotations: reg.Counter("tributary_s3_rotations_total", "File rotations, by reason: flush_size, rotate_interval, scheduled, wallclock, schema.", "topic", "reason"),
		upload: reg.Histogram("tributary_s3_upload_duration_seconds", "Time to make one object durable in the store (its last part and the completion of a multipart upload, or its one request).",
			uploadBuckets, "topic"),
	}
}

// MetricsDoc lists the families a task registers (their series carry the
// connector and task labels the worker adds too): what Tributary's
// README's list of series is generated from.
func MetricsDoc() []sdk.MetricFamily {
	reg := sdk.NewMetrics()
	newSinkMetrics(reg)
	return reg.Families()
}

func (m *sinkMetrics) rotated(topic, reason string) {
	if m != nil {
		m.rotations.With(topic, reason).Inc()
	}
}

// uploaded records an object made durable in d, with its records (value
// files only) and bytes.
func (m *sinkMetrics) uploaded(topic string, records int, bytes int64, d time.Duration) {
	if m == nil {
		return
	}
	m.files.With(topic).Inc()
	if records > 0 {
		m.records.With(topic).Add(float64(records))
	}
	m.bytes.With(topic).Add(float64(bytes))
	m.upload.With(topic).Observe(d.Seconds())
}

func (m *sinkMetrics) failed(topic string) {
	if m != nil {
		m.errors.With(topic).Inc()
	}
}
