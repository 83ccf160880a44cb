package postgres

import (
	"strings"
	"testing"
)

func TestStandbyProblems(t *testing.T) {
	ok := Config{PublicationName: "pub", PublicationAutocreate: "disabled"}
	for _, tc := range []struct {
		name     string
		cfg      func(*Config)
		version  int
		feedback bool
		want     map[string]string // key -> part of the message
	}{
		{"runs", func(*Config) {}, 170002, true, nil},
		{"signals read only", func(c *Config) { c.SignalTable, c.ReadOnly = "public.sig", true }, 160000, true, nil},
		{"too old", func(*Config) {}, 150008, true, map[string]string{"database.hostname": "PostgreSQL 16 or later"}},
		{"no feedback", func(*Config) {}, 170002, false, map[string]string{"database.hostname": "hot_standby_feedback = on"}},
		{"autocreate", func(c *Config) { c.PublicationAutocreate = "filtered" }, 170002, true,
			map[string]string{"publication.autocreate.mode": `Create it on the primary (CREATE PUBLICATION "pub" FOR TABLE ...`}},
		{"watermarks", func(c *Config) { c.SignalTable = "public.sig" }, 170002, true, map[string]string{"read.only": "set read.only=true"}},
		{"failover", func(c *Config) { c.SlotFailover = true }, 170002, true, map[string]string{"slot.failover": "cannot be a failover slot"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := ok
			tc.cfg(&cfg)
			got := standbyProblems(&cfg, tc.version, tc.feedback)
			if len(got) != len(tc.want) {
				t.Fatalf("got %v, want problems on %v", got, tc.want)
			}
			for _, p := range got {
				if w, ok := tc.want[p.Key]; !ok || !strings.Contains(p.Message, w) {
					t.Errorf("%s: %q, want it to say %q", p.Key, p.Message, w)
				}
			}
			err := standbyError(got)
			if (err == nil) != (len(got) == 0) {
				t.Fatalf("standbyError: %v", err)
			}
			if err != nil && !strings.Contains(err.Error(), got[0].Message) {
				t.Errorf("standbyError %q lacks %q", err, got[0].Message)
			}
		})
	}
}
