module github.com/mcp-eval/mcp-eval-action

go 1.26
