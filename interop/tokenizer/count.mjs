// Reads [{"encoding": "o200k_base", "texts": ["…", …]}, …] on stdin and
// prints, for each request, the token count of each text with js-tiktoken
// (one JSON array of arrays): the independent implementation pkg/tokens is
// checked against. One process for every request: node starts slowly.
import { getEncoding } from "js-tiktoken";

let input = "";
process.stdin.setEncoding("utf8");
for await (const chunk of process.stdin) input += chunk;
const encs = {};
const out = JSON.parse(input).map((req) => {
  const enc = (encs[req.encoding] ??= getEncoding(req.encoding));
  // No special tokens: a description that contains "<|endoftext|>" is text.
  return req.texts.map((t) => enc.encode(t, [], []).length);
});
process.stdout.write(JSON.stringify(out));
