package config

import (
	"bytes"
	"fmt"
	"reflect"

	"go.yaml.in/yaml/v3"
)

// Redacted is what MarshalRedacted prints in place of a secret.
const Redacted = "REDACTED"

// MarshalRedacted returns c as YAML (the effective configuration, defaults
// filled in and ${ENV} expanded) with every field tagged `secret:"true"`
// replaced by REDACTED. Any other occurrence of a secret's text (say, the
// same token pasted into a URL) is replaced as well.
func (c *Config) MarshalRedacted() ([]byte, error) {
	var n yaml.Node
	if err := n.Encode(c); err != nil {
		return nil, fmt.Errorf("cannot encode config: %w", err)
	}
	var secrets []string
	redactNode(&n, reflect.TypeOf(c).Elem(), &secrets)
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(&n); err != nil {
		return nil, fmt.Errorf("cannot encode config: %w", err)
	}
	out := buf.Bytes()
	for _, s := range secrets {
		if len(s) >= 4 {
			out = bytes.ReplaceAll(out, []byte(s), []byte(Redacted))
		}
	}
	return out, nil
}

func redactNode(n *yaml.Node, t reflect.Type, secrets *[]string) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch {
	case n.Kind == yaml.DocumentNode:
		for _, c := range n.Content {
			redactNode(c, t, secrets)
		}
	case n.Kind == yaml.SequenceNode && (t.Kind() == reflect.Slice || t.Kind() == reflect.Array):
		for _, c := range n.Content {
			redactNode(c, t.Elem(), secrets)
		}
	case n.Kind == yaml.MappingNode && t.Kind() == reflect.Map:
		for i := 1; i < len(n.Content); i += 2 {
			redactNode(n.Content[i], t.Elem(), secrets)
		}
	case n.Kind == yaml.MappingNode && t.Kind() == reflect.Struct:
		for i := 0; i+1 < len(n.Content); i += 2 {
			f, ok := fieldByTag(t, n.Content[i].Value)
			if !ok {
				continue
			}
			if f.Tag.Get("secret") == "true" {
				redactAll(n.Content[i+1], secrets)
				continue
			}
			redactNode(n.Content[i+1], f.Type, secrets)
		}
	}
}

// redactAll replaces every non-empty scalar below n (map keys excepted:
// a header's name is not its value).
func redactAll(n *yaml.Node, secrets *[]string) {
	switch n.Kind {
	case yaml.ScalarNode:
		if n.Value != "" && n.Tag != "!!null" {
			*secrets = append(*secrets, n.Value)
			n.Value, n.Tag, n.Style = Redacted, "!!str", 0
		}
	case yaml.MappingNode:
		for i := 1; i < len(n.Content); i += 2 {
			redactAll(n.Content[i], secrets)
		}
	default:
		for _, c := range n.Content {
			redactAll(c, secrets)
		}
	}
}
