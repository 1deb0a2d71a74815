// stream_client.mjs - the official TypeScript SDK 1.x client runs one
// streamed call through a gateway: trigger-long-running-operation of
// server-everything, whose progress notifications arrive on the call's
// SSE answer.  At the first progress it writes CONTROL/progress (JSON:
// the replica that answers the session) so that the shell can kill that
// replica mid-stream; then it waits for the call's outcome (a result or
// an error) and prints one JSON summary line: the outcome, the error's
// code and message, the progress seen, every HTTP exchange's status.
// Usage: node stream_client.mjs '{"url":..., "control":DIR,
//   "duration":10, "steps":20, "timeoutMs":15000}'
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

const opt = JSON.parse(process.argv[2]);
setTimeout(() => {
  console.error('stream_client: timed out');
  process.exit(3);
}, 50000).unref();

const summary = { sdk: '1.x', statuses: [], transportErrors: [], progress: 0 };
async function recordingFetch(input, init = {}) {
  let rpc = null;
  if (typeof init.body === 'string') {
    try { rpc = JSON.parse(init.body).method ?? 'response'; } catch { rpc = '?'; }
  }
  const res = await fetch(input, init);
  summary.statuses.push(`${init.method || 'GET'} ${rpc ?? '-'} ${res.status}`);
  return res;
}

try {
  const transport = new StreamableHTTPClientTransport(new URL(opt.url), { fetch: recordingFetch });
  transport.onerror = (e) => summary.transportErrors.push(String(e?.message || e));
  const client = new Client({ name: 'mcpgw-interop-stream', version: '1.0.0' });
  client.onerror = (e) => summary.transportErrors.push(String(e?.message || e));
  await client.connect(transport);
  const env = await client.callTool({ name: 'get-env', arguments: {} });
  summary.replica = JSON.parse(env.content[0].text).MCPGW_REPLICA ?? '?';
  const t0 = Date.now();
  try {
    const res = await client.callTool(
      { name: 'trigger-long-running-operation', arguments: { duration: opt.duration, steps: opt.steps } },
      undefined,
      {
        timeout: opt.timeoutMs,
        onprogress: () => {
          summary.progress++;
          if (summary.progress === 1) {
            summary.firstProgressMs = Date.now() - t0;
            writeFileSync(join(opt.control, 'progress'), JSON.stringify({ replica: summary.replica }));
          }
        },
      });
    summary.outcome = 'result';
    summary.text = res.content?.[0]?.text ?? '';
  } catch (err) {
    summary.outcome = 'error';
    summary.code = err?.code ?? null;
    summary.message = String(err?.message || err);
  }
  summary.ms = Date.now() - t0;
  // the session still works after the outcome
  try {
    const again = await client.callTool({ name: 'get-env', arguments: {} });
    summary.after = JSON.parse(again.content[0].text).MCPGW_REPLICA ?? '?';
  } catch (err) {
    summary.after = `error: ${err?.message || err}`;
  }
  await transport.terminateSession().catch(() => {});
  await client.close();
} catch (err) {
  summary.outcome = 'fatal';
  summary.message = String(err?.stack || err);
}
console.log(JSON.stringify(summary));
process.exit(summary.outcome === 'fatal' ? 1 : 0);
