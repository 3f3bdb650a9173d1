package golden

import (
	"bytes"
	_ "embed" // golden.schema.json
)

// Schema returns the JSON Schema of a golden file, for editors: with the
// yaml-language-server comment
//
//	# yaml-language-server: $schema=https://raw.githubusercontent.com/mcp-eval/mcp-eval-action/main/pkg/golden/golden.schema.json
//
// at the top of tasks.yaml, VS Code and other editors autocomplete the keys
// and flag unknown ones. The loader is the authority (it also checks what
// a schema cannot: ids unique, matchers against their expected values,
// rubric files); a test keeps the two agreeing on the keys.
//
// It returns a copy: the embedded bytes are shared.
func Schema() []byte { return bytes.Clone(schemaJSON) }

//go:embed golden.schema.json
var schemaJSON []byte
