package iceberg

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/tributary-dev/tributary/sdk"
	"github.com/tributary-dev/tributary/sdk/schema"
)

var rowSchema1 = &schema.Schema{Type: schema.TypeStruct, Name: "row", Fields: []schema.Field{
	{Name: "id", Index: 0, Schema: schema.Int32},
	{Name: "v", Index: 1, Schema: schema.OptionalString},
}}

func row(id int32, v string) *schema.Struct {
	return schema.NewStruct(rowSchema1).Set("id", id).Set("v", v)
}

func ch(p int32, off int64, op Op, id int32, v string) Change {
	r := row(id, v)
	k, err := keyOf(r, []string{"id"})
	if err != nil {
		panic(err)
	}
	if op == OpTruncate {
		r, k = nil, ""
	}
	return Change{TP: sdk.TopicPartition{Topic: "t", Partition: p}, Offset: off, Op: op, Key: k, Row: r, Time: time.UnixMilli(off)}
}

// render lists the plan's rows and deletes as id=v and -id.
func render(p plan) (rows, dels []string) {
	for _, r := range p.rows {
		rows = append(rows, fmt.Sprintf("%d=%s", r.Get("id"), r.Get("v")))
	}
	for _, r := range p.deletes {
		dels = append(dels, fmt.Sprintf("-%d", r.Get("id")))
	}
	slices.Sort(rows)
	slices.Sort(dels)
	return rows, dels
}

func TestBatchPlan(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name          string
		upsert, keyed bool
		noEarlier     bool
		changes       []Change
		rows, dels    []string
		truncate      bool
	}{
		{name: "upsert/last change per key wins", upsert: true,
			changes: []Change{ch(0, 1, OpInsert, 1, "a"), ch(0, 2, OpUpdate, 1, "b"), ch(0, 3, OpInsert, 2, "x"), ch(0, 4, OpUpdate, 1, "c")},
			rows:    []string{"1=c", "2=x"}, dels: []string{"-1", "-2"}},
		{name: "upsert/delete wins over earlier insert", upsert: true,
			changes: []Change{ch(0, 1, OpInsert, 1, "a"), ch(0, 2, OpDelete, 1, "")},
			dels:    []string{"-1"}},
		{name: "upsert/insert after delete", upsert: true,
			changes: []Change{ch(0, 1, OpDelete, 1, ""), ch(0, 2, OpInsert, 1, "n")},
			rows:    []string{"1=n"}, dels: []string{"-1"}},
		{name: "upsert/empty table needs no deletes", upsert: true, noEarlier: true,
			changes: []Change{ch(0, 1, OpInsert, 1, "a"), ch(0, 2, OpUpdate, 1, "b"), ch(0, 3, OpDelete, 2, "")},
			rows:    []string{"1=b"}},
		{name: "cdc/inserts of new keys need no deletes", keyed: true,
			changes: []Change{ch(0, 1, OpInsert, 1, "a"), ch(0, 2, OpInsert, 2, "b"), ch(0, 3, OpUpdate, 3, "c")},
			rows:    []string{"1=a", "2=b", "3=c"}, dels: []string{"-3"}},
		{name: "cdc/delete then reinsert keeps the delete", keyed: true,
			changes: []Change{ch(0, 1, OpDelete, 1, ""), ch(0, 2, OpInsert, 1, "again")},
			rows:    []string{"1=again"}, dels: []string{"-1"}},
		{name: "upsert/truncate forgets earlier changes", upsert: true,
			changes: []Change{ch(0, 1, OpInsert, 1, "a"), ch(0, 2, OpTruncate, 0, ""), ch(0, 3, OpInsert, 2, "b")},
			rows:    []string{"2=b"}, truncate: true},
		{name: "append/every insert and update, no deletes",
			changes: []Change{ch(0, 1, OpInsert, 1, "a"), ch(0, 2, OpUpdate, 1, "b"), ch(0, 3, OpDelete, 1, ""), ch(0, 4, OpTruncate, 0, "")},
			rows:    []string{"1=a", "1=b"}},
		{name: "upsert/keys of two partitions", upsert: true,
			changes: []Change{ch(0, 10, OpInsert, 1, "a"), ch(1, 5, OpInsert, 2, "b"), ch(0, 11, OpDelete, 1, ""), ch(1, 6, OpUpdate, 2, "c")},
			rows:    []string{"2=c"}, dels: []string{"-1", "-2"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			b := newBatch(c.upsert, c.keyed)
			for _, x := range c.changes {
				b.add(x)
			}
			p := b.plan(c.noEarlier)
			rows, dels := render(p)
			if !slices.Equal(rows, c.rows) || !slices.Equal(dels, c.dels) || p.truncate != c.truncate {
				t.Errorf("rows %v dels %v truncate %v; want %v %v %v", rows, dels, p.truncate, c.rows, c.dels, c.truncate)
			}
			if p.records != len(c.changes) {
				t.Errorf("records %d, want %d", p.records, len(c.changes))
			}
		})
	}
}

func TestBatchOffsets(t *testing.T) {
	t.Parallel()
	b := newBatch(true, true)
	for _, c := range []Change{ch(0, 7, OpInsert, 1, "a"), ch(1, 3, OpInsert, 2, "b"), ch(0, 9, OpUpdate, 1, "c")} {
		b.add(c)
	}
	p := b.plan(false)
	want := map[sdk.TopicPartition]int64{{Topic: "t", Partition: 0}: 10, {Topic: "t", Partition: 1}: 4}
	if !maps.Equal(p.next, want) {
		t.Errorf("next %v, want %v", p.next, want)
	}
	if first := b.first[sdk.TopicPartition{Topic: "t", Partition: 0}]; first != 7 {
		t.Errorf("first %d, want 7", first)
	}
	// valid-through: the earliest over partitions of their latest time.
	if got := p.validThrough.UnixMilli(); got != 3 {
		t.Errorf("validThrough %d, want 3", got)
	}
}

// TestBatchAgainstNaive checks the batch against a naive model: apply each
// change to a map key→row in order; a commit's outcome (earlier rows with
// the plan's deletes removed, then its rows added) must equal the model.
func TestBatchAgainstNaive(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(1, 2))
	for round := range 200 {
		table := map[int32]string{} // committed state
		model := map[int32]string{}
		off := int64(0)
		for range 5 { // commits
			b := newBatch(true, true)
			for range rng.IntN(300) {
				id := int32(rng.IntN(20))
				off++
				v := fmt.Sprint(off)
				switch rng.IntN(10) {
				case 0, 1:
					b.add(ch(0, off, OpDelete, id, ""))
					delete(model, id)
				case 2:
					if rng.IntN(10) == 0 {
						b.add(ch(0, off, OpTruncate, 0, ""))
						clear(model)
						continue
					}
					fallthrough
				default:
					b.add(ch(0, off, OpUpdate, id, v))
					model[id] = v
				}
			}
			p := b.plan(len(table) == 0 && round%2 == 0)
			if p.truncate {
				clear(table)
			}
			for _, r := range p.deletes {
				delete(table, r.Get("id").(int32))
			}
			for _, r := range p.rows {
				id := r.Get("id").(int32)
				if _, dup := table[id]; dup {
					t.Fatalf("round %d: row %d added twice", round, id)
				}
				table[id] = r.Get("v").(string)
			}
			if !maps.Equal(table, model) {
				t.Fatalf("round %d: table %v, model %v", round, table, model)
			}
		}
	}
}

func TestOffsetsSummary(t *testing.T) {
	t.Parallel()
	o := offsets{{Topic: "db.public.t", Partition: 0}: 12, {Topic: "db.public.t", Partition: 3}: 7, {Topic: "u", Partition: 1}: 1}
	props := o.summary("connect-lake")
	if got := props["kafka.connect.offsets.db.public.t.connect-lake"]; got != `{"0":12,"3":7}` {
		t.Errorf("summary %v", props)
	}
	back, found, err := parseOffsets(props, "connect-lake")
	if err != nil || !found || !maps.Equal(back, o) {
		t.Errorf("parse: %v %v %v, want %v", back, found, err, o)
	}
	if _, found, _ := parseOffsets(props, "connect-other"); found {
		t.Error("another group's offsets were read")
	}
	for _, bad := range []string{`{"x":1}`, `{"0":-1}`, `[1]`, `{"0":"a"}`} {
		if _, _, err := parseOffsets(map[string]string{"kafka.connect.offsets.t.g": bad}, "g"); err == nil {
			t.Errorf("%s: no error", bad)
		}
	}
}

func TestCheckBase(t *testing.T) {
	t.Parallel()
	tp0, tp1 := sdk.TopicPartition{Topic: "t", Partition: 0}, sdk.TopicPartition{Topic: "t", Partition: 1}
	next := map[sdk.TopicPartition]int64{tp0: 20}
	if err := checkBase(offsets{tp0: 10, tp1: 99}, offsets{tp0: 10}, next); err != nil {
		t.Errorf("same base: %v", err)
	}
	if err := checkBase(offsets{}, offsets{}, next); err != nil {
		t.Errorf("no offsets anywhere: %v", err)
	}
	if err := checkBase(offsets{tp0: 15}, offsets{tp0: 10}, next); err == nil {
		t.Error("another task moved the partition: no error")
	}
	if err := checkBase(offsets{tp0: 15}, offsets{}, next); err == nil {
		t.Error("another task committed a partition this one started from the group: no error")
	}
}

func FuzzParsePartitionField(f *testing.F) {
	for _, s := range []string{"id", "bucket(id, 16)", "bucket(16,id)", "day(ts)", "truncate(name,4)", "hours(ts)", "x(", "bucket(id)", "(,)"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		pf, err := parsePartitionField(s)
		if err != nil {
			return
		}
		if pf.column == "" || pf.transform == nil || pf.name == "" {
			t.Fatalf("%q parsed to %+v", s, pf)
		}
	})
}

func FuzzParseOffsets(f *testing.F) {
	f.Add(`{"0":1,"2":3}`)
	f.Add(`{}`)
	f.Add(`{"-1":2}`)
	f.Fuzz(func(t *testing.T, v string) {
		o, found, err := parseOffsets(map[string]string{"kafka.connect.offsets.t.g": v}, "g")
		if err != nil {
			return
		}
		if !found {
			t.Fatal("valid value not found")
		}
		back, _, err := parseOffsets(o.summary("g"), "g")
		if err != nil || !maps.Equal(back, o) {
			t.Fatalf("round trip of %q: %v %v", v, back, err)
		}
	})
}
