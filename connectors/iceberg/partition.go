package iceberg

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/apache/iceberg-go"
)

// partitionField is one entry of a partition-by list: a source column and
// a transform.
type partitionField struct {
	column    string
	transform iceberg.Transform
	name      string
}

// parsePartitionField parses Apache's partition-by syntax: a column name
// (identity), year(c), month(c), day(c), hour(c), bucket(c, n) or
// truncate(c, w) (the number may also come first, as Spark writes it).
func parsePartitionField(s string) (partitionField, error) {
	s = strings.TrimSpace(s)
	open := strings.IndexByte(s, '(')
	if open < 0 {
		if s == "" || strings.ContainsAny(s, ") ,") {
			return partitionField{}, fmt.Errorf("partition field %q is not a column or transform(column)", s)
		}
		return partitionField{column: s, transform: iceberg.IdentityTransform{}, name: s}, nil
	}
	if !strings.HasSuffix(s, ")") {
		return partitionField{}, fmt.Errorf("partition field %q: missing )", s)
	}
	fn := strings.ToLower(strings.TrimSpace(s[:open]))
	args := strings.Split(s[open+1:len(s)-1], ",")
	for i := range args {
		args[i] = strings.TrimSpace(args[i])
		if args[i] == "" {
			return partitionField{}, fmt.Errorf("partition field %q: empty argument", s)
		}
	}
	one := func() (string, error) {
		if len(args) != 1 {
			return "", fmt.Errorf("partition field %q: %s takes one column", s, fn)
		}
		return args[0], nil
	}
	two := func() (string, int, error) {
		if len(args) != 2 {
			return "", 0, fmt.Errorf("partition field %q: %s takes a column and a number", s, fn)
		}
		col, num := args[0], args[1]
		n, err := strconv.Atoi(num)
		if err != nil {
			if n2, err2 := strconv.Atoi(col); err2 == nil {
				col, n, err = num, n2, nil
			}
		}
		if err != nil || n <= 0 {
			return "", 0, fmt.Errorf("partition field %q: %s needs a positive number", s, fn)
		}
		return col, n, nil
	}
	var pf partitionField
	switch fn {
	case "year", "years", "month", "months", "day", "days", "hour", "hours":
		col, err := one()
		if err != nil {
			return pf, err
		}
		unit := strings.TrimSuffix(fn, "s")
		pf = partitionField{column: col, name: col + "_" + unit}
		switch unit {
		case "year":
			pf.transform = iceberg.YearTransform{}
		case "month":
			pf.transform = iceberg.MonthTransform{}
		case "day":
			pf.transform = iceberg.DayTransform{}
		case "hour":
			pf.transform = iceberg.HourTransform{}
		}
	case "bucket":
		col, n, err := two()
		if err != nil {
			return pf, err
		}
		pf = partitionField{column: col, transform: iceberg.BucketTransform{NumBuckets: n}, name: col + "_bucket"}
	case "truncate":
		col, n, err := two()
		if err != nil {
			return pf, err
		}
		pf = partitionField{column: col, transform: iceberg.TruncateTransform{Width: n}, name: col + "_trunc"}
	default:
		return pf, fmt.Errorf("partition field %q: unknown transform %q (year, month, day, hour, bucket, truncate)", s, fn)
	}
	if pf.column == "" || strings.ContainsAny(pf.column, "() ") {
		return pf, fmt.Errorf("partition field %q: bad column name", s)
	}
	return pf, nil
}

// partitionSpec builds the spec of a new table. In upsert mode a partition
// source column must be an id column: an equality delete applies within
// its partition, so a row whose partition value changes would otherwise
// survive its key's delete.
func partitionSpec(sc *iceberg.Schema, fields []string, idColumns []string, keyed bool) (*iceberg.PartitionSpec, error) {
	if len(fields) == 0 {
		return iceberg.UnpartitionedSpec, nil
	}
	var pfs []iceberg.PartitionField
	for i, f := range fields {
		pf, err := parsePartitionField(f)
		if err != nil {
			return nil, err
		}
		nf, ok := sc.FindFieldByName(pf.column)
		if !ok {
			return nil, fmt.Errorf("partition column %q is not a column of the table", pf.column)
		}
		if keyed && !contains(idColumns, pf.column) {
			return nil, fmt.Errorf("partition column %q must be an id column (%s) for upserts and deletes", pf.column, strings.Join(idColumns, ", "))
		}
		pfs = append(pfs, iceberg.PartitionField{SourceIDs: []int{nf.ID}, FieldID: iceberg.PartitionDataIDStart + i, Name: pf.name, Transform: pf.transform})
	}
	spec := iceberg.NewPartitionSpec(pfs...)
	return &spec, nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
