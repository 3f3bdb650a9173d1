// Reads GitHub-flavoured Markdown (a PR comment or a job summary) on stdin
// and prints a whole HTML page that shows it as GitHub does: rendered by
// marked (GFM: tables, strikethrough, autolinks, raw HTML such as
// <details>), inside class="markdown-body" styled by github-markdown-css
// (light theme), in a column as wide as GitHub's comment column.
//
//   node page.mjs [--width 780] < comment.md > comment.html
//
// GitHub renders a newline inside a comment's paragraph as a line break,
// so breaks are on: the page is never shorter than GitHub's. Alerts
// ("> [!NOTE]") stay blockquotes, the same height or less.
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { marked } from "marked";

const args = process.argv.slice(2);
let width = 780;
for (let i = 0; i < args.length; i++) {
  if (args[i] === "--width" && i + 1 < args.length) width = Number(args[++i]);
  else {
    process.stderr.write(`page.mjs: unknown argument ${args[i]}; usage: node page.mjs [--width PX] < in.md\n`);
    process.exit(2);
  }
}
if (!Number.isInteger(width) || width < 200 || width > 4000) {
  process.stderr.write(`page.mjs: --width ${width} must be a whole number of pixels from 200 to 4000\n`);
  process.exit(2);
}

const require = createRequire(import.meta.url);
const css = readFileSync(require.resolve("github-markdown-css/github-markdown-light.css"), "utf8");

let input = "";
process.stdin.setEncoding("utf8");
for await (const chunk of process.stdin) input += chunk;

const body = marked.parse(input, { gfm: true, breaks: true, async: false });

// The column: GitHub's comment box is `width` px wide outside, with a 1 px
// border and 16 px of padding around the markdown-body.
process.stdout.write(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>GFM preview</title>
<style>${css}</style>
<style>
body { margin: 0; background: #fff; }
.comment { box-sizing: border-box; width: ${width}px; border: 1px solid #d1d9e0; border-radius: 6px; }
.comment > .markdown-body { padding: 16px; }
</style></head>
<body><div class="comment" id="column"><div class="markdown-body">
${body}
</div></div></body></html>
`);
