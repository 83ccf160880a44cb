package integration

import (
	"context"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/big"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/tributary-dev/tributary/integration/harness"
	"github.com/tributary-dev/tributary/sdk/schema"
	"github.com/tributary-dev/tributary/worker/convert"
)

// TestProtobufConverterWithConfluentPython: records that Confluent's
// Python ProtobufSerializer writes into the bundled registry and broker
// (shop.Order, its reference shop/common.proto registered by the client
// as Confluent's serializers do, then the nested shop.Order.Line, whose
// message indexes count the map entry message) are read by Tributary's
// ProtobufConverter field by field, with the Connect schema
// ProtobufData gives them; and records Tributary's converter writes are
// read by Confluent's ProtobufDeserializer field by field, the payload
// byte for byte what Python's protobuf serializes for the same message.
func TestProtobufConverterWithConfluentPython(t *testing.T) {
	t.Parallel()
	registry := harness.SchemaRegistryURL(t)
	b := harness.TributaryBroker(t)
	suffix := strconv.Itoa(os.Getpid()) + "-" + strconv.FormatInt(time.Now().UnixNano()%1e9, 10)
	const n = 6

	// Python → Tributary.
	in := "sr-proto-py-" + suffix
	createTopicAt(t, b.Bootstrap(), in, 1)
	srPython(t, "sr_protobuf.py", "produce", b.Bootstrap(), registry, in, strconv.Itoa(n))
	conv, err := convert.New(convert.ProtobufClass, false, map[string]string{"schema.registry.url": registry})
	if err != nil {
		t.Fatal(err)
	}
	recs := consumeN(t, b.Bootstrap(), in, 2*n)
	const wantFields = "contact_0:struct,id:int64,customer:string,note:string,tags:array,ratio:float64,flag:boolean," +
		"counts:map,status:string,ship_to:struct,at:int64,day:int32,total:bytes,delta:int32,count:int64,lines:array," +
		"f32:float32,raw:bytes,small:int16,at_time:int32"
	for i, rec := range recs[:n] {
		s, v, err := conv.ToConnect(in, rec.Value)
		if err != nil {
			t.Fatalf("record %d: %v", i, err)
		}
		var names []string
		for _, f := range s.Fields {
			names = append(names, f.Name+":"+f.Schema.Type.String())
		}
		if s.Name != "Order" || s.Version != 1 || strings.Join(names, ",") != wantFields {
			t.Fatalf("record %d: schema %s v%d fields %v", i, s.Name, s.Version, names)
		}
		for field, want := range map[string]string{
			"total": schema.DecimalName, "day": schema.DateName, "at": schema.TimestampName, "at_time": schema.TimeName,
			"status": "Status", "ship_to": "Address", "contact_0": "io.confluent.connect.protobuf.Union.contact", "counts": "counts",
		} {
			if got := s.Field(field).Schema.Name; got != want {
				t.Errorf("field %s named %q, want %q", field, got, want)
			}
		}
		if p := s.Field("total").Schema.Parameters; p["scale"] != "2" || p["connect.decimal.precision"] != "10" {
			t.Errorf("total's parameters %v", p)
		}
		if p := s.Field("delta").Schema.Parameters; p["io.confluent.connect.protobuf.Type"] != "sint32" || p["io.confluent.connect.protobuf.Tag"] != "15" {
			t.Errorf("delta's parameters %v", p)
		}
		if p := s.Field("status").Schema.Parameters; p["io.confluent.connect.protobuf.Enum.INACTIVE"] != "1" {
			t.Errorf("status's parameters %v", p)
		}
		st := v.(*schema.Struct)
		var note any
		if i%2 == 1 {
			note = fmt.Sprintf("n%d", i)
		}
		unscaled := int64(i-3)*100 + int64(i)
		if i < 3 {
			unscaled = -(int64(3-i)*100 + int64(i))
		}
		status := []string{"ACTIVE", "INACTIVE"}[i%2]
		contact := st.Get("contact_0").(*schema.Struct)
		check := map[string][2]any{
			"id":       {st.Get("id"), int64(i)},
			"customer": {st.Get("customer"), fmt.Sprintf("c%d", i)},
			"note":     {st.Get("note"), note},
			"tags":     {fmt.Sprint(st.Get("tags")), fmt.Sprint([]any{"t", strconv.Itoa(i)})},
			"ratio":    {st.Get("ratio"), float64(i) / 4},
			"flag":     {st.Get("flag"), i%3 == 0},
			"counts":   {fmt.Sprint(st.Get("counts")), fmt.Sprint(map[string]any{"k": int32(i)})},
			"status":   {st.Get("status"), status},
			"city":     {st.Get("ship_to").(*schema.Struct).Get("city"), fmt.Sprintf("city%d", i)},
			"zip":      {st.Get("ship_to").(*schema.Struct).Get("zip"), int32(1000 + i)},
			"at":       {st.Get("at").(time.Time).UnixMilli(), int64(1717171717000 + i)},
			"day":      {st.Get("day").(time.Time).Format(time.DateOnly), fmt.Sprintf("2024-02-%02d", 1+i)},
			"at_time":  {st.Get("at_time").(time.Time).UnixMilli(), int64((13*3600+5*60+i)*1000 + 7)},
			"total":    {st.Get("total").(*big.Int).Int64(), unscaled},
			"delta":    {st.Get("delta"), int32(-i)},
			"count":    {st.Get("count"), int64(4000000000 + i)},
			"lines":    {fmt.Sprint(st.Get("lines").([]any)[0].(*schema.Struct).Get("sku"), st.Get("lines").([]any)[0].(*schema.Struct).Get("qty")), fmt.Sprint(fmt.Sprintf("s%d", i), int32(i))},
			"f32":      {st.Get("f32"), float32(1.5)},
			"raw":      {hex.EncodeToString(st.Get("raw").([]byte)), hex.EncodeToString([]byte{byte(i), 255})},
			"small":    {st.Get("small"), int16(-i)},
		}
		if i%2 == 0 {
			check["email"] = [2]any{contact.Get("email"), fmt.Sprintf("e%d@x", i)}
		} else {
			check["phone"] = [2]any{contact.Get("phone"), int64(33000 + i)}
		}
		for name, c := range check {
			if c[0] != c[1] {
				t.Errorf("record %d: %s read as %#v, want %#v", i, name, c[0], c[1])
			}
		}
	}
	for i, rec := range recs[n:] {
		if rec.Value[5] != 4 || rec.Value[6] != 0 || rec.Value[7] != 2 {
			t.Fatalf("record %d: message indexes % x, want [0, 1] (zigzag 2: 0 1)", n+i, rec.Value[5:8])
		}
		s, v, err := conv.ToConnect(in, rec.Value)
		if err != nil {
			t.Fatalf("record %d: %v", n+i, err)
		}
		st := v.(*schema.Struct)
		if s.Name != "Line" || st.Get("sku") != fmt.Sprintf("l%d", i) || st.Get("qty") != int32(i) {
			t.Errorf("record %d: %s %v", n+i, s.Name, st)
		}
	}

	// Tributary → Python.
	out := "sr-proto-go-" + suffix
	createTopicAt(t, b.Bootstrap(), out, 1)
	price := schema.Decimal(2)
	price.Parameters["connect.decimal.precision"] = "8"
	status := &schema.Schema{Type: schema.TypeString, Name: "shop.items.Status", Parameters: map[string]string{
		"io.confluent.connect.protobuf.Enum": "Status", "io.confluent.connect.protobuf.Enum.NEW": "0", "io.confluent.connect.protobuf.Enum.SOLD": "3"}}
	addr := schema.StructOf("shop.items.Address").Field("city", schema.String).Field("zip", schema.OptionalInt32).Optional().Build()
	item := schema.StructOf("shop.items.Item").Field("id", schema.Int64).Field("name", schema.OptionalString).
		Field("small", schema.Int16).Field("f", schema.Float64).Field("tags", schema.ArrayOf(schema.String)).
		Field("attrs", schema.MapOf(schema.String, schema.Int64)).Field("price", price).Field("day", schema.Date).
		Field("at", schema.Timestamp).Field("at_time", schema.Time).Field("addr", addr).Field("status", status).Build()
	w, err := convert.New(convert.ProtobufClass, false, map[string]string{"schema.registry.url": registry})
	if err != nil {
		t.Fatal(err)
	}
	cl := newClient(t, b.Bootstrap(), kgo.DefaultProduceTopic(out))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var payloads []string
	for i := range n {
		row := schema.NewStruct(item).Set("id", int64(i)<<33).Set("small", int16(-i)).Set("f", float64(i)+0.25).
			Set("tags", []any{"x", strconv.Itoa(i)}).Set("attrs", map[string]any{"k": int64(i), "z": int64(-1)}).
			Set("price", big.NewInt(int64(12345*(i-2)))).Set("day", time.Date(2025, 3, 1+i, 0, 0, 0, 0, time.UTC)).
			Set("at", time.UnixMilli(1735689600123+int64(i))).Set("at_time", time.UnixMilli(int64(i)*3723004).UTC()).
			Set("status", []string{"NEW", "SOLD"}[i%2])
		if i%2 == 0 {
			row.Set("name", fmt.Sprintf("item %d", i)).Set("addr", schema.NewStruct(addr).Set("city", "Lyon").Set("zip", int32(69000+i)))
		}
		bs, err := w.FromConnect(out, item, row)
		if err != nil {
			t.Fatal(err)
		}
		if bs[0] != 0 || bs[5] != 0 {
			t.Fatalf("header % x: want magic byte 0 and message indexes [0] as the byte 0", bs[:6])
		}
		payloads = append(payloads, hex.EncodeToString(bs[6:]))
		if err := cl.ProduceSync(ctx, &kgo.Record{Value: bs}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	lines := srPython(t, "sr_protobuf.py", "consume", b.Bootstrap(), registry, out, strconv.Itoa(n), "shop.items.Item")
	if len(lines) != n {
		t.Fatalf("Python read %d lines, want %d:\n%s", len(lines), n, strings.Join(lines, "\n"))
	}
	for i, l := range lines {
		var got struct {
			Message map[string]any `json:"message"`
			Payload string         `json:"payload"`
		}
		if err := json.Unmarshal([]byte(l), &got); err != nil {
			t.Fatalf("line %d: %v: %s", i, err, l)
		}
		if got.Payload != payloads[i] {
			t.Errorf("record %d: Python serializes the message it read as %s, Tributary wrote %s", i, got.Payload, payloads[i])
		}
		m := got.Message
		price := new(big.Int).SetBytes(must64(t, m["price"].(map[string]any)["value"].(string)))
		if b := must64(t, m["price"].(map[string]any)["value"].(string)); len(b) > 0 && b[0]&0x80 != 0 {
			price.Sub(price, new(big.Int).Lsh(big.NewInt(1), uint(8*len(b))))
		}
		var name, wantCity, city any
		if i%2 == 0 {
			name, wantCity = fmt.Sprintf("item %d", i), "Lyon"
		}
		if a, ok := m["addr"].(map[string]any); ok {
			city = a["city"]
		}
		entry := map[string]any{"key": "k"}
		if i != 0 {
			entry["value"] = strconv.Itoa(i)
		}
		statusName := map[bool]any{true: nil, false: "SOLD"}[i%2 == 0]
		check := map[string][2]any{
			"id":     {m["id"], jsonInt64(int64(i) << 33)},
			"name":   {m["name"], name},
			"small":  {m["small"], jsonNum(-i)},
			"f":      {m["f"], float64(i) + 0.25},
			"tags":   {fmt.Sprint(m["tags"]), fmt.Sprint([]any{"x", strconv.Itoa(i)})},
			"attrs":  {fmt.Sprint(m["attrs"]), fmt.Sprint([]any{entry, map[string]any{"key": "z", "value": "-1"}})},
			"price":  {price.Int64(), int64(12345 * (i - 2))},
			"scale":  {m["price"].(map[string]any)["scale"], float64(2)},
			"day":    {fmt.Sprint(m["day"]), fmt.Sprint(map[string]any{"year": float64(2025), "month": float64(3), "day": float64(1 + i)})},
			"at":     {m["at"], time.UnixMilli(1735689600123 + int64(i)).UTC().Format("2006-01-02T15:04:05.000Z")},
			"addr":   {city, wantCity},
			"status": {m["status"], statusName},
		}
		for k, c := range check {
			if fmt.Sprint(c[0]) != fmt.Sprint(c[1]) {
				t.Errorf("record %d: Python read %s as %v, want %v", i, k, c[0], c[1])
			}
		}
	}
}

// must64 decodes standard base64 (protobuf JSON's bytes).
func must64(t *testing.T, s string) []byte {
	t.Helper()
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// jsonInt64 is an int64 as protobuf's JSON renders it: a string, absent
// when zero.
func jsonInt64(n int64) any {
	if n == 0 {
		return nil
	}
	return strconv.FormatInt(n, 10)
}

// jsonNum is an int32 as protobuf's JSON renders it: a number, absent
// when zero.
func jsonNum(n int) any {
	if n == 0 {
		return nil
	}
	return float64(n)
}
