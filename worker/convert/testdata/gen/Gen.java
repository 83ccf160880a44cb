// Gen writes the golden outputs of Kafka's JsonConverter used by
// worker/convert's tests. Regenerate with `go generate ./worker/convert`
// (see gen_test.go) or by hand:
//
//	CP=$(ls ~/.cache/tributary/jars/kafka-4.4.0/*.jar | tr '\n' :)
//	javac -d /tmp/gen -cp "$CP" Gen.java && java -cp "/tmp/gen:$CP" Gen ../golden
//
// Each case is written as <name>.json (schemas.enable=true, decimal.format
// BASE64), <name>.numeric.json (decimal.format=NUMERIC) and, for schemaless
// cases, <name>.noschema.json (schemas.enable=false). The Go test builds the
// same schema and value under the same name.
import java.math.BigDecimal;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.*;

import org.apache.kafka.connect.data.*;
import org.apache.kafka.connect.json.JsonConverter;

public class Gen {
    static JsonConverter conv(boolean schemas, String decimalFormat) {
        JsonConverter c = new JsonConverter();
        Map<String, Object> cfg = new HashMap<>();
        cfg.put("schemas.enable", Boolean.toString(schemas));
        cfg.put("decimal.format", decimalFormat);
        c.configure(cfg, false);
        return c;
    }

    static final class Case {
        final String name; final Schema schema; final Object value;
        Case(String n, Schema s, Object v) { name = n; schema = s; value = v; }
    }

    public static void main(String[] args) throws Exception {
        Path out = Path.of(args[0]);
        Files.createDirectories(out);
        List<Case> cases = new ArrayList<>();
        cases.add(new Case("int8", Schema.INT8_SCHEMA, (byte) -12));
        cases.add(new Case("int16", Schema.INT16_SCHEMA, (short) 3000));
        cases.add(new Case("int32", Schema.INT32_SCHEMA, 123456));
        cases.add(new Case("int64", Schema.INT64_SCHEMA, 9007199254740993L));
        cases.add(new Case("float32", Schema.FLOAT32_SCHEMA, 1.5f));
        cases.add(new Case("float64", Schema.FLOAT64_SCHEMA, -2.25e-7));
        cases.add(new Case("float64_big", Schema.FLOAT64_SCHEMA, 1.0e21));
        cases.add(new Case("float64_int", Schema.FLOAT64_SCHEMA, 100.0));
        cases.add(new Case("boolean", Schema.BOOLEAN_SCHEMA, true));
        cases.add(new Case("string", Schema.STRING_SCHEMA, "héllo \"world\"\n\t<>&\u2028"));
        cases.add(new Case("bytes", Schema.BYTES_SCHEMA, new byte[]{0, 1, 2, (byte) 0xfe, (byte) 0xff}));
        cases.add(new Case("optional_null", Schema.OPTIONAL_STRING_SCHEMA, null));
        cases.add(new Case("optional_int32", Schema.OPTIONAL_INT32_SCHEMA, 7));
        cases.add(new Case("default_int32", SchemaBuilder.int32().defaultValue(42).build(), 5));
        cases.add(new Case("default_null", SchemaBuilder.string().optional().defaultValue("dflt").build(), null));
        cases.add(new Case("named", SchemaBuilder.string().name("com.example.Name").version(3).doc("a doc").build(), "x"));
        cases.add(new Case("params", SchemaBuilder.string().parameter("a", "1").parameter("b", "2").build(), "p"));
        Schema inner = SchemaBuilder.struct().name("com.example.Inner").optional()
                .field("x", Schema.INT32_SCHEMA).field("y", Schema.OPTIONAL_STRING_SCHEMA).build();
        Schema outer = SchemaBuilder.struct().name("com.example.Outer").version(2).doc("outer doc")
                .field("id", Schema.INT64_SCHEMA)
                .field("name", Schema.STRING_SCHEMA)
                .field("score", SchemaBuilder.float64().optional().build())
                .field("flag", SchemaBuilder.bool().defaultValue(false).build())
                .field("inner", inner)
                .field("tags", SchemaBuilder.array(Schema.STRING_SCHEMA).build())
                .field("missing", Schema.OPTIONAL_INT16_SCHEMA)
                .build();
        Struct innerV = new Struct(inner).put("x", 1).put("y", "why");
        Struct outerV = new Struct(outer).put("id", 77L).put("name", "n").put("score", 0.5)
                .put("inner", innerV).put("tags", List.of("a", "b"));
        cases.add(new Case("struct_nested", outer, outerV));
        cases.add(new Case("array_int32", SchemaBuilder.array(Schema.INT32_SCHEMA).build(), List.of(1, 2, 3)));
        cases.add(new Case("array_empty", SchemaBuilder.array(Schema.STRING_SCHEMA).optional().build(), List.of()));
        cases.add(new Case("array_of_optional", SchemaBuilder.array(Schema.OPTIONAL_INT64_SCHEMA).build(), Arrays.asList(1L, null, 3L)));
        Map<String, Integer> sm = new LinkedHashMap<>();
        sm.put("a", 1); sm.put("b", 2); sm.put("c", 3);
        cases.add(new Case("map_string", SchemaBuilder.map(Schema.STRING_SCHEMA, Schema.INT32_SCHEMA).build(), sm));
        Map<Integer, String> im = new LinkedHashMap<>();
        im.put(-1, "minus"); im.put(1, "one"); im.put(2, "two");
        cases.add(new Case("map_int", SchemaBuilder.map(Schema.INT32_SCHEMA, Schema.STRING_SCHEMA).build(), im));
        Schema dec = Decimal.schema(2);
        cases.add(new Case("decimal", dec, new BigDecimal("12345.67")));
        cases.add(new Case("decimal_negative", Decimal.schema(3), new BigDecimal("-0.001")));
        cases.add(new Case("decimal_big", Decimal.schema(0), new BigDecimal("123456789012345678901234567890")));
        cases.add(new Case("decimal_optional_null", Decimal.builder(2).optional().build(), null));
        cases.add(new Case("date", org.apache.kafka.connect.data.Date.SCHEMA, new java.util.Date(19000L * 86400000L)));
        cases.add(new Case("time", Time.SCHEMA, new java.util.Date(13L * 3600000L + 14 * 60000 + 15123)));
        cases.add(new Case("timestamp", Timestamp.SCHEMA, new java.util.Date(1700000000123L)));
        cases.add(new Case("timestamp_default", Timestamp.builder().defaultValue(new java.util.Date(86400000L)).build(), new java.util.Date(0L)));
        Schema logical = SchemaBuilder.struct().name("com.example.Logical")
                .field("amount", Decimal.schema(2))
                .field("day", org.apache.kafka.connect.data.Date.builder().optional().build())
                .field("at", Timestamp.SCHEMA)
                .build();
        cases.add(new Case("struct_logical", logical, new Struct(logical)
                .put("amount", new BigDecimal("-9.99")).put("at", new java.util.Date(1234567L))));
        Schema mapOfStruct = SchemaBuilder.map(Schema.INT64_SCHEMA, inner).build();
        Map<Long, Struct> ms = new LinkedHashMap<>();
        ms.put(5L, new Struct(inner).put("x", 5));
        cases.add(new Case("map_int64_struct", mapOfStruct, ms));

        JsonConverter base64 = conv(true, "BASE64");
        JsonConverter numeric = conv(true, "NUMERIC");
        for (Case c : cases) {
            write(out.resolve(c.name + ".json"), base64.fromConnectData("t", c.schema, c.value));
            write(out.resolve(c.name + ".numeric.json"), numeric.fromConnectData("t", c.schema, c.value));
        }

        // Schemaless values.
        JsonConverter noSchema = conv(false, "BASE64");
        Map<String, Object> obj = new LinkedHashMap<>();
        obj.put("a", 1L); obj.put("b", "two"); obj.put("c", Arrays.asList(true, null, 2.5));
        Map<String, Object> nested = new LinkedHashMap<>();
        nested.put("k", -3L);
        obj.put("d", nested);
        Map<String, Object> less = new LinkedHashMap<>();
        less.put("s", "v");
        less.put("n", 7L);
        List<Case> schemaless = List.of(
                new Case("sl_object", null, obj),
                new Case("sl_string", null, "just a string"),
                new Case("sl_int", null, 42L),
                new Case("sl_double", null, 3.25),
                new Case("sl_bool", null, false),
                new Case("sl_array", null, Arrays.asList(1L, "x", null)),
                new Case("sl_bytes", null, new byte[]{9, 8, 7}),
                new Case("sl_small", null, less));
        for (Case c : schemaless) {
            write(out.resolve(c.name + ".noschema.json"), noSchema.fromConnectData("t", null, c.value));
            write(out.resolve(c.name + ".json"), base64.fromConnectData("t", null, c.value));
        }
    }

    static void write(Path p, byte[] b) throws Exception {
        Files.write(p, b == null ? new byte[0] : b);
    }
}
