package configprovider

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestResolve(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	secrets := filepath.Join(dir, "secrets")
	if err := os.Mkdir(secrets, 0o700); err != nil {
		t.Fatal(err)
	}
	creds := filepath.Join(secrets, "db.properties")
	if err := os.WriteFile(creds, []byte("password=s3cret\nuser: alice\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(secrets, "token"), []byte("tok\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	outside := filepath.Join(dir, "outside.properties")
	if err := os.WriteFile(outside, []byte("password=nope\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := New(map[string]string{
		"config.providers":                             "file, dir,env",
		"config.providers.file.class":                  FileClass,
		"config.providers.file.param.allowed.paths":    secrets,
		"config.providers.dir.class":                   DirectoryClass,
		"config.providers.env.class":                   EnvVarClass,
		"config.providers.env.param.allowlist.pattern": "DB_.*",
	}, []string{"DB_HOST=db.internal", "HOME=/root"})
	if err != nil {
		t.Fatal(err)
	}
	if got := s.Names(); !slices.Equal(got, []string{"dir", "env", "file"}) {
		t.Fatalf("names %v", got)
	}
	res, err := s.Resolve(map[string]string{
		"database.password": "${file:" + creds + ":password}",
		"connection.url":    "postgres://${file:" + creds + ":user}:${file:" + creds + ":password}@${env:DB_HOST}/db",
		"token":             "${dir:" + secrets + ":token}",
		"missing.key":       "${file:" + creds + ":nope}",
		"not.allowed":       "${file:" + outside + ":password}",
		"unknown.provider":  "${vault:secret/db:password}",
		"env.excluded":      "${env:HOME}",
		"plain":             "no reference $ {x:y}",
	})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"database.password": "s3cret",
		"connection.url":    "postgres://alice:s3cret@db.internal/db",
		"token":             "tok\n",
		"missing.key":       "${file:" + creds + ":nope}",
		"not.allowed":       "${file:" + outside + ":password}",
		"unknown.provider":  "${vault:secret/db:password}",
		"env.excluded":      "${env:HOME}",
		"plain":             "no reference $ {x:y}",
	}
	for k, v := range want {
		if res.Values[k] != v {
			t.Errorf("%s = %q, want %q", k, res.Values[k], v)
		}
	}
	for k, why := range map[string]string{
		"missing.key": "no key nope in", "not.allowed": "is not in the provider's allowed.paths",
		"unknown.provider": "no config provider vault", "env.excluded": "no environment variable HOME",
	} {
		if len(res.Unresolved[k]) != 1 || !strings.Contains(res.Unresolved[k][0], why) {
			t.Errorf("unresolved %s: %q, want %q", k, res.Unresolved[k], why)
		}
	}
	if len(res.Unresolved) != 4 {
		t.Errorf("unresolved: %v", res.Unresolved)
	}
	slices.Sort(res.Secrets)
	if !slices.Equal(res.Secrets, []string{"alice", "db.internal", "s3cret", "tok\n"}) {
		t.Errorf("secrets %q", res.Secrets)
	}

	// A provider that cannot read fails, as Kafka's ConfigException.
	if _, err := s.Resolve(map[string]string{"x": "${env:some/path:DB_HOST}"}); err == nil || !strings.Contains(err.Error(), "path is not supported for EnvVarConfigProvider") {
		t.Errorf("env with a path: %v", err)
	}
	if err := os.Chmod(creds, 0); err == nil && os.Getuid() != 0 {
		if _, err := s.Resolve(map[string]string{"x": "${file:" + creds + ":password}"}); err == nil {
			t.Error("unreadable file resolved")
		}
	}
}

func TestNewErrors(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct {
		props map[string]string
		want  string
	}{
		"unknown class": {map[string]string{"config.providers": "vault", "config.providers.vault.class": "com.example.VaultConfigProvider"}, "not a provider Tributary has"},
		"no class":      {map[string]string{"config.providers": "file"}, "config.providers.file.class is not set"},
		"relative path": {map[string]string{"config.providers": "file", "config.providers.file.class": FileClass, "config.providers.file.param.allowed.paths": "etc"}, "is not absolute"},
		"missing path":  {map[string]string{"config.providers": "file", "config.providers.file.class": FileClass, "config.providers.file.param.allowed.paths": "/does/not/exist"}, "does not exist"},
		"bad pattern":   {map[string]string{"config.providers": "env", "config.providers.env.class": EnvVarClass, "config.providers.env.param.allowlist.pattern": "("}, "allowlist.pattern"},
		"not listed":    {map[string]string{"config.providers.file.class": FileClass}, "provider file is not listed in config.providers"},
	} {
		if _, err := New(tc.props, nil); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", name, err, tc.want)
		}
	}
	s, err := New(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := s.Resolve(map[string]string{"a": "${file:/x:y}"})
	if err != nil || res.Values["a"] != "${file:/x:y}" || !strings.Contains(res.Unresolved["a"][0], "the worker has no config.providers") {
		t.Errorf("no providers: %+v %v", res, err)
	}
}

func TestReferences(t *testing.T) {
	t.Parallel()
	refs := References("a ${file:/p:k} b ${env:V} ${x:a:b:c}")
	if len(refs) != 3 || refs[0] != (Reference{"${file:/p:k}", "file", "/p", "k"}) || refs[1] != (Reference{"${env:V}", "env", "", "V"}) ||
		refs[2].Provider != "x" || refs[2].Path != "a" || refs[2].Key != "b:c" {
		t.Fatalf("%+v", refs)
	}
	if HasReference("${novar}") || !HasReference("${a:b}") {
		t.Fatal("HasReference")
	}
}

func TestAllowedPaths(t *testing.T) {
	t.Parallel()
	a := allowedPaths{"/etc/secrets"}
	for p, want := range map[string]bool{"/etc/secrets/x": true, "/etc/secrets": true, "/etc/secrets2/x": false, "/etc/secrets/../passwd": false, "/etc/secrets/a/../b": true} {
		if a.allowed(p) != want {
			t.Errorf("allowed(%s) = %v", p, !want)
		}
	}
}

func TestUnresolve(t *testing.T) {
	t.Parallel()
	s, err := New(map[string]string{"config.providers": "env", "config.providers.env.class": EnvVarClass}, []string{"PASS=s3cret", "USER=alice"})
	if err != nil {
		t.Fatal(err)
	}
	raw := map[string]string{"password": "${env:PASS}", "url": "pg://${env:USER}:${env:PASS}@h"}
	res, err := s.Resolve(raw)
	if err != nil {
		t.Fatal(err)
	}
	// A task config that renames the key and embeds the value.
	if got := res.Unresolve("user=alice password=s3cret"); got != "user=${env:USER} password=${env:PASS}" {
		t.Fatalf("got %q", got)
	}
	if got := res.Unresolve(res.Values["url"]); got != raw["url"] {
		t.Fatalf("got %q", got)
	}
}
