// Package configprovider resolves Kafka's configuration references,
// ${provider:[path:]key}, with Kafka's built-in config providers (KIP-297,
// KIP-421, KIP-632, KIP-887, KIP-993), configured by the same worker
// properties as in Kafka Connect:
//
//	config.providers=file,dir,env
//	config.providers.file.class=org.apache.kafka.common.config.provider.FileConfigProvider
//	config.providers.file.param.allowed.paths=/etc/secrets
//	config.providers.env.class=org.apache.kafka.common.config.provider.EnvVarConfigProvider
//	config.providers.env.param.allowlist.pattern=^DB_.*
//
// Resolution follows Kafka's ConfigTransformer: every match of
// \$\{([^}]*?):(([^}]*?):)?([^}]*?)\} is looked up, and a reference to an
// unknown provider or to a key the provider does not have is left as it is
// (Result.Unresolved says which, and why); a provider that fails to read
// (an unreadable file, a path given to the environment provider) is an
// error, as Kafka's ConfigException. The values substituted are returned
// too (Result.Secrets), so that callers can hide them wherever they might
// be echoed.
package configprovider

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/tributary-dev/tributary/internal/properties"
)

// Class names of Kafka's built-in providers.
const (
	FileClass      = "org.apache.kafka.common.config.provider.FileConfigProvider"
	DirectoryClass = "org.apache.kafka.common.config.provider.DirectoryConfigProvider"
	EnvVarClass    = "org.apache.kafka.common.config.provider.EnvVarConfigProvider"
)

// Pattern is Kafka's ConfigTransformer.DEFAULT_PATTERN.
var Pattern = regexp.MustCompile(`\$\{([^}]*?):(([^}]*?):)?([^}]*?)\}`)

// Reference is one ${provider:[path:]key} in a value.
type Reference struct {
	Text, Provider, Path, Key string
}

// References returns the references in v, in order.
func References(v string) []Reference {
	var out []Reference
	for _, m := range Pattern.FindAllStringSubmatch(v, -1) {
		out = append(out, Reference{Text: m[0], Provider: m[1], Path: m[3], Key: m[4]})
	}
	return out
}

// HasReference reports whether v holds a reference.
func HasReference(v string) bool { return Pattern.MatchString(v) }

// Provider is a config provider: Get returns the values of keys at path
// (a file, a directory; "" for the environment) that it has, and an error
// when it cannot read. It must be safe for concurrent use.
type Provider interface {
	Get(path string, keys []string) (map[string]string, error)
}

// Set is the providers configured by config.providers.
type Set struct {
	providers map[string]Provider
}

// New builds the providers that props (worker properties) configure:
// config.providers lists names, config.providers.NAME.class names each
// one's class (one of Kafka's three built-ins), and
// config.providers.NAME.param.* are its parameters. environ is the
// environment the env provider reads (os.Environ()). No config.providers:
// an empty Set, which resolves nothing.
func New(props map[string]string, environ []string) (*Set, error) {
	s := &Set{providers: map[string]Provider{}}
	var errs []error
	for _, name := range splitList(props["config.providers"]) {
		prefix := "config.providers." + name + "."
		params := map[string]string{}
		for k, v := range props {
			if p, ok := strings.CutPrefix(k, prefix+"param."); ok {
				params[p] = v
			}
		}
		class := strings.TrimSpace(props[prefix+"class"])
		var p Provider
		var err error
		switch class {
		case FileClass:
			p, err = newFile(params)
		case DirectoryClass:
			p, err = newDirectory(params)
		case EnvVarClass:
			p, err = newEnv(params, environ)
		case "":
			err = fmt.Errorf("%sclass is not set", prefix)
		default:
			err = fmt.Errorf("%sclass=%s: not a provider Tributary has (it has %s, %s and %s)", prefix, class, FileClass, DirectoryClass, EnvVarClass)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("config provider %s: %w", name, err))
			continue
		}
		s.providers[name] = p
	}
	for k := range props {
		if rest, ok := strings.CutPrefix(k, "config.providers."); ok {
			name, _, _ := strings.Cut(rest, ".")
			if _, ok := s.providers[name]; !ok && !slices.Contains(splitList(props["config.providers"]), name) {
				errs = append(errs, fmt.Errorf("%s: provider %s is not listed in config.providers", k, name))
			}
		}
	}
	sort.Slice(errs, func(i, j int) bool { return errs[i].Error() < errs[j].Error() })
	return s, errors.Join(errs...)
}

// Names lists the configured providers.
func (s *Set) Names() []string {
	names := make([]string, 0, len(s.providers))
	for n := range s.providers {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Result is a resolution's outcome.
type Result struct {
	// Values are the settings with their references replaced.
	Values map[string]string
	// Unresolved lists, by setting, the references left as they are and
	// why ("${file:/x:k}: no key k in /x").
	Unresolved map[string][]string
	// Secrets are the values substituted for references.
	Secrets []string
	// Refs maps each of Secrets to the (first) reference it replaced, so
	// that values derived from resolved settings can be given their
	// references back (see Unresolve).
	Refs map[string]string
}

// Unresolve replaces, in v, every value that a reference resolved to
// with that reference: a task config a connector derived from its
// resolved config gets its references back before it is stored. Longer
// values are replaced first.
func (r Result) Unresolve(v string) string {
	if len(r.Refs) == 0 || v == "" {
		return v
	}
	vals := make([]string, 0, len(r.Refs))
	for s := range r.Refs {
		vals = append(vals, s)
	}
	sort.Slice(vals, func(i, j int) bool {
		if len(vals[i]) != len(vals[j]) {
			return len(vals[i]) > len(vals[j])
		}
		return vals[i] < vals[j]
	})
	pairs := make([]string, 0, 2*len(vals))
	for _, s := range vals {
		pairs = append(pairs, s, r.Refs[s])
	}
	return strings.NewReplacer(pairs...).Replace(v)
}

// Resolve replaces the references in config's values (see the package
// documentation). config is not modified.
func (s *Set) Resolve(config map[string]string) (Result, error) {
	res := Result{Values: make(map[string]string, len(config)), Unresolved: map[string][]string{}, Refs: map[string]string{}}
	type pathKey struct{ provider, path string }
	wanted := map[pathKey][]string{}
	for _, v := range config {
		for _, r := range References(v) {
			pk := pathKey{r.Provider, r.Path}
			if !slices.Contains(wanted[pk], r.Key) {
				wanted[pk] = append(wanted[pk], r.Key)
			}
		}
	}
	found := map[pathKey]map[string]string{}
	var errs []error
	for pk, keys := range wanted {
		p, ok := s.providers[pk.provider]
		if !ok {
			continue
		}
		data, err := p.Get(pk.path, keys)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		found[pk] = data
	}
	if len(errs) > 0 {
		sort.Slice(errs, func(i, j int) bool { return errs[i].Error() < errs[j].Error() })
		return Result{}, errors.Join(errs...)
	}
	for k, v := range config {
		res.Values[k] = Pattern.ReplaceAllStringFunc(v, func(m string) string {
			r := References(m)[0]
			p, ok := s.providers[r.Provider]
			if !ok {
				why := "no config provider " + r.Provider
				if len(s.providers) == 0 {
					why += " (the worker has no config.providers)"
				}
				res.Unresolved[k] = append(res.Unresolved[k], m+": "+why)
				return m
			}
			val, ok := found[pathKey{r.Provider, r.Path}][r.Key]
			if !ok {
				res.Unresolved[k] = append(res.Unresolved[k], m+": "+missing(p, r))
				return m
			}
			if val != "" && !slices.Contains(res.Secrets, val) {
				res.Secrets = append(res.Secrets, val)
				res.Refs[val] = m
			}
			return val
		})
	}
	return res, nil
}

// missing says why provider p had no value for r.
func missing(p Provider, r Reference) string {
	if a, ok := p.(interface{ allowed(string) bool }); ok && r.Path != "" && !a.allowed(r.Path) {
		return "the path " + r.Path + " is not in the provider's allowed.paths"
	}
	switch p.(type) {
	case *env:
		return "no environment variable " + r.Key + " (or one that allowlist.pattern excludes)"
	case *directory:
		return "no file " + r.Key + " in the directory " + r.Path
	}
	if r.Path == "" {
		return "no path given (${provider:path:key})"
	}
	return "no key " + r.Key + " in " + r.Path
}

func splitList(v string) []string {
	var out []string
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// allowedPaths is Kafka's AllowedPaths: nil allows every path.
type allowedPaths []string

func newAllowedPaths(params map[string]string) (allowedPaths, error) {
	v := params["allowed.paths"]
	if v == "" {
		return nil, nil
	}
	var out allowedPaths
	for _, p := range strings.Split(v, ",") {
		p = filepath.Clean(strings.TrimSpace(p))
		if !filepath.IsAbs(p) {
			return nil, fmt.Errorf("allowed.paths: Path %s is not absolute", p)
		}
		if _, err := os.Stat(p); err != nil {
			return nil, fmt.Errorf("allowed.paths: Path %s does not exist", p)
		}
		out = append(out, p)
	}
	return out, nil
}

// allowed reports whether path, normalised, starts with an allowed path
// (element-wise, as java.nio.file.Path.startsWith).
func (a allowedPaths) allowed(path string) bool {
	if a == nil {
		return true
	}
	p := filepath.Clean(path)
	for _, root := range a {
		if p == root || strings.HasPrefix(p, strings.TrimSuffix(root, string(filepath.Separator))+string(filepath.Separator)) {
			return true
		}
	}
	return false
}

// file is FileConfigProvider: keys of a Java properties file.
type file struct{ paths allowedPaths }

func newFile(params map[string]string) (*file, error) {
	a, err := newAllowedPaths(params)
	return &file{a}, err
}

func (f *file) allowed(p string) bool { return f.paths.allowed(p) }

func (f *file) Get(path string, keys []string) (map[string]string, error) {
	out := map[string]string{}
	if path == "" || !f.paths.allowed(path) {
		return out, nil
	}
	props, err := properties.Load(filepath.Clean(path))
	if err != nil {
		return nil, fmt.Errorf("could not read properties from file %s: %w", path, errors.Unwrap(err))
	}
	for _, k := range keys {
		if v, ok := props[k]; ok {
			out[k] = v
		}
	}
	return out, nil
}

// directory is DirectoryConfigProvider: the content of regular files of a
// directory, by file name.
type directory struct{ paths allowedPaths }

func newDirectory(params map[string]string) (*directory, error) {
	a, err := newAllowedPaths(params)
	return &directory{a}, err
}

func (d *directory) allowed(p string) bool { return d.paths.allowed(p) }

func (d *directory) Get(path string, keys []string) (map[string]string, error) {
	out := map[string]string{}
	if path == "" || !d.paths.allowed(path) {
		return out, nil
	}
	dir := filepath.Clean(path)
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return out, nil // Kafka: a warning, no values
	}
	for _, k := range keys {
		if k == "" || strings.ContainsRune(k, filepath.Separator) || k == "." || k == ".." {
			continue
		}
		p := filepath.Join(dir, k)
		if st, err := os.Stat(p); err != nil || !st.Mode().IsRegular() {
			continue
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return nil, fmt.Errorf("could not read file %s for property %s: %w", p, k, errors.Unwrap(err))
		}
		out[k] = string(b)
	}
	return out, nil
}

// env is EnvVarConfigProvider: environment variables whose names match
// allowlist.pattern (all by default).
type env struct{ vars map[string]string }

func newEnv(params map[string]string, environ []string) (*env, error) {
	pattern := ".*"
	if p, ok := params["allowlist.pattern"]; ok {
		pattern = p
	}
	re, err := regexp.Compile(`^(?:` + pattern + `)$`)
	if err != nil {
		return nil, fmt.Errorf("allowlist.pattern: %w", err)
	}
	e := &env{vars: map[string]string{}}
	for _, kv := range environ {
		if k, v, ok := strings.Cut(kv, "="); ok && re.MatchString(k) {
			e.vars[k] = v
		}
	}
	return e, nil
}

func (e *env) Get(path string, keys []string) (map[string]string, error) {
	if path != "" {
		return nil, fmt.Errorf("path is not supported for EnvVarConfigProvider, invalid value '%s'", path)
	}
	out := map[string]string{}
	for _, k := range keys {
		if v, ok := e.vars[k]; ok {
			out[k] = v
		}
	}
	return out, nil
}
