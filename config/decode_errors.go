package config

import (
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// yaml.v3 reports decode problems as "line N: ..." strings with no field and
// no column; these are the shapes it writes (gopkg.in/yaml.v3 decode.go:
// terror, the KnownFields check and the unique-keys check).
var (
	wrongTypeRE    = regexp.MustCompile("^line ([0-9]+): cannot unmarshal (!![a-z]+)(?: `(.*)`)? into (.+)$")
	unknownFieldRE = regexp.MustCompile(`^line ([0-9]+): field (.+) not found in type .+$`)
	duplicateKeyRE = regexp.MustCompile(`^line ([0-9]+): mapping key (".*") already defined at line ([0-9]+)$`)
)

// decodeError rewrites yaml's type errors as FieldErrors: the line yaml gives
// and the value or key it names locate the node in the parsed document, and
// the node's place in the tree gives the dotted field.
func decodeError(name string, root *yaml.Node, err error) error {
	var te *yaml.TypeError
	if !errors.As(err, &te) {
		return fmt.Errorf("%s: %s", name, strings.TrimPrefix(err.Error(), "yaml: "))
	}
	doc := &document{file: name, fields: fieldsOf(root), reported: map[*yaml.Node]bool{}}
	errs := make([]error, 0, len(te.Errors))
	for _, e := range te.Errors {
		errs = append(errs, doc.locate(e))
	}
	return errors.Join(errs...)
}

// field is one mapping entry or sequence item of the document.
type field struct {
	path  string     // e.g. udm.suci_keys[1].scheme
	key   *yaml.Node // nil for sequence items
	value *yaml.Node
}

// fieldsOf lists every field of the document in order.
func fieldsOf(root *yaml.Node) []field {
	var out []field
	var walk func(path string, n *yaml.Node)
	walk = func(path string, n *yaml.Node) {
		switch n.Kind {
		case yaml.DocumentNode:
			for _, c := range n.Content {
				walk(path, c)
			}
		case yaml.MappingNode:
			for i := 0; i+1 < len(n.Content); i += 2 {
				p := n.Content[i].Value
				if path != "" {
					p = path + "." + p
				}
				out = append(out, field{path: p, key: n.Content[i], value: n.Content[i+1]})
				walk(p, n.Content[i+1])
			}
		case yaml.SequenceNode:
			for i, c := range n.Content {
				p := fmt.Sprintf("%s[%d]", path, i)
				out = append(out, field{path: p, value: c})
				walk(p, c)
			}
		}
	}
	if root != nil {
		walk("", root)
	}
	return out
}

type document struct {
	file   string
	fields []field
	// reported marks nodes already named, so that two bad values on one line
	// ({sbi_port: x, metrics_port: x}) name two fields.
	reported map[*yaml.Node]bool
}

func (d *document) locate(msg string) error {
	if m := wrongTypeRE.FindStringSubmatch(msg); m != nil {
		line, _ := strconv.Atoi(m[1])
		// The Go type tells a list inside a list on one line from its parent.
		isBad := func(f field) bool { return isValue(f.value, m[2], m[3]) && typeName(typeAt(f.path)) == m[4] }
		if f, ok := d.find(line, isBad, valueOf); ok {
			return &FieldError{File: d.file, Line: line, Field: f.path, Msg: fmt.Sprintf("want %s, got %s", want(m[4]), got(f.value))}
		}
	}
	if m := unknownFieldRE.FindStringSubmatch(msg); m != nil {
		line, _ := strconv.Atoi(m[1])
		if f, ok := d.find(line, func(f field) bool { return f.key != nil && f.key.Value == m[2] }, keyOf); ok {
			return &FieldError{File: d.file, Line: line, Field: f.path, Msg: "unknown field; known here: " + strings.Join(knownKeys(parentOf(f.path)), ", ")}
		}
	}
	if m := duplicateKeyRE.FindStringSubmatch(msg); m != nil {
		line, _ := strconv.Atoi(m[1])
		key, _ := strconv.Unquote(m[2])
		if f, ok := d.find(line, func(f field) bool { return f.key != nil && f.key.Value == key }, keyOf); ok {
			return &FieldError{File: d.file, Line: line, Field: f.path, Msg: fmt.Sprintf("given twice (first at line %s)", m[3])}
		}
	}
	if rest, ok := strings.CutPrefix(msg, "line "); ok { // a shape yaml.v3 may add later
		return fmt.Errorf("%s:%s", d.file, rest)
	}
	return fmt.Errorf("%s: %s", d.file, msg)
}

func valueOf(f field) *yaml.Node { return f.value }
func keyOf(f field) *yaml.Node   { return f.key }

// find returns the first field not yet reported whose node is on line and matches.
func (d *document) find(line int, match func(field) bool, node func(field) *yaml.Node) (field, bool) {
	for _, f := range d.fields {
		n := node(f)
		if n != nil && n.Line == line && !d.reported[n] && match(f) {
			d.reported[n] = true
			return f, true
		}
	}
	return field{}, false
}

// isValue says whether n is the node yaml's message names by its tag and
// value; yaml cuts values longer than 10 characters to 7 and "...".
func isValue(n *yaml.Node, tag, value string) bool {
	if n.ShortTag() != tag {
		return false
	}
	if n.Kind != yaml.ScalarNode {
		return true
	}
	if cut, ok := strings.CutSuffix(value, "..."); ok && len(n.Value) > 10 {
		return strings.HasPrefix(n.Value, cut)
	}
	return n.Value == value
}

// want says in the file's terms what a Go type of the config accepts.
func want(goType string) string {
	switch {
	case goType == "time.Duration":
		return "a duration such as 6s"
	case goType == "string":
		return "a string"
	case goType == "bool":
		return "true or false"
	case strings.HasPrefix(goType, "int") || strings.HasPrefix(goType, "uint"):
		return "an integer"
	case strings.HasPrefix(goType, "float"):
		return "a number"
	case strings.HasPrefix(goType, "[]"):
		return "a list"
	case strings.HasPrefix(goType, "map[") || strings.HasPrefix(goType, "config.") || strings.HasPrefix(goType, "domain."):
		return "a mapping"
	}
	return goType
}

func got(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.AliasNode:
		return "the alias *" + n.Value
	}
	return strconv.Quote(n.Value)
}

// parentOf is the path of the mapping that holds path's last key.
func parentOf(path string) string {
	if i := strings.LastIndexByte(path, '.'); i >= 0 {
		return path[:i]
	}
	return ""
}

// knownKeys lists the keys the config accepts in the mapping at path.
func knownKeys(path string) []string { return yamlKeys(typeAt(path)) }

// typeAt is the Go type the config decodes the field at path into; nil
// when path is not a field of the config.
func typeAt(path string) reflect.Type {
	t := reflect.TypeOf(Config{})
	if path == "" {
		return t
	}
	for _, part := range strings.Split(path, ".") {
		key, _, _ := strings.Cut(part, "[")
		if t != nil && t.Kind() == reflect.Map { // a map's keys are data (smf.qos.weights.<5QI>)
			t = t.Elem()
		} else if t = fieldType(t, key); t == nil {
			return nil
		}
		for range strings.Count(part, "[") { // one list level per index
			if t.Kind() != reflect.Slice {
				return nil
			}
			t = t.Elem()
		}
	}
	return t
}

func typeName(t reflect.Type) string {
	if t == nil {
		return ""
	}
	return t.String()
}

// fieldType is the type of the struct field t reads from key, inline fields included.
func fieldType(t reflect.Type, key string) reflect.Type {
	if t == nil || t.Kind() != reflect.Struct {
		return nil
	}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		name, opts, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if strings.Contains(opts, "inline") {
			if ft := fieldType(f.Type, key); ft != nil {
				return ft
			}
		} else if name == key {
			return f.Type
		}
	}
	return nil
}

func yamlKeys(t reflect.Type) []string {
	if t == nil || t.Kind() != reflect.Struct {
		return nil
	}
	var keys []string
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		name, opts, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		switch {
		case strings.Contains(opts, "inline"):
			keys = append(keys, yamlKeys(f.Type)...)
		case name != "" && name != "-":
			keys = append(keys, name)
		}
	}
	return keys
}
