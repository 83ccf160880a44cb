package postgres

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/tributary-dev/tributary/sdk"
	"github.com/tributary-dev/tributary/sdk/schema"
)

// readEvent is a snapshot read event of row i, as the readers make them.
func readEvent(src *schema.Schema, i int) sdk.SourceRecord {
	env := &schema.Schema{Type: schema.TypeStruct, Fields: []schema.Field{
		{Name: "before", Schema: &schema.Schema{Type: schema.TypeInt32, Optional: true}},
		{Name: "after", Schema: &schema.Schema{Type: schema.TypeInt32, Optional: true}},
		{Name: "source", Schema: src},
	}}
	s := schema.NewStruct(src)
	s.SetIndex(srcSnapshot, snapTrue)
	v := schema.NewStruct(env)
	v.SetIndex(envAfter, int32(i))
	v.SetIndex(envSource, s)
	return sdk.SourceRecord{Value: v, Offset: snapshotOffset(100, 7, time.UnixMilli(0), false)}
}

// TestMergeMarksLastOnlyWhenComplete: the merger marks the snapshot's last
// event (whose offset says the snapshot completed) only when every reader
// succeeded; when one failed it forwards what was read, marks nothing last
// and returns the reader's error, so that the stored offsets say the
// snapshot is incomplete and a restart takes it again.
func TestMergeMarksLastOnlyWhenComplete(t *testing.T) {
	src := newSourceSchemas().source
	for _, tc := range []struct {
		name   string
		failed error
	}{{"complete", nil}, {"a reader failed", errors.New("postgres: snapshot of public.big: connection lost")}} {
		t.Run(tc.name, func(t *testing.T) {
			in := make(chan []sdk.SourceRecord, 3)
			in <- []sdk.SourceRecord{readEvent(src, 1), readEvent(src, 2)}
			in <- []sdk.SourceRecord{readEvent(src, 3)}
			close(in)
			out := make(chan []sdk.SourceRecord, 10)
			s := &snapshotter{}
			err := s.merge(context.Background(), in, out, func() error { return tc.failed })
			close(out)
			var got []sdk.SourceRecord
			for b := range out {
				got = append(got, b...)
			}
			lastMarked := 0
			for _, r := range got {
				if st, _, _ := readOffset(r.Offset); st == offsetStreaming {
					lastMarked++
				}
			}
			if tc.failed == nil {
				if err != nil || len(got) != 3 || lastMarked != 1 {
					t.Fatalf("complete: err %v, %d events, %d marked last; want nil, 3, 1", err, len(got), lastMarked)
				}
				if st, _, _ := readOffset(got[2].Offset); st != offsetStreaming {
					t.Fatalf("the last event's offset reads as %v", st)
				}
				return
			}
			if !errors.Is(err, tc.failed) {
				t.Fatalf("merge returned %v, want the reader's error", err)
			}
			if lastMarked != 0 {
				t.Fatalf("%d events marked the snapshot complete after a reader failed", lastMarked)
			}
			for _, r := range got {
				if st, _, _ := readOffset(r.Offset); st != offsetSnapshotIncomplete {
					t.Fatalf("an offset reads as %v, want snapshot incomplete", st)
				}
			}
		})
	}
}

// TestSnapshotSource: a blocking snapshot's filter that is a SELECT (or
// WITH) statement replaces the table as a derived table; any other filter
// is a condition on the table.
func TestSnapshotSource(t *testing.T) {
	tab := &table{id: tableID{schema: "public", name: "items"}}
	for _, c := range []struct {
		filter, from, cond string
		replaced           bool
	}{
		{"", `"public"."items"`, "", false},
		{"id <= 5", `"public"."items"`, "id <= 5", false},
		{"selected = true", `"public"."items"`, "selected = true", false},
		{" select * from public.items where id <= 5;\n", "(select * from public.items where id <= 5) AS snapshot_select", "", true},
		{"WITH x AS (SELECT * FROM public.items) SELECT * FROM x", "(WITH x AS (SELECT * FROM public.items) SELECT * FROM x) AS snapshot_select", "", true},
	} {
		s := &snapshotter{conds: map[tableID]string{tab.id: c.filter}}
		from, cond, replaced := s.source(tab)
		if from != c.from || cond != c.cond || replaced != c.replaced {
			t.Errorf("filter %q: source %q, %q, %v; want %q, %q, %v", c.filter, from, cond, replaced, c.from, c.cond, c.replaced)
		}
	}
}
