package mcpclient

import (
	"encoding/json"

	"github.com/mcp-eval/mcp-eval-action/pkg/report"
)

// Surface is what a model sees of the tool, for report.ToolSurfaceHash.
func (t Tool) Surface() report.ToolSurface {
	return report.ToolSurface{Name: t.Name, Description: t.Description, InputSchema: t.InputSchema, OutputSchema: t.OutputSchema, Annotations: t.annotationsJSON()}
}

// ToolSurfaces is Surface of each tool.
func ToolSurfaces(tools []Tool) []report.ToolSurface {
	out := make([]report.ToolSurface, len(tools))
	for i, t := range tools {
		out[i] = t.Surface()
	}
	return out
}

// annotationsJSON takes the annotations from the tool as sent when
// possible, so hints ToolAnnotations does not know still count.
func (t Tool) annotationsJSON() json.RawMessage {
	if len(t.Raw) > 0 {
		var raw struct {
			Annotations json.RawMessage `json:"annotations"`
		}
		if json.Unmarshal(t.Raw, &raw) == nil && len(raw.Annotations) > 0 && string(raw.Annotations) != "null" {
			return raw.Annotations
		}
	}
	if t.Annotations == nil {
		return nil
	}
	b, _ := json.Marshal(t.Annotations)
	return b
}
