package integration

import (
	"context"
	"log/slog"
	"os"
	"testing"
	"time"

	"github.com/tributary-dev/tributary/connectors/postgres"
	"github.com/tributary-dev/tributary/integration/harness"
	"github.com/tributary-dev/tributary/sdk"
)

type tmpCtx struct{ sdk.SourceTaskContext }

func (tmpCtx) Offset(context.Context, sdk.Partition) (sdk.Offset, error) { return nil, nil }
func (tmpCtx) Logger() *slog.Logger                                     { return slog.New(slog.NewTextHandler(os.Stderr, nil)) }
func (tmpCtx) Info() sdk.TaskInfo                                       { return sdk.TaskInfo{} }

func TestTmpDiffSchema(t *testing.T) {
	pg := harness.StartPostgresT(t)
	pg.Exec(t, pgDiffSchema)
	pg.Exec(t, pgDiffRows(0))
	cfg := pgConnectorConfig(pg, "cdc", "public.alltypes,public.composite,public.fullrow,public.docs")
	task, err := postgres.Connector().(sdk.SourcePlugin).NewSourceTask(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := task.Open(context.Background(), tmpCtx{}); err != nil {
		t.Fatal(err)
	}
	defer task.Close(context.Background())
	n := 0
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for n < 8 {
		recs, err := task.Poll(ctx, 2000)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range recs {
			if err := r.Validate(); err != nil {
				t.Fatal(err)
			}
		}
		n += len(recs)
	}
}
