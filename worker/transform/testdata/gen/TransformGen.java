// TransformGen writes the golden outputs of Kafka Connect 4.4's
// transformations and predicates (connect-transforms) and Debezium 3.6.1's
// (debezium-connect-plugins) used by worker/transform's golden_test.go.
// Regenerate from the repository root with
//
//	go test ./integration -run TestTransformGoldens -args -rewrite
//
// which compiles and runs this program with the jars of
// integration/fetch-jars.sh, or by hand:
//
//	CP=$(ls ~/.cache/tributary/jars/kafka-4.4.0/*.jar | tr '\n' :)
//	javac -d /tmp/transformgen -cp "$CP" TransformGen.java &&
//	java -Duser.timezone=UTC -Duser.language=en -Duser.country=US \
//	    -cp "/tmp/transformgen:$CP" TransformGen ../cases.json ../golden/transforms.jsonl
//
// The time zone and locale are pinned because SimpleDateFormat (Cast's
// dates as strings) uses the JVM's; Tributary assumes UTC and en_US.
//
// cases.json holds named records and cases. A record is
// {"topic", "partition", "offset", "timestamp", "keySchema", "key",
// "valueSchema", "value", "headers": [{"key", "schema", "value"}]}; a case is
// {"name", "mode": "sink"|"source", "config": {connector settings:
// transforms=…, transforms.<alias>.type=…, predicates=…}, "records": [names]}.
// Each case's chain is built as Kafka Connect builds it from those settings
// (TransformationStage: a stage applies when it has no predicate or when
// predicate.test(record) differs from negate) and every named record is run
// through it. Each output line is {"case", "record", and either "configError"
// (configure threw), "error" (apply threw: its class and message), "dropped":
// true, or "out": the record}.
//
// Schemas are {"type", "optional", "name", "version", "doc", "parameters",
// "default", "fields": [{"name", "schema"}], "keySchema", "valueSchema"} (absent
// members are unset); values are one-member objects naming their type:
// {"int8": "1"} … {"int64": "…"} (decimal strings), {"float32": "1.5"},
// {"float64": "…"} (Java's toString), {"boolean": true}, {"string": "…"},
// {"bytes": base64}, {"decimal": unscaled, "scale": n}, {"date": epoch
// millis} (any java.util.Date), {"array": [...]}, {"map": [[k, v], ...]}
// sorted by the encoded key, {"struct": [[field, value], ...]} (raw values,
// without defaults); null is null. Inputs use the same form; a decimal's
// scale comes from its schema.
import java.math.BigDecimal;
import java.math.BigInteger;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.*;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import org.apache.kafka.common.record.TimestampType;
import org.apache.kafka.connect.connector.ConnectRecord;
import org.apache.kafka.connect.data.*;
import org.apache.kafka.connect.header.ConnectHeaders;
import org.apache.kafka.connect.header.Header;
import org.apache.kafka.connect.sink.SinkRecord;
import org.apache.kafka.connect.source.SourceRecord;
import org.apache.kafka.connect.transforms.Transformation;
import org.apache.kafka.connect.transforms.predicates.Predicate;

public class TransformGen {
    static final JsonNodeFactory F = JsonNodeFactory.instance;
    static final ObjectMapper M = new ObjectMapper();

    // ---- decoding ----

    static Schema schema(JsonNode n) {
        if (n == null || n.isNull()) return null;
        String type = n.get("type").asText();
        SchemaBuilder b;
        switch (type) {
            case "array": b = SchemaBuilder.array(schema(n.get("valueSchema"))); break;
            case "map": b = SchemaBuilder.map(schema(n.get("keySchema")), schema(n.get("valueSchema"))); break;
            case "struct":
                b = SchemaBuilder.struct();
                for (JsonNode f : n.get("fields")) b.field(f.get("name").asText(), schema(f.get("schema")));
                break;
            default: b = SchemaBuilder.type(Schema.Type.valueOf(type.toUpperCase(Locale.ROOT)));
        }
        if (n.path("optional").asBoolean(false)) b.optional();
        if (n.hasNonNull("name")) b.name(n.get("name").asText());
        if (n.hasNonNull("version")) b.version(n.get("version").asInt());
        if (n.hasNonNull("doc")) b.doc(n.get("doc").asText());
        if (n.hasNonNull("parameters")) {
            n.get("parameters").fields().forEachRemaining(e -> b.parameter(e.getKey(), e.getValue().asText()));
        }
        if (n.hasNonNull("default")) b.defaultValue(value(b, n.get("default")));
        return b.build();
    }

    static Object value(Schema s, JsonNode n) {
        if (n == null || n.isNull()) return null;
        String kind = n.fieldNames().next();
        JsonNode v = n.get(kind);
        switch (kind) {
            case "int8": return Byte.parseByte(v.asText());
            case "int16": return Short.parseShort(v.asText());
            case "int32": return Integer.parseInt(v.asText());
            case "int64": return Long.parseLong(v.asText());
            case "float32": return Float.parseFloat(v.asText());
            case "float64": return Double.parseDouble(v.asText());
            case "boolean": return v.asBoolean();
            case "string": return v.asText();
            case "bytes": return Base64.getDecoder().decode(v.asText());
            case "decimal": {
                int scale = s != null && s.parameters() != null ? Integer.parseInt(s.parameters().get(Decimal.SCALE_FIELD)) : n.path("scale").asInt();
                return new BigDecimal(new BigInteger(v.asText()), scale);
            }
            case "date": return new java.util.Date(v.asLong());
            case "array": {
                List<Object> l = new ArrayList<>();
                for (JsonNode e : v) l.add(value(s == null ? null : s.valueSchema(), e));
                return l;
            }
            case "map": {
                Map<Object, Object> m = new HashMap<>();
                for (JsonNode e : v) m.put(value(s == null ? null : s.keySchema(), e.get(0)), value(s == null ? null : s.valueSchema(), e.get(1)));
                return m;
            }
            case "struct": {
                Struct st = new Struct(s);
                for (JsonNode e : v) {
                    String name = e.get(0).asText();
                    Object fv = value(s.field(name).schema(), e.get(1));
                    if (fv != null) st.put(name, fv); // a required field with a default may stay unset

                }
                return st;
            }
        }
        throw new IllegalArgumentException("unknown value kind " + kind);
    }

    static ConnectHeaders headers(JsonNode n) {
        ConnectHeaders hs = new ConnectHeaders();
        if (n == null) return hs;
        for (JsonNode h : n) {
            Schema s = schema(h.get("schema"));
            hs.add(h.get("key").asText(), new SchemaAndValue(s, value(s, h.get("value"))));
        }
        return hs;
    }

    static ConnectRecord<?> record(JsonNode n, boolean sink) {
        Schema ks = schema(n.get("keySchema")), vs = schema(n.get("valueSchema"));
        Object k = value(ks, n.get("key")), v = value(vs, n.get("value"));
        Long ts = n.hasNonNull("timestamp") ? n.get("timestamp").asLong() : null;
        String topic = n.get("topic").asText();
        if (sink) {
            return new SinkRecord(topic, n.path("partition").asInt(0), ks, k, vs, v, n.path("offset").asLong(0), ts,
                    ts == null ? TimestampType.NO_TIMESTAMP_TYPE : TimestampType.CREATE_TIME, headers(n.get("headers")));
        }
        Integer partition = n.hasNonNull("partition") ? n.get("partition").asInt() : null;
        return new SourceRecord(Map.of("p", "x"), Map.of("o", 1L), topic, partition, ks, k, vs, v, ts, headers(n.get("headers")));
    }

    // ---- encoding ----

    static JsonNode enc(Schema s) {
        if (s == null) return F.nullNode();
        ObjectNode o = F.objectNode();
        o.put("type", s.type().getName());
        if (s.isOptional()) o.put("optional", true);
        if (s.name() != null) o.put("name", s.name());
        if (s.version() != null) o.put("version", s.version());
        if (s.doc() != null) o.put("doc", s.doc());
        if (s.parameters() != null && !s.parameters().isEmpty()) {
            ObjectNode p = o.putObject("parameters");
            new TreeMap<>(s.parameters()).forEach(p::put);
        }
        if (s.defaultValue() != null) o.set("default", enc(s.defaultValue()));
        switch (s.type()) {
            case STRUCT: {
                ArrayNode fs = o.putArray("fields");
                for (Field f : s.fields()) {
                    ObjectNode fo = fs.addObject();
                    fo.put("name", f.name());
                    fo.set("schema", enc(f.schema()));
                }
                break;
            }
            case MAP: o.set("keySchema", enc(s.keySchema())); o.set("valueSchema", enc(s.valueSchema())); break;
            case ARRAY: o.set("valueSchema", enc(s.valueSchema())); break;
            default:
        }
        return o;
    }

    static JsonNode enc(Object v) {
        if (v == null) return F.nullNode();
        ObjectNode o = F.objectNode();
        if (v instanceof Byte) o.put("int8", v.toString());
        else if (v instanceof Short) o.put("int16", v.toString());
        else if (v instanceof Integer) o.put("int32", v.toString());
        else if (v instanceof Long) o.put("int64", v.toString());
        else if (v instanceof Float) o.put("float32", v.toString());
        else if (v instanceof Double) o.put("float64", v.toString());
        else if (v instanceof Boolean) o.put("boolean", (Boolean) v);
        else if (v instanceof String) o.put("string", (String) v);
        else if (v instanceof byte[]) o.put("bytes", Base64.getEncoder().encodeToString((byte[]) v));
        else if (v instanceof ByteBuffer) {
            ByteBuffer b = ((ByteBuffer) v).duplicate();
            byte[] a = new byte[b.remaining()];
            b.get(a);
            o.put("bytes", Base64.getEncoder().encodeToString(a));
        } else if (v instanceof BigDecimal) {
            o.put("decimal", ((BigDecimal) v).unscaledValue().toString());
            o.put("scale", ((BigDecimal) v).scale());
        } else if (v instanceof java.util.Date) o.put("date", ((java.util.Date) v).getTime());
        else if (v instanceof List) {
            ArrayNode a = o.putArray("array");
            for (Object e : (List<?>) v) a.add(enc(e));
        } else if (v instanceof Map) {
            List<ArrayNode> entries = new ArrayList<>();
            for (Map.Entry<?, ?> e : ((Map<?, ?>) v).entrySet()) {
                ArrayNode pair = F.arrayNode();
                pair.add(enc(e.getKey()));
                pair.add(enc(e.getValue()));
                entries.add(pair);
            }
            entries.sort(Comparator.comparing(JsonNode::toString));
            ArrayNode a = o.putArray("map");
            entries.forEach(a::add);
        } else if (v instanceof Struct) {
            Struct st = (Struct) v;
            ArrayNode a = o.putArray("struct");
            for (Field f : st.schema().fields()) {
                ArrayNode pair = a.addArray();
                pair.add(f.name());
                pair.add(enc(st.getWithoutDefault(f.name())));
            }
        } else {
            o.put("unknown", v.getClass().getName());
        }
        return o;
    }

    static JsonNode enc(ConnectRecord<?> r) {
        ObjectNode o = F.objectNode();
        o.put("topic", r.topic());
        if (r.kafkaPartition() != null) o.put("partition", r.kafkaPartition());
        if (r instanceof SinkRecord) o.put("offset", ((SinkRecord) r).kafkaOffset());
        if (r.timestamp() != null) o.put("timestamp", r.timestamp());
        o.set("keySchema", enc(r.keySchema()));
        o.set("key", enc(r.key()));
        o.set("valueSchema", enc(r.valueSchema()));
        o.set("value", enc(r.value()));
        ArrayNode hs = o.putArray("headers");
        for (Header h : r.headers()) {
            ObjectNode ho = hs.addObject();
            ho.put("key", h.key());
            ho.set("schema", enc(h.schema()));
            ho.set("value", enc(h.value()));
        }
        return o;
    }

    static ObjectNode error(Throwable e) {
        ObjectNode o = F.objectNode();
        o.put("class", e.getClass().getName());
        // Objects printed with their identity hash differ from run to run.
        String msg = e.getMessage();
        o.put("message", msg == null ? null : msg.replaceAll("@[0-9a-f]{1,8}\\b", "@<hash>"));
        return o;
    }

    // ---- the chain ----

    @SuppressWarnings("rawtypes")
    static final class Stage {
        Transformation t;
        Predicate p;
        boolean negate;
    }

    static Map<String, String> withPrefix(JsonNode config, String prefix) {
        Map<String, String> out = new HashMap<>();
        config.fields().forEachRemaining(e -> {
            if (e.getKey().startsWith(prefix)) out.put(e.getKey().substring(prefix.length()), e.getValue().asText());
        });
        return out;
    }

    @SuppressWarnings({"unchecked", "rawtypes"})
    static List<Stage> chain(JsonNode config) throws Exception {
        List<Stage> stages = new ArrayList<>();
        String aliases = config.path("transforms").asText("").trim();
        if (aliases.isEmpty()) return stages;
        for (String alias : aliases.split("\\s*,\\s*")) {
            Map<String, String> props = withPrefix(config, "transforms." + alias + ".");
            String predicate = props.remove("predicate");
            String negate = props.remove("negate");
            Stage s = new Stage();
            s.t = (Transformation) Class.forName(props.get("type")).getDeclaredConstructor().newInstance();
            s.t.configure(props);
            if (predicate != null) {
                Map<String, String> pprops = withPrefix(config, "predicates." + predicate + ".");
                s.p = (Predicate) Class.forName(pprops.get("type")).getDeclaredConstructor().newInstance();
                s.p.configure(pprops);
                s.negate = negate != null && Boolean.parseBoolean(negate);
            }
            stages.add(s);
        }
        return stages;
    }

    @SuppressWarnings({"unchecked", "rawtypes"})
    public static void main(String[] args) throws Exception {
        JsonNode root = M.readTree(Files.readString(Path.of(args[0])));
        JsonNode records = root.get("records");
        StringBuilder out = new StringBuilder();
        for (JsonNode c : root.get("cases")) {
            String name = c.get("name").asText();
            boolean sink = !"source".equals(c.path("mode").asText("sink"));
            List<Stage> stages;
            try {
                stages = chain(c.get("config"));
            } catch (Exception e) {
                ObjectNode line = F.objectNode();
                line.put("case", name);
                line.set("configError", error(e));
                out.append(M.writeValueAsString(line)).append('\n');
                continue;
            }
            for (JsonNode rn : c.get("records")) {
                ObjectNode line = F.objectNode();
                line.put("case", name);
                line.put("record", rn.asText());
                ConnectRecord r = record(records.get(rn.asText()), sink);
                try {
                    for (Stage s : stages) {
                        if (s.p == null || s.negate ^ s.p.test(r)) {
                            r = s.t.apply(r);
                            if (r == null) break;
                        }
                    }
                    if (r == null) line.put("dropped", true);
                    else line.set("out", enc(r));
                } catch (Exception e) {
                    line.set("error", error(e));
                }
                out.append(M.writeValueAsString(line)).append('\n');
            }
        }
        Path dst = Path.of(args[1]);
        Files.createDirectories(dst.getParent());
        Files.writeString(dst, out.toString(), StandardCharsets.UTF_8);
    }
}
