// requests_client.mjs - the official TypeScript SDK 1.x client
// (@modelcontextprotocol/sdk) answers requests the server sends it in the
// middle of a tool call: @modelcontextprotocol/server-everything's
// trigger-sampling-request (sampling/createMessage),
// trigger-elicitation-request (elicitation/create) and get-roots-list
// (roots/list).  The server's request arrives on the tool call's SSE
// response; the client's answer is a separate POST whose body is a
// JSON-RPC response, which must reach the replica holding the session, or
// the tool call never completes.  Runs SESSIONS sessions one after the
// other, each calling the three tools ROUNDS times, then ends each with
// DELETE.  Every answer carries a marker unique to the session and round,
// and the tool result must echo it back (roots/list is asked once per
// session: its marker is the session's).
// Usage: node requests_client.mjs '{"url":..., "sessions":4, "rounds":2}'
// Prints one JSON summary line on stdout; exits 0 when every call
// succeeded, 1 otherwise.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  CreateMessageRequestSchema, ElicitRequestSchema, ListRootsRequestSchema,
} from '@modelcontextprotocol/sdk/types.js';

const opt = JSON.parse(process.argv[2]);
setTimeout(() => {
  console.error('requests_client: timed out');
  process.exit(3);
}, 90000).unref();

const summary = {
  ok: 0, failed: 0, failures: [], sessionIds: [], served: {},
  responsesPosted: 0, responseStatuses: [],
};

// Records the status of every POST that carries a JSON-RPC response.
async function recordingFetch(input, init = {}) {
  let isResponse = false;
  if (typeof init.body === 'string') {
    try {
      const m = JSON.parse(init.body);
      isResponse = !Array.isArray(m) && m.method === undefined && m.id !== undefined;
    } catch { /* not JSON */ }
  }
  const res = await fetch(input, init);
  if (isResponse) {
    summary.responsesPosted++;
    summary.responseStatuses.push(res.status);
  }
  return res;
}

function count(kind) {
  summary.served[kind] = (summary.served[kind] ?? 0) + 1;
}

async function oneSession(s) {
  let marker = '';
  const client = new Client(
    { name: 'mcpgw-requests-interop', version: '1.0.0' },
    { capabilities: { sampling: {}, elicitation: {}, roots: { listChanged: true } } },
  );
  client.setRequestHandler(CreateMessageRequestSchema, async () => {
    count('sampling');
    return { role: 'assistant', model: 'mcpgw-test', content: { type: 'text', text: `sampled-${marker}` } };
  });
  client.setRequestHandler(ElicitRequestSchema, async (req) => {
    count('elicitation');
    // fill every property the form asks for with a value of its type
    const props = req.params?.requestedSchema?.properties ?? {};
    const content = {};
    for (const [k, v] of Object.entries(props)) {
      if (v.type === 'boolean') content[k] = true;
      else if (v.type === 'number' || v.type === 'integer') content[k] = v.minimum ?? 1;
      else if (Array.isArray(v.enum)) content[k] = v.enum[0];
      else if (v.type === 'array') {
        const it = v.items ?? {};
        content[k] = Array.isArray(it.enum) ? [it.enum[0]]
          : Array.isArray(it.anyOf) ? [it.anyOf[0].const] : [];
      } else if (Array.isArray(v.oneOf)) content[k] = v.oneOf[0].const;
      else if (v.format === 'email') content[k] = `${marker}@example.com`;
      else if (v.format === 'date') content[k] = '2026-11-30';
      else if (v.format === 'uri') content[k] = `https://example.com/${marker}`;
      else content[k] = `elicited-${marker}`;
    }
    return { action: 'accept', content };
  });
  client.setRequestHandler(ListRootsRequestSchema, async () => {
    count('roots');
    // server-everything asks once per session and keeps the answer
    return { roots: [{ uri: `file:///roots/s${s}`, name: `s${s}` }] };
  });
  const transport = new StreamableHTTPClientTransport(new URL(opt.url), { fetch: recordingFetch });
  await client.connect(transport);
  summary.sessionIds.push(transport.sessionId ?? null);
  const call = async (name, args, want) => {
    try {
      const r = await client.callTool({ name, arguments: args }, undefined, { timeout: 15000 });
      const text = JSON.stringify(r.content ?? []);
      if (!r.isError && text.includes(want)) summary.ok++;
      else {
        summary.failed++;
        summary.failures.push(`${name}: result lacks ${want}: ${text.slice(0, 300)}`);
      }
    } catch (e) {
      summary.failed++;
      summary.failures.push(`${name}: ${e?.message ?? e}`.slice(0, 300));
    }
  };
  for (let r = 0; r < opt.rounds; r++) {
    marker = `s${s}r${r}`;
    await call('trigger-sampling-request', { prompt: `p-${marker}`, maxTokens: 10 }, `sampled-${marker}`);
    await call('trigger-elicitation-request', {}, marker);
    await call('get-roots-list', {}, `file:///roots/s${s}`);
  }
  try { await transport.terminateSession(); } catch { /* counted by the shell */ }
  await client.close();
}

try {
  for (let s = 0; s < opt.sessions; s++) await oneSession(s);
} catch (e) {
  summary.failed++;
  summary.failures.push(`session: ${e?.message ?? e}`.slice(0, 300));
}
console.log(JSON.stringify(summary));
process.exit(summary.failed === 0 ? 0 : 1);
