// legacy_client.mjs - the official TypeScript SDK 1.x client
// (@modelcontextprotocol/sdk: Client + StreamableHTTPClientTransport)
// against an MCP endpoint in the legacy era: connect (initialize),
// listTools, callTool echo, then end the session (DELETE).
// Usage: node legacy_client.mjs URL TEXT
// Prints one JSON summary line on stdout; exits 0 only if every step
// worked, 1 with the error on stderr otherwise.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

const [url, text = 'hello from sdk 1.x'] = process.argv.slice(2);
setTimeout(() => {
  console.error('legacy_client: timed out');
  process.exit(3);
}, 20000).unref();

// Records what the SDK puts on the wire, so the test can check the
// protocol it actually spoke (not only what the API returned).
const wire = [];
async function recordingFetch(input, init = {}) {
  const h = new Headers(init.headers || {});
  let rpc = null;
  if (typeof init.body === 'string') {
    try {
      const m = JSON.parse(init.body);
      rpc = m.method ?? (m.id !== undefined ? 'response' : null);
    } catch { rpc = 'unparsable'; }
  }
  const res = await fetch(input, init);
  wire.push({
    http: init.method || 'GET', rpc, status: res.status,
    protocolVersion: h.get('mcp-protocol-version'),
    session: h.has('mcp-session-id'),
    contentType: res.headers.get('content-type'),
  });
  return res;
}

const summary = { sdk: '1.x', wire };
try {
  const transport = new StreamableHTTPClientTransport(new URL(url), { fetch: recordingFetch });
  const client = new Client({ name: 'mcpgw-interop-legacy', version: '1.0.0' });
  await client.connect(transport);
  summary.protocolVersion = transport.protocolVersion ?? null;
  summary.sessionId = transport.sessionId ?? null;
  summary.server = client.getServerVersion() ?? null;
  const tools = await client.listTools();
  summary.tools = tools.tools.map((t) => t.name);
  const res = await client.callTool({ name: 'echo', arguments: { text } });
  summary.echo = res.content?.[0]?.text ?? null;
  summary.isError = res.isError ?? false;
  await transport.terminateSession();
  await client.close();
  console.log(JSON.stringify(summary));
  process.exit(0);
} catch (err) {
  summary.error = String(err?.stack || err);
  console.log(JSON.stringify(summary));
  console.error(`legacy_client: ${err?.stack || err}`);
  process.exit(1);
}
