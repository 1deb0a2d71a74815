// sdk_server.mjs - a minimal MCP server on the official TypeScript SDK 2.x
// (@modelcontextprotocol/server): createMcpHandler (modern 2026-07-28
// serving, stateless legacy fallback) mounted on node:http with a small
// adapter to the web-standard Request/Response it expects.  Responses are
// streamed chunk by chunk, so SSE answers stay SSE.
// Tools: echo {text}, whoami {} (the server id given on the command line).
// Usage: node sdk_server.mjs ID
// Prints "listening on 127.0.0.1:PORT" once bound (port chosen by the
// kernel); stops on SIGTERM.
import http from 'node:http';
import { McpServer, createMcpHandler, fromJsonSchema } from '@modelcontextprotocol/server';

const id = process.argv[2] || 'sdk-server';

function factory() {
  const server = new McpServer({ name: 'mcpgw-interop-sdk-server', version: '1.0.0' });
  server.registerTool('echo', {
    description: 'Returns its text argument.',
    inputSchema: fromJsonSchema({
      type: 'object', properties: { text: { type: 'string' } }, required: ['text'],
    }),
  }, async ({ text }) => ({ content: [{ type: 'text', text }] }));
  server.registerTool('whoami', {
    description: 'Returns the id of the server that answered.',
    inputSchema: fromJsonSchema({ type: 'object', properties: {} }),
  }, async () => ({ content: [{ type: 'text', text: id }] }));
  return server;
}

const handler = createMcpHandler(factory, { keepAliveMs: 0 });

const httpServer = http.createServer(async (req, res) => {
  try {
    const chunks = [];
    for await (const c of req) chunks.push(c);
    const headers = new Headers();
    for (let i = 0; i < req.rawHeaders.length; i += 2)
      headers.append(req.rawHeaders[i], req.rawHeaders[i + 1]);
    const hasBody = req.method !== 'GET' && req.method !== 'HEAD';
    const request = new Request(`http://${req.headers.host || '127.0.0.1'}${req.url}`, {
      method: req.method, headers, body: hasBody ? Buffer.concat(chunks) : undefined,
    });
    const response = await handler.fetch(request);
    const out = {};
    response.headers.forEach((v, k) => { out[k] = v; });
    res.writeHead(response.status, out);
    if (response.body) {
      for await (const chunk of response.body) res.write(chunk);
    }
    res.end();
  } catch (err) {
    console.error(`sdk_server: ${err?.stack || err}`);
    if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain' });
    res.end('internal error\n');
  }
});

httpServer.listen(0, '127.0.0.1', () => {
  console.log(`listening on 127.0.0.1:${httpServer.address().port}`);
});
process.on('SIGTERM', () => {
  handler.close?.();
  httpServer.close(() => process.exit(0));
  setTimeout(() => process.exit(0), 2000).unref();
  httpServer.closeAllConnections?.();
});
