package postgres

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/tributary-dev/tributary/connectors/internal/cdcmetrics"
	"github.com/tributary-dev/tributary/sdk"
)

// slotMetrics are the replication slot's series, as postgres_exporter's
// pg_replication_slot collector has them but measured by the connector
// that owns the slot: how much WAL it holds back, whether a connection
// uses it, and how close the server is to invalidating it.
type slotMetrics struct {
	lag, retained, active, safe *sdk.Gauge
	status                      *sdk.GaugeVec
	slot                        string
}

// walStatuses are pg_replication_slots.wal_status's values (PostgreSQL 13+).
var walStatuses = []string{"reserved", "extended", "unreserved", "lost"}

// registerMetrics registers a task's series in reg: Debezium's snapshot
// and streaming metrics (server=topic.prefix) and the slot's.
func registerMetrics(reg *sdk.Metrics, topicPrefix, slot string) (*cdcmetrics.Metrics, *slotMetrics) {
	m := cdcmetrics.New(reg, "postgres", topicPrefix, time.Now)
	m.Queue(reg, "postgres", topicPrefix, outBatches)
	return m, newSlotMetrics(reg, slot)
}

// MetricsDoc lists the families a task registers (their series carry the
// connector and task labels the worker adds too): what Tributary's
// README's list of series is generated from.
func MetricsDoc() []sdk.MetricFamily {
	reg := sdk.NewMetrics()
	registerMetrics(reg, "<topic.prefix>", "<slot.name>")
	return reg.Families()
}

func newSlotMetrics(reg *sdk.Metrics, slot string) *slotMetrics {
	g := func(name, help string) *sdk.Gauge { return reg.Gauge(name, help, "slot_name").With(slot) }
	return &slotMetrics{
		slot: slot,
		lag: g("tributary_postgres_slot_lag_bytes",
			"WAL the server wrote after the position the connector confirmed: pg_wal_lsn_diff(pg_current_wal_lsn(), confirmed_flush_lsn)."),
		retained: g("tributary_postgres_slot_retained_bytes",
			"WAL the slot keeps on the server's disk: pg_wal_lsn_diff(pg_current_wal_lsn(), restart_lsn)."),
		active: g("tributary_postgres_slot_active", "Whether a connection streams from the slot (1) or not (0)."),
		safe: g("tributary_postgres_slot_safe_wal_size_bytes",
			"WAL that can still be written before the slot is in danger of being invalidated (max_slot_wal_keep_size; PostgreSQL 13+, NaN when unlimited)."),
		status: reg.Gauge("tributary_postgres_slot_wal_status",
			"The slot's wal_status (PostgreSQL 13+): 1 for the current one of reserved, extended, unreserved and lost.", "slot_name", "wal_status"),
	}
}

// slotState is a slot's row of pg_replication_slots.
type slotState struct {
	active            bool
	lag, retained     int64
	walStatus         string
	safeWAL           *int64
	hasWALStatus, any bool
}

func readSlotState(ctx context.Context, db *pgx.Conn, slot string, pg13 bool) (slotState, error) {
	var st slotState
	q := `SELECT active, coalesce(pg_wal_lsn_diff(pg_current_wal_lsn(), confirmed_flush_lsn), 0)::bigint,
		coalesce(pg_wal_lsn_diff(pg_current_wal_lsn(), restart_lsn), 0)::bigint`
	if pg13 {
		q += `, coalesce(wal_status, ''), safe_wal_size`
	} else {
		q += `, '', NULL::bigint`
	}
	err := db.QueryRow(ctx, q+` FROM pg_replication_slots WHERE slot_name = $1`, slot).
		Scan(&st.active, &st.lag, &st.retained, &st.walStatus, &st.safeWAL)
	if errors.Is(err, pgx.ErrNoRows) {
		return st, nil
	}
	if err != nil {
		return st, fmt.Errorf("postgres: read slot %s: %w", slot, err)
	}
	st.any, st.hasWALStatus = true, pg13
	return st, nil
}

func (m *slotMetrics) set(st slotState) {
	if m == nil || !st.any {
		return
	}
	m.active.SetBool(st.active)
	m.lag.Set(float64(st.lag))
	m.retained.Set(float64(st.retained))
	if !st.hasWALStatus {
		return
	}
	if st.safeWAL != nil {
		m.safe.Set(float64(*st.safeWAL))
	} else {
		m.safe.Set(math.NaN())
	}
	for _, s := range walStatuses {
		m.status.With(m.slot, s).SetBool(s == st.walStatus)
	}
}
