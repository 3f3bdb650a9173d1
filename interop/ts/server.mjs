// Fixture MCP server built on the public API of the TypeScript SDK v2
// (@modelcontextprotocol/server + @modelcontextprotocol/node). Used by interop tests.
//
//   node server.mjs stdio          serve MCP over stdin/stdout
//   node server.mjs http PORT      serve Streamable HTTP on http://127.0.0.1:PORT/mcp
//                                  (PORT 0 picks a free port; the URL is printed on stderr)
//
// Tools (tools/list order): echo {text} (readOnlyHint), add {a,b} -> structuredContent {sum},
// fail (isError). Resource: mem://readme. Prompt: greet {who}.
import { createServer } from 'node:http';
import { McpServer, createMcpHandler } from '@modelcontextprotocol/server';
import * as z from 'zod';

function build() {
  const s = new McpServer({ name: 'interop-ts-v2', version: '0.0.1' });
  s.registerTool(
    'echo',
    {
      description: 'Echo the text back',
      inputSchema: z.object({ text: z.string() }),
      annotations: { readOnlyHint: true },
    },
    async ({ text }) => ({ content: [{ type: 'text', text }] }),
  );
  s.registerTool(
    'add',
    {
      description: 'Add two numbers',
      inputSchema: z.object({ a: z.number(), b: z.number() }),
      outputSchema: z.object({ sum: z.number() }),
    },
    async ({ a, b }) => ({
      content: [{ type: 'text', text: String(a + b) }],
      structuredContent: { sum: a + b },
    }),
  );
  s.registerTool(
    'fail',
    { description: 'Always returns a tool error (isError: true)' },
    async () => ({ content: [{ type: 'text', text: 'boom' }], isError: true }),
  );
  s.registerResource(
    'readme',
    'mem://readme',
    { mimeType: 'text/plain', description: 'A static text resource' },
    async (uri) => ({ contents: [{ uri: uri.href, mimeType: 'text/plain', text: 'hello from interop-ts-v2' }] }),
  );
  s.registerPrompt(
    'greet',
    { description: 'A greeting prompt', argsSchema: z.object({ who: z.string() }) },
    async ({ who }) => ({ messages: [{ role: 'user', content: { type: 'text', text: `Say hi to ${who}` } }] }),
  );
  return s;
}

const mode = process.argv[2] ?? 'stdio';

if (mode === 'stdio') {
  const { serveStdio } = await import('@modelcontextprotocol/server/stdio');
  serveStdio(build);
} else if (mode === 'http') {
  const port = Number(process.argv[3] ?? 0);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    console.error(`invalid port: ${process.argv[3]}`);
    process.exit(2);
  }
  const { toNodeHandler, localhostHostValidation, localhostOriginValidation } = await import('@modelcontextprotocol/node');
  const handler = toNodeHandler(createMcpHandler(build));
  const checkHost = localhostHostValidation();
  const checkOrigin = localhostOriginValidation();
  const httpServer = createServer((req, res) => {
    if (!checkHost(req, res) || !checkOrigin(req, res)) return;
    const path = new URL(req.url ?? '/', 'http://127.0.0.1').pathname;
    if (path !== '/mcp') {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found\n');
      return;
    }
    void handler(req, res);
  });
  httpServer.listen(port, '127.0.0.1', () => {
    console.error(`listening on http://127.0.0.1:${httpServer.address().port}/mcp`);
  });
  for (const sig of ['SIGTERM', 'SIGINT']) process.on(sig, () => process.exit(0));
} else {
  console.error(`usage: node server.mjs stdio | http PORT (got ${mode})`);
  process.exit(2);
}
