package postgres

import (
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/tributary-dev/tributary/sdk"
)

// Logical decoding on a standby (PostgreSQL 16 and later): the connector
// may be pointed at a physical standby, where it creates its slot and
// reads the primary's changes as they are replayed, sparing the primary
// the decoding and the snapshot's reads. A standby is read-only, so
// everything the connector would write must come from elsewhere: the
// publication is created on the primary and reaches the standby through
// replication (publication.autocreate.mode=disabled, as Debezium has it),
// incremental snapshots run with read.only=true, and heartbeats only ask
// the server for its position. The standby needs wal_level=logical (as the
// primary does) and hot_standby_feedback=on, without which the primary's
// vacuum removes rows the slot still needs and the standby invalidates it.

// standbyQuery reads what standbyProblems needs, with the server version
// and wal_level: pg_is_in_recovery() and hot_standby_feedback.
const standbyQuery = `SELECT current_setting('server_version_num')::int, current_setting('wal_level'),
	pg_is_in_recovery(), current_setting('hot_standby_feedback')::bool`

// standbyProblems says, each on its key, what stops the connector on a
// standby running PostgreSQL version (server_version_num) with
// hot_standby_feedback as feedback.
func standbyProblems(cfg *Config, version int, feedback bool) []sdk.FieldError {
	var errs []sdk.FieldError
	add := func(key, format string, args ...any) {
		errs = append(errs, sdk.FieldError{Key: key, Message: fmt.Sprintf(format, args...)})
	}
	if version < 160000 {
		add("database.hostname", "the server is a standby (in recovery) running PostgreSQL %d.%d: logical decoding on a standby needs PostgreSQL 16 or later; point database.hostname at the primary",
			version/10000, version%10000/100)
		return errs
	}
	if !feedback {
		add("database.hostname", "the server is a standby with hot_standby_feedback=off: set it on (ALTER SYSTEM SET hot_standby_feedback = on, then SELECT pg_reload_conf() on the standby), "+
			"or the primary's vacuum removes rows the replication slot still needs and the standby invalidates the slot")
	}
	if cfg.PublicationAutocreate != "disabled" {
		name := pgx.Identifier{cfg.PublicationName}.Sanitize()
		add("publication.autocreate.mode", "the server is a standby, which is read-only: the connector cannot create or change publication %s there. "+
			"Create it on the primary (CREATE PUBLICATION %s FOR TABLE ...; it reaches the standby through replication) and set publication.autocreate.mode=disabled",
			cfg.PublicationName, name)
	}
	if cfg.SignalTable != "" && !cfg.ReadOnly {
		add("read.only", "the server is a standby, which is read-only: incremental snapshots cannot write their watermarks into the signal table %s there; set read.only=true", cfg.SignalTable)
	}
	if cfg.SlotFailover {
		add("slot.failover", "the server is a standby: a replication slot created on a standby cannot be a failover slot; set slot.failover=false (or point database.hostname at the primary)")
	}
	return errs
}

// standbyError joins standbyProblems into one error for a task.
func standbyError(problems []sdk.FieldError) error {
	if len(problems) == 0 {
		return nil
	}
	msg := "postgres: cannot capture changes from this standby:"
	for _, p := range problems {
		msg += " " + p.Key + ": " + p.Message + "."
	}
	return fmt.Errorf("%s", msg)
}
