package postgres

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/tributary-dev/tributary/sdk/schema"
)

// tableID names a table.
type tableID struct{ schema, name string }

func (id tableID) String() string { return id.schema + "." + id.name }

// quoted returns the table's name quoted for SQL.
func (id tableID) quoted() string {
	return pgx.Identifier{id.schema, id.name}.Sanitize()
}

// column is one column of a captured table.
type column struct {
	name     string
	typ      uint32
	typmod   int32
	typeName string // format_type, for casts
	notNull  bool
	def      string // default expression, "" for none
	pk       bool
	conv     *converter // nil: the type is unknown and left out
	// keySchema is schema before the column transformations (key
	// fields have none, as Debezium's).
	keySchema *schema.Schema
	inValue   bool // in the change events' values (column filters)
	schema    *schema.Schema
}

// table is a captured table with the schemas of its change events.
type table struct {
	oid      uint32
	id       tableID
	identity byte // relreplident: d default, n nothing, f full, i index
	columns  []*column
	pk       []int // indexes into columns, in primary-key order
	key      []int // the message key's columns: pk, or message.key.columns
	topic    string

	keySchema, valueSchema, envelopeSchema *schema.Schema
	// Source values boxed once for all the table's events.
	boxedPrefix, boxedDB, boxedSchema, boxedTable any
	valueCols                                     []int // columns in the value, in order
	valueIndex                                    []int // column index → value field index, -1 if absent
}

// catalog reads table definitions and types from the database.
type catalog struct {
	cfg     *Config
	filters *filters
	logger  *slog.Logger
	types   map[uint32]*pgType
	mapper  *typeMapper
	src     *sourceSchemas
	// rules are the column transformations and message.key.columns (nil:
	// none).
	rules *columnRules
}

func newCatalog(cfg *Config, f *filters, logger *slog.Logger) *catalog {
	c := &catalog{cfg: cfg, filters: f, logger: logger, src: newSourceSchemas()}
	return c
}

// loadTypes reads pg_type and the enum labels.
func (c *catalog) loadTypes(ctx context.Context, conn *pgx.Conn) error {
	types := map[uint32]*pgType{}
	rows, err := conn.Query(ctx, `SELECT oid, typname, typtype, typcategory, typelem, typbasetype FROM pg_type`)
	if err != nil {
		return fmt.Errorf("postgres: read types: %w", err)
	}
	for rows.Next() {
		var t pgType
		var typtype, cat string
		if err := rows.Scan(&t.oid, &t.name, &typtype, &cat, &t.elem, &t.base); err != nil {
			rows.Close()
			return fmt.Errorf("postgres: read types: %w", err)
		}
		t.typtype, t.category = typtype[0], cat[0]
		types[t.oid] = &t
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("postgres: read types: %w", err)
	}
	rows, err = conn.Query(ctx, `SELECT enumtypid, enumlabel FROM pg_enum ORDER BY enumtypid, enumsortorder`)
	if err != nil {
		return fmt.Errorf("postgres: read enum labels: %w", err)
	}
	for rows.Next() {
		var oid uint32
		var label string
		if err := rows.Scan(&oid, &label); err != nil {
			rows.Close()
			return fmt.Errorf("postgres: read enum labels: %w", err)
		}
		if t := types[oid]; t != nil {
			t.labels = append(t.labels, label)
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("postgres: read enum labels: %w", err)
	}
	c.types = types
	c.mapper = newTypeMapper(c.cfg, types)
	return nil
}

// publishedTables returns the captured tables of the publication, sorted by
// name.
func (c *catalog) publishedTables(ctx context.Context, conn *pgx.Conn) ([]tableID, error) {
	rows, err := conn.Query(ctx, `SELECT schemaname, tablename FROM pg_publication_tables WHERE pubname = $1 ORDER BY 1, 2`, c.cfg.PublicationName)
	if err != nil {
		return nil, fmt.Errorf("postgres: read the tables of publication %s: %w", c.cfg.PublicationName, err)
	}
	ids, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (tableID, error) {
		var id tableID
		err := r.Scan(&id.schema, &id.name)
		return id, err
	})
	if err != nil {
		return nil, fmt.Errorf("postgres: read the tables of publication %s: %w", c.cfg.PublicationName, err)
	}
	out := ids[:0]
	for _, id := range ids {
		if c.filters.table(id.schema, id.name) {
			out = append(out, id)
		}
	}
	return out, nil
}

// filteredTables returns the tables in the database the filters select
// (for a filtered publication), sorted by name.
func (c *catalog) filteredTables(ctx context.Context, conn *pgx.Conn) ([]tableID, error) {
	rows, err := conn.Query(ctx, `SELECT n.nspname, c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
		WHERE c.relkind IN ('r', 'p') AND NOT c.relispartition ORDER BY 1, 2`)
	if err != nil {
		return nil, fmt.Errorf("postgres: list tables: %w", err)
	}
	ids, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (tableID, error) {
		var id tableID
		err := r.Scan(&id.schema, &id.name)
		return id, err
	})
	if err != nil {
		return nil, fmt.Errorf("postgres: list tables: %w", err)
	}
	out := ids[:0]
	for _, id := range ids {
		if c.filters.table(id.schema, id.name) {
			out = append(out, id)
		}
	}
	return out, nil
}

// errNoTable is returned for a table that does not exist (any more).
var errNoTable = errors.New("postgres: no such table")

// describe reads a table's definition. Column types come from the catalog;
// streaming passes the relation message's instead (rel non-nil).
func (c *catalog) describe(ctx context.Context, conn *pgx.Conn, id tableID, rel *relationInfo) (*table, error) {
	t := &table{id: id}
	var ident string
	err := conn.QueryRow(ctx, `SELECT c.oid, c.relreplident FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
		WHERE n.nspname = $1 AND c.relname = $2`, id.schema, id.name).Scan(&t.oid, &ident)
	if errors.Is(err, pgx.ErrNoRows) {
		if rel == nil {
			return nil, fmt.Errorf("%w: %s", errNoTable, id)
		}
		ident = "d"
	} else if err != nil {
		return nil, fmt.Errorf("postgres: describe %s: %w", id, err)
	}
	t.identity = ident[0]
	rows, err := conn.Query(ctx, `SELECT a.attname, a.atttypid, a.atttypmod, format_type(a.atttypid, NULL), a.attnotnull, coalesce(pg_get_expr(d.adbin, d.adrelid), ''),
			coalesce(a.attnum = ANY(i.indkey), false), coalesce(array_position(i.indkey, a.attnum), 0)
		FROM pg_attribute a
		LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
		LEFT JOIN pg_index i ON i.indrelid = a.attrelid AND i.indisprimary
		WHERE a.attrelid = $1 AND a.attnum > 0 AND NOT a.attisdropped AND a.attgenerated = ''
		ORDER BY a.attnum`, t.oid)
	if err != nil {
		return nil, fmt.Errorf("postgres: describe %s: %w", id, err)
	}
	type catCol struct {
		column
		pkPos int
	}
	var cat []catCol
	for rows.Next() {
		var cc catCol
		if err := rows.Scan(&cc.name, &cc.typ, &cc.typmod, &cc.typeName, &cc.notNull, &cc.def, &cc.pk, &cc.pkPos); err != nil {
			rows.Close()
			return nil, fmt.Errorf("postgres: describe %s: %w", id, err)
		}
		cat = append(cat, cc)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("postgres: describe %s: %w", id, err)
	}
	byName := map[string]*catCol{}
	for i := range cat {
		byName[cat[i].name] = &cat[i]
	}
	var pkPos []int
	if rel != nil {
		// The relation message is what the values that follow are
		// encoded with; the catalog adds nullability, defaults and the
		// primary key.
		for _, rc := range rel.columns {
			col := &column{name: rc.name, typ: rc.typ, typmod: rc.typmod}
			pos := 0
			if cc := byName[rc.name]; cc != nil {
				col.notNull, col.def, col.pk, pos, col.typeName = cc.notNull, cc.def, cc.pk, cc.pkPos, cc.typeName
			}
			t.columns = append(t.columns, col)
			pkPos = append(pkPos, pos)
		}
	} else {
		for i := range cat {
			col := cat[i].column
			t.columns = append(t.columns, &col)
			pkPos = append(pkPos, cat[i].pkPos)
		}
	}
	if err := c.build(t, pkPos); err != nil {
		return nil, err
	}
	return t, nil
}

// build fills in a table's converters and schemas.
func (c *catalog) build(t *table, pkPos []int) error {
	type pkCol struct{ idx, pos int }
	var pks []pkCol
	for i, col := range t.columns {
		conv, err := c.mapper.converter(col.typ, col.typmod)
		if err != nil {
			if !errors.Is(err, errUnknownType) {
				return err
			}
			c.logger.Warn("column left out: its type is not supported (include.unknown.datatypes=true includes it as bytes)",
				"table", t.id.String(), "column", col.name, "error", err)
			if col.pk {
				return fmt.Errorf("postgres: table %s: primary-key column %s: %w", t.id, col.name, err)
			}
			continue
		}
		col.conv = conv
		s := conv.schema
		if !col.notNull {
			s = s.AsOptional()
		}
		if v, ok := c.defaultValue(col); ok {
			s = s.WithDefault(v)
		}
		if s.Name == nameVarDecimal && s != conv.schema {
			// A struct value carries its schema: the field's.
			col.conv = &converter{schema: conv.schema, decode: varDecimalDecoder(s), toast: conv.toast}
		}
		col.schema, col.keySchema = s, s
		if c.rules != nil {
			typname := ""
			if pt := c.types[col.typ]; pt != nil {
				typname = pt.name
			}
			keyNames := c.rules.keyFor(t.id)
			inKey := slices.Contains(keyNames, col.name) || keyNames == nil && col.pk
			if r := c.rules.rule(t.id, col, typname); r != nil && (!inKey || r.kind == rulePropagate || r.kind == rulePropagateType) {
				// A key column keeps its values: the key (and so the
				// value's) would change with them.
				r.apply(col, typname)
			}
		}
		col.inValue = c.filters.column(t.id.schema, t.id.name, col.name)
		if col.pk {
			pks = append(pks, pkCol{i, pkPos[i]})
		}
	}
	for i := 1; i < len(pks); i++ { // insertion sort by key position
		for j := i; j > 0 && pks[j].pos < pks[j-1].pos; j-- {
			pks[j], pks[j-1] = pks[j-1], pks[j]
		}
	}
	for _, p := range pks {
		t.pk = append(t.pk, p.idx)
	}
	t.key = t.pk
	if names := c.rules.keyFor(t.id); names != nil {
		t.key = nil
		for _, n := range names {
			i := slices.IndexFunc(t.columns, func(col *column) bool { return col.name == n && col.conv != nil })
			if i < 0 {
				return fmt.Errorf("postgres: message.key.columns: table %s has no column %s", t.id, n)
			}
			t.key = append(t.key, i)
		}
	}
	prefix := c.cfg.TopicPrefix + "." + t.id.schema + "." + t.id.name
	t.topic = prefix
	t.boxedPrefix, t.boxedDB, t.boxedSchema, t.boxedTable = c.cfg.TopicPrefix, c.cfg.DBName, t.id.schema, t.id.name
	if len(t.key) > 0 {
		kb := schema.StructOf(prefix + ".Key")
		for _, i := range t.key {
			col := t.columns[i]
			s := col.keySchema // without the column transformations' parameters
			if s.Optional && col.pk {
				s = col.conv.schema
			}
			kb.Field(col.name, s)
		}
		t.keySchema = kb.Build()
	}
	vb := schema.StructOf(prefix + ".Value").Optional()
	t.valueIndex = make([]int, len(t.columns))
	t.valueCols = nil
	for i, col := range t.columns {
		t.valueIndex[i] = -1
		if col.conv == nil || !col.inValue {
			continue
		}
		t.valueIndex[i] = len(t.valueCols)
		t.valueCols = append(t.valueCols, i)
		vb.Field(col.name, col.schema)
	}
	var err error
	if t.valueSchema, err = vb.BuildErr(); err != nil {
		return fmt.Errorf("postgres: table %s: %w", t.id, err)
	}
	t.envelopeSchema = c.src.envelope(prefix+".Envelope", t.valueSchema)
	return nil
}

var literalDefault = regexp.MustCompile(`^'((?:[^']|'')*)'(?:::[a-zA-Z_ "]+(?:\[\])?(?:\(\d+(?:,\d+)?\))?)*$`)
var numberDefault = regexp.MustCompile(`^\(?(-?[0-9]+(?:\.[0-9]+)?)\)?(?:::[a-zA-Z_ ]+)?$`)

// defaultValue returns a column's default when it is a constant.
func (c *catalog) defaultValue(col *column) (any, bool) {
	if col.def == "" || col.conv == nil {
		return nil, false
	}
	var text string
	switch {
	case literalDefault.MatchString(col.def):
		text = strings.ReplaceAll(literalDefault.FindStringSubmatch(col.def)[1], "''", "'")
	case numberDefault.MatchString(col.def):
		text = numberDefault.FindStringSubmatch(col.def)[1]
	case col.def == "true":
		text = "t"
	case col.def == "false":
		text = "f"
	default:
		if col.notNull {
			// Debezium gives a NOT NULL column whose default it cannot
			// evaluate (a sequence, a function) its type's zero value.
			return zeroValue(col.conv.schema), true
		}
		return nil, false
	}
	v, err := col.conv.decode([]byte(text))
	if err != nil {
		return nil, false
	}
	return v, true
}
