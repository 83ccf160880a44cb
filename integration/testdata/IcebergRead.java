// IcebergRead reads an Iceberg table with Apache Iceberg's own Java library,
// an independent reader for Tributary's Iceberg sink tests: the JDBC catalog
// (the tables iceberg-go's SQL catalog writes, on SQLite), S3FileIO, and
// iceberg-data's generic reader, which applies equality deletes, position
// deletes and deletion vectors.
//
// Usage: java IcebergRead table=<ns.table> uri=jdbc:sqlite:<path> warehouse=<loc> [catalog property=value ...]
//        java IcebergRead table=<ns.table> catalog-type=hadoop warehouse=<dir>
//
// It prints one JSON object: the schema (name, type, required; the
// identifier fields), every row (decimals as text, dates and times in ISO
// form with microseconds, timestamptz in UTC with a Z, binary as hex), the
// current snapshot's summary, and how many data and delete files the scan
// planned.
import java.math.BigDecimal;
import java.nio.ByteBuffer;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.LocalTime;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.data.IcebergGenerics;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.jdbc.JdbcCatalog;
import org.apache.iceberg.types.Types;

public class IcebergRead {
    static final DateTimeFormatter TS = DateTimeFormatter.ofPattern("yyyy-MM-dd'T'HH:mm:ss.SSSSSS");
    static final DateTimeFormatter TIME = DateTimeFormatter.ofPattern("HH:mm:ss.SSSSSS");

    public static void main(String[] args) throws Exception {
        Map<String, String> props = new HashMap<>();
        for (String kv : args) {
            int i = kv.indexOf('=');
            props.put(kv.substring(0, i), kv.substring(i + 1));
        }
        String name = props.remove("table");
        // catalog-type=hadoop reads a HadoopCatalog (a warehouse directory
        // with no database); otherwise the JDBC catalog at uri.
        org.apache.iceberg.catalog.Catalog cat;
        if ("hadoop".equals(props.remove("catalog-type"))) {
            org.apache.iceberg.hadoop.HadoopCatalog hc = new org.apache.iceberg.hadoop.HadoopCatalog();
            hc.setConf(new org.apache.hadoop.conf.Configuration());
            hc.initialize(props.getOrDefault("catalog-name", "iceberg"), props);
            cat = hc;
        } else {
            JdbcCatalog jc = new JdbcCatalog();
            jc.setConf(new org.apache.hadoop.conf.Configuration());
            jc.initialize(props.getOrDefault("catalog-name", "iceberg"), props);
            cat = jc;
        }
        Table t = cat.loadTable(TableIdentifier.parse(name));
        StringBuilder out = new StringBuilder("{\"schema\":[");
        boolean first = true;
        for (Types.NestedField f : t.schema().columns()) {
            if (!first) out.append(',');
            first = false;
            out.append("{\"name\":").append(str(f.name())).append(",\"type\":").append(str(f.type().toString()))
               .append(",\"required\":").append(f.isRequired()).append('}');
        }
        out.append("],\"identifier\":[");
        first = true;
        for (String f : t.schema().identifierFieldNames()) {
            if (!first) out.append(',');
            first = false;
            out.append(str(f));
        }
        out.append("],\"rows\":[");
        first = true;
        try (CloseableIterable<Record> rows = IcebergGenerics.read(t).build()) {
            for (Record r : rows) {
                if (!first) out.append(',');
                first = false;
                value(out, r);
            }
        }
        out.append("],\"summary\":{");
        Snapshot s = t.currentSnapshot();
        if (s != null) {
            first = true;
            for (Map.Entry<String, String> e : s.summary().entrySet()) {
                if (!first) out.append(',');
                first = false;
                out.append(str(e.getKey())).append(':').append(str(e.getValue()));
            }
        }
        Set<String> data = new HashSet<>(), deletes = new HashSet<>();
        int eq = 0;
        Set<String> eqSeen = new HashSet<>();
        try (CloseableIterable<FileScanTask> tasks = t.newScan().planFiles()) {
            for (FileScanTask task : tasks) {
                data.add(task.file().location());
                for (org.apache.iceberg.DeleteFile d : task.deletes()) {
                    deletes.add(d.location());
                    if (d.content() == org.apache.iceberg.FileContent.EQUALITY_DELETES && eqSeen.add(d.location())) eq++;
                }
            }
        }
        out.append("},\"data_files\":").append(data.size()).append(",\"delete_files\":").append(deletes.size())
           .append(",\"equality_delete_files\":").append(eq).append(",\"snapshots\":");
        int n = 0;
        for (Snapshot ignored : t.snapshots()) n++;
        out.append(n).append('}');
        System.out.println(out);
        if (cat instanceof java.io.Closeable) ((java.io.Closeable) cat).close();
    }

    static String str(String s) {
        StringBuilder b = new StringBuilder("\"");
        for (char c : s.toCharArray()) {
            switch (c) {
                case '"': b.append("\\\""); break;
                case '\\': b.append("\\\\"); break;
                case '\n': b.append("\\n"); break;
                case '\r': b.append("\\r"); break;
                case '\t': b.append("\\t"); break;
                default:
                    if (c < 0x20) b.append(String.format("\\u%04x", (int) c));
                    else b.append(c);
            }
        }
        return b.append('"').toString();
    }

    static void value(StringBuilder out, Object v) {
        if (v == null) {
            out.append("null");
        } else if (v instanceof Record) {
            Record r = (Record) v;
            out.append('{');
            List<Types.NestedField> fs = r.struct().fields();
            for (int i = 0; i < fs.size(); i++) {
                if (i > 0) out.append(',');
                out.append(str(fs.get(i).name())).append(':');
                value(out, r.get(i));
            }
            out.append('}');
        } else if (v instanceof List) {
            out.append('[');
            boolean first = true;
            for (Object e : (List<?>) v) {
                if (!first) out.append(',');
                first = false;
                value(out, e);
            }
            out.append(']');
        } else if (v instanceof Map) {
            out.append('{');
            boolean first = true;
            for (Map.Entry<?, ?> e : ((Map<?, ?>) v).entrySet()) {
                if (!first) out.append(',');
                first = false;
                out.append(str(String.valueOf(e.getKey()))).append(':');
                value(out, e.getValue());
            }
            out.append('}');
        } else if (v instanceof Integer || v instanceof Long || v instanceof Boolean) {
            out.append(v);
        } else if (v instanceof Float || v instanceof Double) {
            double d = ((Number) v).doubleValue();
            if (Double.isNaN(d) || Double.isInfinite(d)) out.append(str(String.valueOf(d)));
            else out.append(v);
        } else if (v instanceof BigDecimal) {
            out.append(str(((BigDecimal) v).toPlainString()));
        } else if (v instanceof LocalDate) {
            out.append(str(v.toString()));
        } else if (v instanceof LocalTime) {
            out.append(str(((LocalTime) v).format(TIME)));
        } else if (v instanceof LocalDateTime) {
            out.append(str(((LocalDateTime) v).format(TS)));
        } else if (v instanceof OffsetDateTime) {
            out.append(str(((OffsetDateTime) v).withOffsetSameInstant(ZoneOffset.UTC).format(TS) + "Z"));
        } else if (v instanceof ByteBuffer) {
            ByteBuffer b = ((ByteBuffer) v).duplicate();
            StringBuilder h = new StringBuilder();
            while (b.hasRemaining()) h.append(String.format("%02x", b.get()));
            out.append(str(h.toString()));
        } else if (v instanceof byte[]) {
            StringBuilder h = new StringBuilder();
            for (byte x : (byte[]) v) h.append(String.format("%02x", x));
            out.append(str(h.toString()));
        } else {
            out.append(str(v.toString()));
        }
    }
}
