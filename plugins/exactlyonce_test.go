package plugins

import (
	"context"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tributary-dev/tributary/sdk"
)

// TestExactlyOnceQuestions asks a connector's exactly-once questions
// through a plugin process and in process: the same answers; a connector
// that does not declare (FileStreamSink) answers as Kafka Connect's
// default methods do, and Datagen declares support.
func TestExactlyOnceQuestions(t *testing.T) {
	h := newTestHost(t, nil)
	in, err := NewInProcess(slog.New(slog.DiscardHandler), txnConnector())
	if err != nil {
		t.Fatal(err)
	}
	both := ExactlyOnceQuestions{Support: true, Boundaries: true}
	for _, tc := range []struct {
		name   string
		class  string
		config map[string]string
		q      ExactlyOnceQuestions
		want   ExactlyOnceAnswers
	}{
		{"supported", txnClass, map[string]string{}, both, ExactlyOnceAnswers{Support: sdk.ExactlyOnceSupported, Boundaries: true}},
		{"unsupported, no boundaries", txnClass, map[string]string{"declare": "unsupported", "boundaries": "false"}, both, ExactlyOnceAnswers{Support: sdk.ExactlyOnceUnsupported}},
		{"only what is asked", txnClass, map[string]string{}, ExactlyOnceQuestions{Boundaries: true}, ExactlyOnceAnswers{Boundaries: true}},
		{"a panic is an error", txnClass, map[string]string{"declare": "panic"}, both, ExactlyOnceAnswers{SupportErr: "boom in ExactlyOnce", Boundaries: true}},
		{"a config that does not parse", txnClass, map[string]string{"count": "x"}, both, ExactlyOnceAnswers{SupportErr: "count", BoundariesErr: "count"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for name, l := range map[string]ExactlyOnceValidator{"host": h, "inprocess": in} {
				_, got, err := l.ValidateExactlyOnce(context.Background(), tc.class, tc.config, tc.q)
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				if got.Support != tc.want.Support || got.Boundaries != tc.want.Boundaries ||
					!strings.Contains(got.SupportErr, tc.want.SupportErr) || (got.SupportErr == "") != (tc.want.SupportErr == "") ||
					!strings.Contains(got.BoundariesErr, tc.want.BoundariesErr) || (got.BoundariesErr == "") != (tc.want.BoundariesErr == "") {
					t.Errorf("%s: %+v, want %+v", name, got, tc.want)
				}
			}
		})
	}
	// A connector that declares nothing.
	_, got, err := h.ValidateExactlyOnce(context.Background(), "FileStreamSink", map[string]string{}, both)
	if err != nil || got != (ExactlyOnceAnswers{}) {
		t.Errorf("FileStreamSink: %+v, %v; want undeclared, no boundaries", got, err)
	}
	// Datagen declares support, and no boundaries of its own.
	_, got, err = h.ValidateExactlyOnce(context.Background(), "Datagen", map[string]string{"kafka.topic": "t"}, both)
	if err != nil || got != (ExactlyOnceAnswers{Support: sdk.ExactlyOnceSupported}) {
		t.Errorf("Datagen: %+v, %v; want supported, no boundaries", got, err)
	}
}

// TestTransactionBoundariesThroughPlugin runs txnConnector's task through
// a plugin process and in process: the records arrive with the
// boundaries the task asked for, in the same places.
func TestTransactionBoundariesThroughPlugin(t *testing.T) {
	want := "1 2 3 4 5 |commit 6 7 8 9 10 |commit 11 |abort 12 13 14 15 |commit 16 17 18 19 20 |commit 21 |commit 22 |abort 23 24 25 |commit " +
		"26 27 28 29 30 |commit 31 32 33 |abort 34 35 |commit |commit 36 37 38 39 40 |commit |commit"
	tokens := len(strings.Fields(want))
	h := newTestHost(t, nil)
	in, err := NewInProcess(slog.New(slog.DiscardHandler), txnConnector())
	if err != nil {
		t.Fatal(err)
	}
	for name, l := range map[string]SourceTaskStarter{"host": h, "inprocess": in} {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			task, err := l.StartSourceTaskWith(ctx, txnClass, sdk.TaskInfo{Connector: "txn"}, map[string]string{}, nil, SourceTaskOptions{TransactionContext: true})
			if err != nil {
				t.Fatal(err)
			}
			defer task.Stop(ctx)
			var got []string
			for len(got) < tokens {
				pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
				recs, err := task.Poll(pctx)
				cancel()
				if err != nil {
					t.Fatalf("after %s: %v", strings.Join(got, " "), err)
				}
				b := task.(BoundarySource).Boundary()
				if len(recs) > 0 && b != NoBoundary {
					t.Fatalf("a batch of %d records with boundary %v: a boundary comes alone", len(recs), b)
				}
				for _, r := range recs {
					got = append(got, strconv.FormatInt(r.Value.(int64), 10))
				}
				switch b {
				case CommitBoundary:
					got = append(got, "|commit")
				case AbortBoundary:
					got = append(got, "|abort")
				}
			}
			if g := strings.Join(got, " "); g != want {
				t.Errorf("got  %s\nwant %s", g, want)
			}
		})
	}
	// Without a transaction context the task asks nothing.
	task, err := h.StartSourceTask(context.Background(), txnClass, sdk.TaskInfo{Connector: "txn"}, map[string]string{"count": "7"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer task.Stop(context.Background())
	recs, err := task.Poll(context.Background())
	if err != nil || len(recs) != 7 || task.(BoundarySource).Boundary() != NoBoundary || !slices.ContainsFunc(recs, func(r sdk.SourceRecord) bool { return r.Value == int64(7) }) {
		t.Fatalf("without a context: %d records, %v", len(recs), err)
	}
}
