// stateful_client.mjs - the official TypeScript SDK 1.x client
// (@modelcontextprotocol/sdk: Client + StreamableHTTPClientTransport) runs
// one legacy session through a gateway and calls echo in a loop, asking
// after every call which replica answered.  After iteration PAUSE it
// writes CONTROL/paused (JSON: the iteration and the replica) and waits
// (20 s at most) for CONTROL/go, so that the shell can kill a replica
// between two calls; then it waits (10 s at most) for the SDK to reopen
// its standalone GET stream, which the gateway closes when the replica
// dies.  Ends the session with DELETE.
// Usage: node stateful_client.mjs '{"url":..., "n":20, "pause":5,
//   "control":DIR, "echoArg":"text"|"message", "who":"whoami"|"get-env"}'
// Prints one JSON summary line on stdout; exits 0 when every call
// succeeded, 1 otherwise.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const opt = JSON.parse(process.argv[2]);
setTimeout(() => {
  console.error('stateful_client: timed out');
  process.exit(3);
}, 50000).unref();

const summary = {
  sdk: '1.x', ok: 0, failed: 0, failures: [], sessionIds: [], replicas: [],
  transportErrors: [], statuses: [],
};
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// Records the status of every HTTP exchange (method, JSON-RPC method).
async function recordingFetch(input, init = {}) {
  let rpc = null;
  if (typeof init.body === 'string') {
    try { rpc = JSON.parse(init.body).method ?? 'response'; } catch { rpc = '?'; }
  }
  const res = await fetch(input, init);
  summary.statuses.push(`${init.method || 'GET'} ${rpc ?? '-'} ${res.status}`);
  return res;
}

async function who(client) {
  if (opt.who === 'get-env') {
    const r = await client.callTool({ name: 'get-env', arguments: {} });
    return JSON.parse(r.content[0].text).MCPGW_REPLICA ?? '?';
  }
  const r = await client.callTool({ name: 'whoami', arguments: {} });
  return r.content?.[0]?.text ?? '?';
}

async function waitGo() {
  for (let i = 0; i < 400; i++) {
    if (existsSync(join(opt.control, 'go'))) return true;
    await sleep(50);
  }
  return false;
}

let transport;
try {
  transport = new StreamableHTTPClientTransport(new URL(opt.url), { fetch: recordingFetch });
  transport.onerror = (e) => summary.transportErrors.push(String(e?.message || e));
  const client = new Client({ name: 'mcpgw-interop-stateful', version: '1.0.0' });
  client.onerror = (e) => summary.transportErrors.push(String(e?.message || e));
  await client.connect(transport);
  summary.protocolVersion = transport.protocolVersion ?? null;
  const tools = await client.listTools();
  summary.tools = tools.tools.map((t) => t.name);
  for (let i = 1; i <= opt.n; i++) {
    try {
      const text = `call ${i} héllo`;
      const res = await client.callTool({ name: 'echo', arguments: { [opt.echoArg]: text } });
      const got = res.content?.[0]?.text ?? '';
      if (res.isError || !got.includes(text)) throw new Error(`echo answered ${JSON.stringify(res)}`);
      const r = await who(client);
      summary.replicas.push(r);
      summary.ok++;
      if (i === opt.pause) {
        writeFileSync(join(opt.control, 'paused'), JSON.stringify({ i, replica: r }));
        if (!(await waitGo())) summary.failures.push('no go from the shell within 20 s');
        // The SDK reopens its standalone GET stream (1 s back-off) once
        // the gateway closed it: wait for that reconnect (10 s at most).
        const gets = () => summary.statuses.filter((x) => x.startsWith('GET ')).length;
        const before = gets();
        for (let k = 0; k < 200 && gets() === before; k++) await sleep(50);
        summary.getAfterKill = summary.statuses.filter((x) => x.startsWith('GET ')).slice(before);
      }
    } catch (err) {
      summary.failed++;
      summary.failures.push(`#${i}: ${err?.message || err}`);
      if (i === opt.pause) writeFileSync(join(opt.control, 'paused'), JSON.stringify({ i, replica: null }));
    }
    if (!summary.sessionIds.includes(transport.sessionId)) summary.sessionIds.push(transport.sessionId);
  }
  await transport.terminateSession();
  summary.terminated = transport.sessionId === undefined;
  await client.close();
} catch (err) {
  summary.failed++;
  summary.failures.push(`fatal: ${err?.stack || err}`);
}
console.log(JSON.stringify(summary));
process.exit(summary.failed === 0 ? 0 : 1);
