// modern_client.mjs - the official TypeScript SDK 2.x client
// (@modelcontextprotocol/client) against an MCP endpoint: connect with a
// version negotiation mode, listTools, callTool echo.
// Usage: node modern_client.mjs URL MODE TEXT
//   MODE: "pin"  - modern era at exactly 2026-07-28 (server/discover first)
//         "auto" - probe with server/discover, fall back to initialize
// Prints one JSON summary line on stdout (including what went on the
// wire); exits 0 only if every step worked, 1 otherwise.
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';

const [url, mode = 'pin', text = 'hello from sdk 2.x'] = process.argv.slice(2);
setTimeout(() => {
  console.error('modern_client: timed out');
  process.exit(3);
}, 20000).unref();

const wire = [];
async function recordingFetch(input, init = {}) {
  const h = new Headers(init.headers || {});
  let rpc = null;
  let metaVersion = null;
  if (typeof init.body === 'string') {
    try {
      const m = JSON.parse(init.body);
      rpc = m.method ?? (m.id !== undefined ? 'response' : null);
      metaVersion = m.params?._meta?.['io.modelcontextprotocol/protocolVersion'] ?? null;
    } catch { rpc = 'unparsable'; }
  }
  const res = await fetch(input, init);
  wire.push({
    http: init.method || 'GET', rpc, status: res.status,
    protocolVersion: h.get('mcp-protocol-version'),
    metaVersion,
    mcpMethod: h.get('mcp-method'),
    mcpName: h.get('mcp-name'),
    session: h.has('mcp-session-id'),
    contentType: res.headers.get('content-type'),
  });
  return res;
}

const negotiation = mode === 'auto' ? { mode: 'auto' } : { mode: { pin: '2026-07-28' } };
const summary = { sdk: '2.x', mode, wire };
try {
  const transport = new StreamableHTTPClientTransport(new URL(url), { fetch: recordingFetch });
  const client = new Client({ name: 'mcpgw-interop-modern', version: '1.0.0' },
                            { versionNegotiation: negotiation });
  await client.connect(transport);
  summary.era = client.getProtocolEra() ?? null;
  summary.protocolVersion = client.getNegotiatedProtocolVersion() ?? null;
  summary.server = client.getServerVersion() ?? null;
  summary.supportedVersions = client.getDiscoverResult()?.supportedVersions ?? null;
  const tools = await client.listTools();
  summary.tools = tools.tools.map((t) => t.name);
  const res = await client.callTool({ name: 'echo', arguments: { text } });
  summary.echo = res.content?.[0]?.text ?? null;
  summary.isError = res.isError ?? false;
  summary.resultType = res.resultType ?? null;
  await client.close();
  console.log(JSON.stringify(summary));
  process.exit(0);
} catch (err) {
  summary.error = String(err?.stack || err);
  console.log(JSON.stringify(summary));
  console.error(`modern_client: ${err?.stack || err}`);
  process.exit(1);
}
