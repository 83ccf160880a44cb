package s3

import (
	"compress/gzip"
	"fmt"
	"io"
	"strings"

	"github.com/tributary-dev/tributary/sdk/schema"
)

// recordWriter encodes the records of one file into an io.Writer (the
// file's spool). Values match the schema the writer was made with.
type recordWriter interface {
	write(v any) error
	// buffered is the memory the encoder holds that is not yet written.
	buffered() int
	// flushBuffered writes what the encoder holds (for Parquet: closes the
	// row group), to free memory; the file stays open.
	flushBuffered() error
	// close finishes the file (trailers, footers).
	close() error
}

// format makes record writers for one format.class.
type format interface {
	ext() string
	newWriter(w io.Writer, s *schema.Schema) (recordWriter, error)
}

// newFormat returns the format named by a format class.
func newFormat(class string, c *Config) (format, error) {
	name, ok := formatName(class)
	if !ok {
		return nil, fmt.Errorf("s3: unknown format class %q", class)
	}
	gz := strings.EqualFold(c.Compression, "gzip")
	switch name {
	case "json":
		return jsonFormat{gzip: gz, level: int(c.CompressLevel), decimal: strings.ToUpper(c.DecimalFmt)}, nil
	case "bytearray":
		return byteArrayFormat{gzip: gz, level: int(c.CompressLevel), extension: c.ByteArrayExt, sep: []byte(c.ByteArraySep)}, nil
	case "avro":
		return avroFormat{codec: strings.ToLower(c.AvroCodec)}, nil
	case "parquet":
		return newParquetFormat(strings.ToLower(c.ParquetCodec))
	}
	return nil, fmt.Errorf("s3: unknown format class %q", class)
}

// lineWriter is the shared body of the JSON and ByteArray writers: records
// rendered into a small buffer, optionally gzipped.
type lineWriter struct {
	out io.Writer
	gz  *gzip.Writer
	buf []byte
}

func newLineWriter(w io.Writer, gz bool, level int) (*lineWriter, error) {
	lw := &lineWriter{out: w}
	if gz {
		if level < 0 {
			level = gzip.DefaultCompression
		}
		z, err := gzip.NewWriterLevel(w, level)
		if err != nil {
			return nil, fmt.Errorf("s3: gzip: %w", err)
		}
		lw.gz, lw.out = z, z
	}
	return lw, nil
}

const lineFlush = 64 << 10

func (lw *lineWriter) emit() error {
	if len(lw.buf) < lineFlush {
		return nil
	}
	return lw.flushBuffered()
}

func (lw *lineWriter) buffered() int { return cap(lw.buf) }

func (lw *lineWriter) flushBuffered() error {
	if len(lw.buf) > 0 {
		if _, err := lw.out.Write(lw.buf); err != nil {
			return err
		}
		lw.buf = lw.buf[:0]
	}
	if lw.gz != nil {
		return lw.gz.Flush()
	}
	return nil
}

func (lw *lineWriter) close() error {
	if len(lw.buf) > 0 {
		if _, err := lw.out.Write(lw.buf); err != nil {
			return err
		}
		lw.buf = nil
	}
	if lw.gz != nil {
		return lw.gz.Close()
	}
	return nil
}

// jsonFormat is Confluent's JsonFormat: one JSON value per line, rendered
// as JsonConverter with schemas.enable=false renders it.
type jsonFormat struct {
	gzip    bool
	level   int
	decimal string
}

func (f jsonFormat) ext() string {
	if f.gzip {
		return ".json.gz"
	}
	return ".json"
}

type jsonWriter struct {
	*lineWriter
	s       *schema.Schema
	decimal string
}

func (f jsonFormat) newWriter(w io.Writer, s *schema.Schema) (recordWriter, error) {
	lw, err := newLineWriter(w, f.gzip, f.level)
	if err != nil {
		return nil, err
	}
	return &jsonWriter{lineWriter: lw, s: s, decimal: f.decimal}, nil
}

func (w *jsonWriter) write(v any) error {
	var err error
	if w.buf, err = renderJSON(w.buf, w.s, v, w.decimal); err != nil {
		return err
	}
	w.buf = append(w.buf, '\n')
	return w.emit()
}

// byteArrayFormat is Confluent's ByteArrayFormat: the raw bytes of each
// value (a BYTES or STRING value) followed by the separator.
type byteArrayFormat struct {
	gzip      bool
	level     int
	extension string
	sep       []byte
}

func (f byteArrayFormat) ext() string {
	if f.gzip {
		return f.extension + ".gz"
	}
	return f.extension
}

type byteArrayWriter struct {
	*lineWriter
	sep []byte
}

func (f byteArrayFormat) newWriter(w io.Writer, _ *schema.Schema) (recordWriter, error) {
	lw, err := newLineWriter(w, f.gzip, f.level)
	if err != nil {
		return nil, err
	}
	return &byteArrayWriter{lineWriter: lw, sep: f.sep}, nil
}

func (w *byteArrayWriter) write(v any) error {
	switch x := v.(type) {
	case []byte:
		w.buf = append(w.buf, x...)
	case string:
		w.buf = append(w.buf, x...)
	case nil:
	default:
		return fmt.Errorf("s3: ByteArrayFormat needs BYTES values (use value.converter=org.apache.kafka.connect.converters.ByteArrayConverter), got %T", v)
	}
	w.buf = append(w.buf, w.sep...)
	return w.emit()
}
