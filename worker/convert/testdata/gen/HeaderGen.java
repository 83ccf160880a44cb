// HeaderGen writes the golden outputs of Kafka Connect's SimpleHeaderConverter
// (org.apache.kafka.connect.data.Values.parseString and convertToString) used
// by worker/convert's simple_test.go. Regenerate by hand, from this directory:
//
//	CP=$(ls ~/.cache/tributary/jars/kafka-4.4.0/*.jar | tr '\n' :)
//	javac -d /tmp/headergen -cp "$CP" HeaderGen.java &&
//	java -Duser.timezone=UTC -Duser.language=en -Duser.country=US \
//	    -cp "/tmp/headergen:$CP" HeaderGen ../golden
//
// (the jars come from integration/fetch-jars.sh). The time zone and locale
// are pinned because Values parses and formats dates with SimpleDateFormat in
// the JVM's default ones; Tributary assumes UTC, as Kafka Connect workers
// usually run.
//
// It writes two files of JSON lines:
//
//   - simpleheader_parse.jsonl: for each input string of PARSE, what
//     toConnectHeader returns (schema and value, or the error), the string
//     fromConnectHeader writes for that value ("out") and whether parsing
//     "out" again gives back an equal schema and value ("roundTrip").
//   - simpleheader_write.jsonl: for each named value of write(), the string
//     fromConnectHeader writes. simple_test.go builds the same values under
//     the same names.
//
// With "-" instead of a directory it reads header values from standard input,
// one a line in standard base64, and writes one parse result a line to
// standard output: an oracle for comparing Tributary's parser with Kafka's
// on many inputs (simple_test.go's TestSimpleHeaderOracle).
//
// Schemas are written as {"type", "optional", "name", "version",
// "parameters", "keySchema", "valueSchema"} (absent members are null or
// unset); values as one-member objects naming the Java class:
// {"int8":"1"}, {"float32":"1.5","bits":"3fc00000"}, {"decimal":"1E+400",
// "unscaled":"1","scale":-400}, {"date":"<epoch millis>"} (any
// java.util.Date), {"string":...}, {"boolean":...}, {"bytes":<base64>},
// {"array":[...]}, {"map":[[key,value],...]} in the map's order,
// {"struct":[[field,value],...]}; null is null.
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.*;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import org.apache.kafka.connect.data.*;
import org.apache.kafka.connect.storage.SimpleHeaderConverter;

public class HeaderGen {
    static final JsonNodeFactory F = JsonNodeFactory.instance;
    static final ObjectMapper M = new ObjectMapper();
    static final SimpleHeaderConverter CONV = new SimpleHeaderConverter();

    // PARSE lists {name, input} pairs. Keep names unique and stable: the Go
    // test reports mismatches by name.
    static final String[][] PARSE = {
        // Strings, nulls, booleans.
        {"empty", ""},
        {"null", "null"},
        {"null_upper", "NULL"},
        {"null_spaced", " null "},
        {"true", "true"},
        {"false", "false"},
        {"true_upper", "TRUE"},
        {"true_spaced", " true\t"},
        {"true_trailing_brace", "true}"},
        {"truex", "truex"},
        {"blank", "   "},
        {"word", "hello"},
        {"words", "hello world"},
        {"word_spaced", " hello "},
        {"word_comma", "hello, world"},
        {"word_colon", "a:b"},
        {"unicode_text", "héllo wörld ✓"},
        // Integers: the smallest type that holds them.
        {"zero", "0"},
        {"minus_zero", "-0"},
        {"plus", "+5"},
        {"int8_max", "127"},
        {"int16_min_plus", "128"},
        {"int8_min", "-128"},
        {"int16_neg", "-129"},
        {"int16_max", "32767"},
        {"int32_small", "32768"},
        {"int32_max", "2147483647"},
        {"int64_small", "2147483648"},
        {"int64_max", "9223372036854775807"},
        {"int64_min", "-9223372036854775808"},
        {"above_int64", "9223372036854775808"},
        {"below_int64", "-9223372036854775809"},
        {"ten_pow_19", "10000000000000000000"},
        {"huge_int", "123456789012345678901234567890"},
        {"leading_zeros", "00012"},
        {"int_spaced", " 42 "},
        {"int_tab_newline", "\t42\n"},
        {"int_comma", "1,2"},
        {"int_colon", "12:30"},
        {"int_brace", "7}"},
        {"int_suffix", "12abc"},
        {"hex", "0x1F"},
        {"underscore", "1_000"},
        {"arabic_indic_digit", "\u0663"},
        {"fullwidth_digits", "\uff11\uff12"},
        // Floating point and decimals.
        {"float_half", "1.5"},
        {"float_tenth", "0.1"},
        {"float_pi", "3.141592653589793"},
        {"float_whole", "1.0"},
        {"float_neg_whole", "-2.000"},
        {"exp_int", "1e3"},
        {"exp_int_plus", "1E+3"},
        {"exp_big", "1e20"},
        {"exp_double", "1.5e300"},
        {"exp_decimal", "1e400"},
        {"exp_decimal_neg", "-1e400"},
        {"exp_tiny", "1e-50"},
        {"exp_tiny_neg", "-1e-50"},
        {"exp_tinier", "1e-400"},
        {"exp_overflow", "1e2147483648"},
        {"exp_missing", "1e"},
        {"trailing_dot", "1."},
        {"leading_dot", ".5"},
        {"minus_leading_dot", "-.5"},
        {"two_dots", "1.2.3"},
        {"decimal_frac_big", "1" + "0".repeat(400) + ".5"},
        {"nan", "NaN"},
        {"infinity", "Infinity"},
        {"minus_infinity", "-Infinity"},
        {"minus", "-"},
        // Dates, times and timestamps (ISO-8601, UTC, milliseconds, 'Z').
        {"date", "2023-11-14"},
        {"timestamp", "2023-11-14T22:13:20.123Z"},
        {"time", "22:13:20.123Z"},
        {"epoch_date", "1970-01-01"},
        {"date_before_1970", "1969-07-20"},
        {"timestamp_before_1970", "1969-07-20T20:17:40.000Z"},
        {"date_julian", "1000-01-01"},
        {"date_cutover_gap", "1582-10-10"},
        {"date_year_one", "0001-01-01"},
        {"timestamp_max", "9999-12-31T23:59:59.999Z"},
        {"date_lenient_feb30", "2023-02-30"},
        {"date_lenient_month13", "2023-13-45"},
        {"time_lenient", "25:61:61.999Z"},
        {"date_short_fields", "2023-1-1xx"},
        {"date_spaced_fields", "2023- 1- 1"},
        {"date_spaced", " 2023-11-14 "},
        {"timestamp_offset", "2023-11-14T22:13:20.123+01:00"},
        {"timestamp_offset_no_millis", "2023-11-14T22:13:20+01:00"},
        {"timestamp_no_zone", "2023-11-14T22:13:20.123"},
        {"timestamp_space", "2023-11-14 22:13:20.123Z"},
        {"timestamp_short_millis", "2023-11-14T22:13:20.1Z"},
        {"timestamp_escaped_colons", "2023-11-14T22\\:13\\:20.123Z"},
        {"time_no_zone", "22:13:20.123"},
        {"time_no_millis", "22:13:20Z"},
        {"date_slashes", "2023/11/14"},
        {"date_negative_year", "-2023-11-14"},
        {"date_compact", "20231114"},
        // Arrays.
        {"array_int8", "[1,2]"},
        {"array_spaced", " [ 1 , 2 , 3 ] "},
        {"array_empty", "[]"},
        {"array_blank", "[ ]"},
        {"array_widen_int16", "[1,300]"},
        {"array_widen_int64", "[1,70000,5000000000]"},
        {"array_int_float", "[1,2.5]"},
        {"array_float_double", "[1.5,1e300]"},
        {"array_mixed", "[1,\"a\"]"},
        {"array_mixed_bool", "[true,1]"},
        {"array_null", "[null]"},
        {"array_nulls", "[null,null]"},
        {"array_int_null", "[1,null]"},
        {"array_strings", "[\"a\",\"b\"]"},
        {"array_unquoted", "[a,b]"},
        {"array_bools", "[true,false]"},
        {"array_nested", "[[1,2],[3]]"},
        {"array_nested_widen", "[[1],[300]]"},
        {"array_nested_mixed", "[[1],[\"a\"]]"},
        {"array_deep", "[[[[[1]]]]]"},
        {"array_unterminated", "[1,2"},
        {"array_empty_element", "[1,,2]"},
        {"array_trailing_comma", "[1,2,]"},
        {"array_leading_comma", "[,1]"},
        {"array_unopened", "1,2]"},
        {"array_extra_close", "[1,2]]"},
        {"array_trailing_text", "[1,2]xyz"},
        {"array_escaped_quote", "[\"a\\\"b\"]"},
        {"array_escaped_backslash", "[\"a\\\\b\"]"},
        {"array_quoted_delimiters", "[\"a,b\",\"c:d\",\"[e]\"]"},
        {"array_quoted_blank", "[\" \",\"x\"]"},
        {"array_quoted_dates", "[\"2023-11-14\",\"x\"]"},
        {"array_int_date", "[1,2023-11-14]"},
        {"array_timestamps", "[2023-11-14T22:13:20.123Z,1969-07-20T20:17:40.000Z]"},
        {"array_date_timestamp", "[2023-11-14,2023-11-14T22:13:20.123Z]"},
        {"array_decimals", "[99999999999999999999,1e400]"},
        {"array_huge_int", "[99999999999999999999]"},
        {"array_negative_numbers", "[-1,-2.5]"},
        {"array_spaced_invalid", " [x"},
        // Maps.
        {"map_string_int", "{\"a\":1}"},
        {"map_unquoted_key", "{a:1}"},
        {"map_spaced_unquoted_key", " {a:1}"},
        {"map_mixed_values", "{\"a\":1,\"b\":\"x\"}"},
        {"map_int_keys", "{1:2}"},
        {"map_widen_keys", "{1:\"one\",300:\"x\"}"},
        {"map_array_value", "{\"a\":[1,2]}"},
        {"map_nested", "{\"a\":{\"b\":1}}"},
        {"map_empty", "{}"},
        {"map_null_value", "{\"a\":null}"},
        {"map_duplicate_key", "{\"a\":1,\"a\":2}"},
        {"map_unterminated", "{\"a\":1"},
        {"map_missing_value", "{\"a\"}"},
        {"map_trailing_comma", "{\"a\":1,}"},
        {"map_only_comma", "{,}"},
        {"map_null_key", "{null:1}"},
        {"map_bool_key", "{true:1}"},
        {"map_spaced", " { \"a\" : 1 , \"b\" : 2 } "},
        {"map_no_comma", "{\"a\":1 \"b\":2}"},
        {"map_timestamp_int", "{\"ts\":\"2023-11-14T22:13:20.123Z\",\"n\":1}"},
        {"map_timestamp_string", "{\"ts\":\"2023-11-14T22:13:20.123Z\",\"s\":\"x\"}"},
        {"map_float_keys", "{1.5:true,2:false}"},
        {"map_escaped_key", "{\"a\\\"b\":1}"},
        {"map_array_key", "{[1]:2}"},
        {"map_map_key", "{{\"a\":1}:2}"},
        {"map_in_array", "[{\"a\":1},{\"b\":2}]"},
        // Nesting too deep for Kafka's stack: the converter falls back to
        // BYTES (Kafka catches the StackOverflowError).
        {"deep_nesting", "[".repeat(5000) + "]".repeat(5000)},
        {"deep_unbalanced", "[".repeat(5000)},
    };

    // PARSE_BYTES lists {name, base64 of the header value} for values that
    // are not valid UTF-8; their lines also hold "inBase64".
    static final String[][] PARSE_BYTES = {
        {"invalid_utf8", b64(new byte[]{'a', 'b', (byte) 0xff, (byte) 0xfe, ' ', 'c'})},
        {"truncated_utf8", b64(new byte[]{'x', (byte) 0xe2, (byte) 0x82})},
        {"invalid_utf8_in_array", b64(new byte[]{'[', '"', 'a', (byte) 0xc3, '"', ',', '1', ']'})},
        {"surrogate_utf8", b64(new byte[]{'1', (byte) 0xed, (byte) 0xa0, (byte) 0x80})},
    };

    static String b64(byte[] b) {
        return Base64.getEncoder().encodeToString(b);
    }

    public static void main(String[] args) throws Exception {
        if (args.length == 1 && args[0].equals("-")) {
            oracle();
            return;
        }
        Path out = Path.of(args[0]);
        Files.createDirectories(out);
        StringBuilder sb = new StringBuilder();
        for (String[] c : PARSE) {
            ObjectNode o = parseCase(c[1].getBytes(StandardCharsets.UTF_8));
            ObjectNode line = F.objectNode();
            line.put("name", c[0]);
            line.setAll(o);
            sb.append(M.writeValueAsString(line)).append('\n');
        }
        for (String[] c : PARSE_BYTES) {
            ObjectNode o = parseCase(Base64.getDecoder().decode(c[1]));
            ObjectNode line = F.objectNode();
            line.put("name", c[0]);
            line.put("inBase64", c[1]);
            line.setAll(o);
            sb.append(M.writeValueAsString(line)).append('\n');
        }
        Files.writeString(out.resolve("simpleheader_parse.jsonl"), sb.toString(), StandardCharsets.UTF_8);
        sb.setLength(0);
        for (Map.Entry<String, SchemaAndValue> e : write().entrySet()) {
            SchemaAndValue sv = e.getValue();
            ObjectNode line = F.objectNode();
            line.put("name", e.getKey());
            try {
                byte[] b = CONV.fromConnectHeader("t", "h", sv.schema(), sv.value());
                line.put("out", b == null ? null : new String(b, StandardCharsets.UTF_8));
            } catch (Exception ex) {
                line.put("error", ex.getClass().getSimpleName() + ": " + ex.getMessage());
            }
            sb.append(M.writeValueAsString(line)).append('\n');
        }
        Files.writeString(out.resolve("simpleheader_write.jsonl"), sb.toString(), StandardCharsets.UTF_8);
    }

    static void oracle() throws Exception {
        BufferedReader r = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        StringBuilder sb = new StringBuilder();
        for (String l; (l = r.readLine()) != null; ) {
            ObjectNode o = parseCase(Base64.getDecoder().decode(l.trim()));
            sb.append(M.writeValueAsString(o)).append('\n');
        }
        System.out.print(sb);
        System.out.flush();
    }

    // parseCase runs the converter on in as a header value.
    static ObjectNode parseCase(byte[] in) {
        ObjectNode o = F.objectNode();
        o.put("in", new String(in, StandardCharsets.UTF_8));
        SchemaAndValue sv;
        try {
            sv = CONV.toConnectHeader("t", "h", in);
        } catch (Exception e) {
            o.put("error", e.getClass().getSimpleName() + ": " + e.getMessage());
            return o;
        }
        if (sv == null) {
            // Values.parseString("null") returns no SchemaAndValue at all;
            // the worker records a null header.
            sv = new SchemaAndValue(null, null);
        }
        if (sv.schema() != null && sv.schema().type() == Schema.Type.BYTES && sv.value() instanceof byte[]) {
            // The fallback for what Values could not parse: too big for
            // the golden file and the same bytes as the input.
            o.set("schema", schema(sv.schema()));
            o.put("fallback", true);
            return o;
        }
        o.set("schema", schema(sv.schema()));
        o.set("value", value(sv.value()));
        String out = null;
        try {
            byte[] b = CONV.fromConnectHeader("t", "h", sv.schema(), sv.value());
            out = b == null ? null : new String(b, StandardCharsets.UTF_8);
            o.put("out", out);
        } catch (Exception e) {
            o.put("outError", e.getClass().getSimpleName() + ": " + e.getMessage());
            return o;
        }
        boolean rt;
        try {
            SchemaAndValue back = CONV.toConnectHeader("t", "h", out == null ? null : out.getBytes(StandardCharsets.UTF_8));
            if (back == null) {
                back = new SchemaAndValue(null, null);
            }
            rt = canonical(schema(sv.schema()), value(sv.value()))
                    .equals(canonical(schema(back.schema()), value(back.value())));
        } catch (Exception e) {
            rt = false;
        }
        o.put("roundTrip", rt);
        return o;
    }

    static String canonical(JsonNode schema, JsonNode value) {
        return schema + " " + sortMaps(value);
    }

    // sortMaps orders map entries by their encoded keys, so that maps compare
    // as maps.
    static JsonNode sortMaps(JsonNode v) {
        if (v == null || !v.isObject()) {
            return v;
        }
        if (v.has("array")) {
            ArrayNode a = F.arrayNode();
            for (JsonNode e : v.get("array")) {
                a.add(sortMaps(e));
            }
            ObjectNode o = F.objectNode();
            o.set("array", a);
            return o;
        }
        if (v.has("map")) {
            TreeMap<String, JsonNode> sorted = new TreeMap<>();
            for (JsonNode e : v.get("map")) {
                ArrayNode p = F.arrayNode();
                p.add(sortMaps(e.get(0)));
                p.add(sortMaps(e.get(1)));
                sorted.put(p.get(0).toString(), p);
            }
            ArrayNode a = F.arrayNode();
            sorted.values().forEach(a::add);
            ObjectNode o = F.objectNode();
            o.set("map", a);
            return o;
        }
        return v;
    }

    static JsonNode schema(Schema s) {
        if (s == null) {
            return F.nullNode();
        }
        ObjectNode o = F.objectNode();
        o.put("type", s.type().name());
        o.put("optional", s.isOptional());
        if (s.name() != null) {
            o.put("name", s.name());
        }
        if (s.version() != null) {
            o.put("version", s.version());
        }
        if (s.parameters() != null && !s.parameters().isEmpty()) {
            ObjectNode p = F.objectNode();
            new TreeMap<>(s.parameters()).forEach(p::put);
            o.set("parameters", p);
        }
        if (s.type() == Schema.Type.MAP) {
            o.set("keySchema", schema(s.keySchema()));
        }
        if (s.type() == Schema.Type.MAP || s.type() == Schema.Type.ARRAY) {
            o.set("valueSchema", schema(s.valueSchema()));
        }
        return o;
    }

    static JsonNode value(Object v) {
        if (v == null) {
            return F.nullNode();
        }
        ObjectNode o = F.objectNode();
        if (v instanceof Byte) {
            o.put("int8", v.toString());
        } else if (v instanceof Short) {
            o.put("int16", v.toString());
        } else if (v instanceof Integer) {
            o.put("int32", v.toString());
        } else if (v instanceof Long) {
            o.put("int64", v.toString());
        } else if (v instanceof Float) {
            o.put("float32", v.toString());
            o.put("bits", String.format("%08x", Float.floatToRawIntBits((Float) v)));
        } else if (v instanceof Double) {
            o.put("float64", v.toString());
            o.put("bits", String.format("%016x", Double.doubleToRawLongBits((Double) v)));
        } else if (v instanceof Boolean) {
            o.put("boolean", (Boolean) v);
        } else if (v instanceof String) {
            o.put("string", (String) v);
        } else if (v instanceof BigDecimal) {
            BigDecimal d = (BigDecimal) v;
            o.put("decimal", d.toString());
            o.put("unscaled", d.unscaledValue().toString());
            o.put("scale", d.scale());
        } else if (v instanceof java.util.Date) {
            o.put("date", Long.toString(((java.util.Date) v).getTime()));
        } else if (v instanceof byte[]) {
            o.put("bytes", Base64.getEncoder().encodeToString((byte[]) v));
        } else if (v instanceof List) {
            ArrayNode a = o.putArray("array");
            for (Object e : (List<?>) v) {
                a.add(value(e));
            }
        } else if (v instanceof Map) {
            ArrayNode a = o.putArray("map");
            for (Map.Entry<?, ?> e : ((Map<?, ?>) v).entrySet()) {
                ArrayNode p = a.addArray();
                p.add(value(e.getKey()));
                p.add(value(e.getValue()));
            }
        } else if (v instanceof Struct) {
            ArrayNode a = o.putArray("struct");
            Struct st = (Struct) v;
            for (Field f : st.schema().fields()) {
                ArrayNode p = a.addArray();
                p.add(f.name());
                p.add(value(st.get(f)));
            }
        } else {
            o.put("unknown", v.getClass().getName());
        }
        return o;
    }

    static java.util.Date millis(long ms) {
        return new java.util.Date(ms);
    }

    // write returns the values whose header strings simpleheader_write.jsonl
    // holds; simple_test.go's writeCases mirrors it name by name. Maps are
    // built in the order Tributary writes them (keys sorted by their
    // written form), so the strings compare byte for byte.
    static Map<String, SchemaAndValue> write() {
        Map<String, SchemaAndValue> w = new LinkedHashMap<>();
        w.put("string", new SchemaAndValue(Schema.STRING_SCHEMA, "say \"hi\" \\ [1,2]"));
        w.put("string_empty", new SchemaAndValue(Schema.STRING_SCHEMA, ""));
        w.put("boolean", new SchemaAndValue(Schema.BOOLEAN_SCHEMA, true));
        w.put("int8", new SchemaAndValue(Schema.INT8_SCHEMA, (byte) -12));
        w.put("int16", new SchemaAndValue(Schema.INT16_SCHEMA, (short) 3000));
        w.put("int32", new SchemaAndValue(Schema.INT32_SCHEMA, 123456));
        w.put("int64", new SchemaAndValue(Schema.INT64_SCHEMA, Long.MIN_VALUE));
        w.put("float32", new SchemaAndValue(Schema.FLOAT32_SCHEMA, 1.5f));
        w.put("float32_whole", new SchemaAndValue(Schema.FLOAT32_SCHEMA, 1e10f));
        w.put("float32_small", new SchemaAndValue(Schema.FLOAT32_SCHEMA, 1.0e-5f));
        w.put("float32_nan", new SchemaAndValue(Schema.FLOAT32_SCHEMA, Float.NaN));
        w.put("float64", new SchemaAndValue(Schema.FLOAT64_SCHEMA, 0.1));
        w.put("float64_minus_zero", new SchemaAndValue(Schema.FLOAT64_SCHEMA, -0.0));
        w.put("float64_inf", new SchemaAndValue(Schema.FLOAT64_SCHEMA, Double.NEGATIVE_INFINITY));
        w.put("float64_big", new SchemaAndValue(Schema.FLOAT64_SCHEMA, 1.0e21));
        w.put("bytes", new SchemaAndValue(Schema.BYTES_SCHEMA, new byte[]{0, 1, 2, (byte) 0xfe, (byte) 0xff}));
        w.put("decimal", new SchemaAndValue(Decimal.schema(2), new BigDecimal("12345.67")));
        w.put("decimal_negative_scale", new SchemaAndValue(Decimal.schema(-3), new BigDecimal("1.23E+5")));
        w.put("decimal_small", new SchemaAndValue(Decimal.schema(10), new BigDecimal("1E-10")));
        w.put("date", new SchemaAndValue(org.apache.kafka.connect.data.Date.SCHEMA, millis(19675L * 86400000L)));
        w.put("date_before_1970", new SchemaAndValue(org.apache.kafka.connect.data.Date.SCHEMA, millis(-165L * 86400000L)));
        w.put("time", new SchemaAndValue(Time.SCHEMA, millis(13L * 3600000L + 14 * 60000 + 15123)));
        w.put("timestamp", new SchemaAndValue(Timestamp.SCHEMA, millis(1700000000123L)));
        w.put("timestamp_midnight", new SchemaAndValue(Timestamp.SCHEMA, millis(19675L * 86400000L)));
        w.put("timestamp_first_day", new SchemaAndValue(Timestamp.SCHEMA, millis(3600000L)));
        w.put("timestamp_before_1970", new SchemaAndValue(Timestamp.SCHEMA, millis(-14182940000L)));
        w.put("array_int32", new SchemaAndValue(SchemaBuilder.array(Schema.INT32_SCHEMA).build(), List.of(1, 2, 3)));
        w.put("array_empty", new SchemaAndValue(SchemaBuilder.array(Schema.STRING_SCHEMA).build(), List.of()));
        w.put("array_strings", new SchemaAndValue(SchemaBuilder.array(Schema.OPTIONAL_STRING_SCHEMA).build(),
                Arrays.asList("a", "say \"hi\"", "back\\slash", null, "")));
        w.put("array_nested", new SchemaAndValue(SchemaBuilder.array(SchemaBuilder.array(Schema.INT64_SCHEMA).build()).build(),
                List.of(List.of(1L, 2L), List.of())));
        w.put("array_bytes", new SchemaAndValue(SchemaBuilder.array(Schema.BYTES_SCHEMA).build(), List.of(new byte[]{9, 8, 7})));
        w.put("array_decimals", new SchemaAndValue(SchemaBuilder.array(Decimal.schema(3)).build(),
                List.of(new BigDecimal("-0.001"), new BigDecimal("12.500"))));
        w.put("array_dates", new SchemaAndValue(SchemaBuilder.array(Timestamp.SCHEMA).build(),
                List.of(millis(1700000000123L), millis(19675L * 86400000L), millis(5L))));
        w.put("array_floats", new SchemaAndValue(SchemaBuilder.array(Schema.FLOAT32_SCHEMA).build(), List.of(1.5f, 2.0f, Float.POSITIVE_INFINITY)));
        Map<String, Integer> sm = new LinkedHashMap<>();
        sm.put("a", 1);
        sm.put("b \"q\"", 2);
        w.put("map_string", new SchemaAndValue(SchemaBuilder.map(Schema.STRING_SCHEMA, Schema.INT32_SCHEMA).build(), sm));
        Map<Integer, String> im = new LinkedHashMap<>();
        im.put(-1, "minus");
        im.put(1, "one");
        im.put(2, null);
        w.put("map_int", new SchemaAndValue(SchemaBuilder.map(Schema.INT32_SCHEMA, Schema.OPTIONAL_STRING_SCHEMA).build(), im));
        w.put("map_empty", new SchemaAndValue(SchemaBuilder.map(Schema.STRING_SCHEMA, Schema.STRING_SCHEMA).build(), Map.of()));
        Schema inner = SchemaBuilder.struct().name("com.example.Inner").optional()
                .field("x", Schema.INT32_SCHEMA).field("y", Schema.OPTIONAL_STRING_SCHEMA).build();
        Schema outer = SchemaBuilder.struct().name("com.example.Outer")
                .field("id", Schema.INT64_SCHEMA)
                .field("name", Schema.STRING_SCHEMA)
                .field("score", SchemaBuilder.float64().optional().build())
                .field("inner", inner)
                .field("tags", SchemaBuilder.array(Schema.STRING_SCHEMA).build())
                .field("missing", Schema.OPTIONAL_INT16_SCHEMA)
                .field("amount", Decimal.schema(2))
                .field("at", Timestamp.SCHEMA)
                .build();
        Struct innerV = new Struct(inner).put("x", 1).put("y", "why");
        Struct outerV = new Struct(outer).put("id", 77L).put("name", "n \"quoted\"").put("score", 0.5)
                .put("inner", innerV).put("tags", List.of("a", "b"))
                .put("amount", new BigDecimal("-9.99")).put("at", millis(1700000000123L));
        w.put("struct", new SchemaAndValue(outer, outerV));
        Map<Long, Struct> ms = new LinkedHashMap<>();
        ms.put(5L, new Struct(inner).put("x", 5));
        w.put("map_struct", new SchemaAndValue(SchemaBuilder.map(Schema.INT64_SCHEMA, inner).build(), ms));
        w.put("schemaless_array", new SchemaAndValue(null, Arrays.asList(1L, "x", null, true, 2.5)));
        Map<String, Object> so = new LinkedHashMap<>();
        so.put("a", 1L);
        so.put("b", List.of("c"));
        w.put("schemaless_map", new SchemaAndValue(null, so));
        return w;
    }
}
