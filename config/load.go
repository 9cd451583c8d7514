package config

import (
	"bytes"
	"fmt"
	"os"
	"strings"

	"gopkg.in/yaml.v3"
)

// Load reads the node config at path over the defaults: a file only needs the
// fields it changes. Every error names the file, the line and the field.
func Load(path string) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	return Parse(path, data)
}

// Parse is Load for bytes already read; name is used in error messages.
func Parse(name string, data []byte) (*Config, error) { return ParseFor(Builtin, name, data) }

// ParseFor is Parse for a node that may run the NFs of cat.
func ParseFor(cat Catalog, name string, data []byte) (*Config, error) {
	cfg := DefaultFor(cat)
	cfg.Path = name
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		return nil, fmt.Errorf("%s: %s", name, strings.TrimPrefix(err.Error(), "yaml: "))
	}
	if len(data) == 0 || root.Kind == 0 {
		return cfg, cfg.validateFor(cat, name, nil)
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true) // a misspelt field is an error, not a silent default
	if err := dec.Decode(cfg); err != nil {
		return nil, decodeError(name, &root, err)
	}
	return cfg, cfg.validateFor(cat, name, &root)
}

// FieldError is one invalid value, located in the file.
type FieldError struct {
	File  string
	Line  int
	Field string // dotted path, e.g. amf.ngap.transport or tacs[0]
	Msg   string
}

func (e *FieldError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d: %s: %s", e.File, e.Line, e.Field, e.Msg)
	}
	return fmt.Sprintf("%s: %s: %s", e.File, e.Field, e.Msg)
}

// lineOf finds the line of a dotted field path ("udm.suci_keys[1].scheme") in
// the parsed document: the line of its value, or of its nearest enclosing
// field written in the file; 0 when none is (a default).
func lineOf(root *yaml.Node, path string) int {
	line, longest := 0, -1
	for _, f := range fieldsOf(root) {
		encloses := f.path == path || strings.HasPrefix(path, f.path+".") || strings.HasPrefix(path, f.path+"[")
		if encloses && len(f.path) > longest {
			line, longest = f.value.Line, len(f.path)
		}
	}
	return line
}

// Save writes c as a node config file that Load reads back unchanged
// (benchmarks and tests start cores from generated configs).
func (c *Config) Save(path string) error {
	data, err := yaml.Marshal(c)
	if err != nil {
		return fmt.Errorf("config: %w", err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		return fmt.Errorf("config: %w", err)
	}
	return nil
}

// Clone returns a deep copy of c.
func (c *Config) Clone() *Config {
	data, err := yaml.Marshal(c)
	if err != nil {
		panic(fmt.Sprintf("config: marshal: %v", err)) // a Config always marshals
	}
	out := &Config{}
	if err := yaml.Unmarshal(data, out); err != nil {
		panic(fmt.Sprintf("config: unmarshal: %v", err))
	}
	return out
}
