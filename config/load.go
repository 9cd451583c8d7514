package config

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"
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
func Parse(name string, data []byte) (*Config, error) {
	cfg := Default()
	cfg.Path = name
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		return nil, fmt.Errorf("%s: %s", name, strings.TrimPrefix(err.Error(), "yaml: "))
	}
	if len(data) == 0 || root.Kind == 0 {
		return cfg, cfg.validate(name, nil)
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true) // a misspelt field is an error, not a silent default
	if err := dec.Decode(cfg); err != nil {
		return nil, decodeError(name, err)
	}
	return cfg, cfg.validate(name, &root)
}

// decodeError rewrites yaml's "line N: msg" lines as "file:N: msg".
func decodeError(name string, err error) error {
	var te *yaml.TypeError
	if !errors.As(err, &te) {
		return fmt.Errorf("%s: %s", name, strings.TrimPrefix(err.Error(), "yaml: "))
	}
	lines := make([]string, 0, len(te.Errors))
	for _, e := range te.Errors {
		if rest, ok := strings.CutPrefix(e, "line "); ok {
			lines = append(lines, name+":"+strings.Replace(rest, ": ", ": ", 1))
			continue
		}
		lines = append(lines, name+": "+e)
	}
	return errors.New(strings.Join(lines, "\n"))
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
// the parsed document; 0 when the field is not written in the file (a default).
func lineOf(root *yaml.Node, path string) int {
	if root == nil {
		return 0
	}
	n := root
	if n.Kind == yaml.DocumentNode && len(n.Content) > 0 {
		n = n.Content[0]
	}
	line := 0
	for _, part := range strings.Split(path, ".") {
		key, index := part, -1
		if i := strings.IndexByte(part, '['); i >= 0 && strings.HasSuffix(part, "]") {
			key = part[:i]
			index, _ = strconv.Atoi(part[i+1 : len(part)-1])
		}
		n = mappingValue(n, key)
		if n == nil {
			return line
		}
		line = n.Line
		if index >= 0 {
			if n.Kind != yaml.SequenceNode || index >= len(n.Content) {
				return line
			}
			n = n.Content[index]
			line = n.Line
		}
	}
	return line
}

func mappingValue(n *yaml.Node, key string) *yaml.Node {
	if n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i+1]
		}
	}
	return nil
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
