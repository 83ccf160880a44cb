package sdk

import (
	"context"
	"testing"
)

func TestTransactionsRequests(t *testing.T) {
	var tx Transactions
	recs := make([]SourceRecord, 3)
	recs[1].Topic = "t"
	if r, err := tx.OnRecord(&recs[0]); r != NoTransactionRequest || err != nil {
		t.Fatalf("nothing asked: %v %v", r, err)
	}
	tx.CommitTransactionOn(&recs[0])
	tx.AbortTransactionOn(&recs[2])
	if r, _ := tx.OnRecord(&recs[0]); r != CommitTransactionRequest {
		t.Fatalf("record 0: %v", r)
	}
	if r, _ := tx.OnRecord(&recs[0]); r != NoTransactionRequest {
		t.Fatalf("a request is taken once: %v", r)
	}
	if r, _ := tx.OnRecord(&recs[2]); r != AbortTransactionRequest {
		t.Fatalf("record 2: %v", r)
	}
	tx.CommitTransactionOn(&recs[1])
	tx.AbortTransactionOn(&recs[1])
	if _, err := tx.OnRecord(&recs[1]); err == nil || err.Error() != "Connector requested both commit and abort of same record against topic/partition t/null" {
		t.Fatalf("both on a record: %v", err)
	}
	tx.AbortTransaction()
	if r, err := tx.OnBatch(); r != AbortTransactionRequest || err != nil {
		t.Fatalf("batch abort: %v %v", r, err)
	}
	if r, _ := tx.OnBatch(); r != NoTransactionRequest {
		t.Fatalf("a batch request is taken once: %v", r)
	}
	tx.CommitTransaction()
	tx.AbortTransaction()
	if _, err := tx.OnBatch(); err == nil || err.Error() != "Connector requested both commit and abort of same transaction" {
		t.Fatalf("both on a batch: %v", err)
	}
}

func TestSourceConnectorDeclares(t *testing.T) {
	type cfg struct {
		File string `key:"file" default:"" doc:"file"`
		N    int    `key:"n" default:"1" doc:"n"`
	}
	c := SourceConnector[cfg]{Class: "x.Y", Version: "1",
		ExactlyOnce: func(c cfg) ExactlyOnceSupport {
			if c.File == "" {
				return ExactlyOnceUnsupported
			}
			return ExactlyOnceSupported
		}}
	ctx := context.Background()
	var d ExactlyOnceDeclarer = c
	if s, err := d.ExactlyOnceSupport(ctx, map[string]string{"file": "/x"}); s != ExactlyOnceSupported || err != nil {
		t.Errorf("with a file: %v %v", s, err)
	}
	if s, err := d.ExactlyOnceSupport(ctx, map[string]string{}); s != ExactlyOnceUnsupported || err != nil {
		t.Errorf("without: %v %v", s, err)
	}
	if _, err := d.ExactlyOnceSupport(ctx, map[string]string{"n": "x"}); err == nil {
		t.Error("a config that does not parse answers nothing")
	}
	if ok, err := d.CanDefineTransactionBoundaries(ctx, nil); ok || err != nil {
		t.Errorf("no TransactionBoundaries: %v %v", ok, err)
	}
	var none ExactlyOnceDeclarer = SourceConnector[cfg]{Class: "x.Z"}
	if s, err := none.ExactlyOnceSupport(ctx, nil); s != ExactlyOnceUndeclared || err != nil {
		t.Errorf("no ExactlyOnce: %v %v", s, err)
	}
}
