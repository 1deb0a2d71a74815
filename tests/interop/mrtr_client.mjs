// mrtr_client.mjs - the official TypeScript SDK 2.x client
// (@modelcontextprotocol/client) in the two 2026-07-28 flows that span
// several requests: a multi round-trip tools/call (SEP-2322, the `book`
// tool of "mcpgw backend") and a task (the io.modelcontextprotocol/tasks
// extension, SEP-2663, the `slow_job` tool).
// Usage: node mrtr_client.mjs URL book ROUNDS
//        node mrtr_client.mjs URL task MS
//   book - client.callTool('book'): the SDK's own MRTR driver answers each
//          input_required through the registered elicitation/create
//          handler and retries with inputResponses + requestState.
//   task - first client.callTool('slow_job') with the extension declared
//          in the client's capabilities (what the SDK itself does with
//          resultType "task"); then the task driven by hand: the
//          tools/call sent through the SDK's StreamableHTTPClientTransport
//          (no Client), and tasks/get polled with client.request() and a
//          result schema (the SDK lets the SEP-2663 method names through
//          on the modern era only with an explicit schema).
// Prints one JSON summary line on stdout (with what went on the wire);
// exits 0 only if the flow completed, 1 otherwise (the summary then says
// what the SDK surfaced: error class, code, message, data).
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';

const [url, flow = 'book', arg = '3'] = process.argv.slice(2);
const TASKS_EXT = 'io.modelcontextprotocol/tasks';
setTimeout(() => {
  console.error('mrtr_client: timed out');
  process.exit(3);
}, 25000).unref();

// Every POST with the fields the checks need: the request's id, method,
// Mcp-Name header, MRTR fields, and the answer's resultType / error.
const wire = [];
async function recordingFetch(input, init = {}) {
  const h = new Headers(init.headers || {});
  let m = null;
  if (typeof init.body === 'string') {
    try { m = JSON.parse(init.body); } catch { m = null; }
  }
  const res = await fetch(input, init);
  const entry = {
    http: init.method || 'GET', rpc: m?.method ?? null, id: m?.id ?? null, status: res.status,
    mcpName: h.get('mcp-name'), mcpMethod: h.get('mcp-method'),
    requestState: m?.params?.requestState ?? null,
    inputResponses: m?.params?.inputResponses ? Object.keys(m.params.inputResponses) : null,
    extensions: Object.keys(m?.params?._meta?.['io.modelcontextprotocol/clientCapabilities']?.extensions ?? {}),
  };
  if ((res.headers.get('content-type') || '').startsWith('application/json')) {
    try {
      const body = JSON.parse(await res.clone().text());
      entry.resultType = body.result?.resultType ?? null;
      entry.answerState = body.result?.requestState ?? null;
      entry.inputRequests = body.result?.inputRequests ? Object.keys(body.result.inputRequests) : null;
      entry.errorCode = body.error?.code ?? null;
    } catch { entry.unparsable = true; }
  }
  wire.push(entry);
  return res;
}

// What the SDK surfaced, as data the test can check.
function describe(err) {
  return {
    class: err?.constructor?.name ?? typeof err, code: err?.code ?? null,
    message: String(err?.message ?? err), data: err?.data ?? null,
  };
}

function newClient(capabilities) {
  return new Client({ name: 'mcpgw-interop-mrtr', version: '1.0.0' },
                    { versionNegotiation: { mode: { pin: '2026-07-28' } }, capabilities });
}

// The answer to one elicitation form of `book`, by the property it asks.
function answerForm(params) {
  const prop = Object.keys(params?.requestedSchema?.properties ?? {})[0];
  if (prop === 'date') return { date: '2026-08-01' };
  if (prop === 'confirm') return { confirm: true };
  return { [prop]: 'window seat' };
}

async function bookFlow(summary) {
  const client = newClient({ elicitation: { form: {} } });
  summary.elicitations = [];
  client.setRequestHandler('elicitation/create', async (request, ctx) => {
    // The driver's synthesized context carries the inputRequests key as id.
    summary.elicitations.push({ key: ctx?.mcpReq?.id ?? null, mode: request.params?.mode ?? null });
    return { action: 'accept', content: answerForm(request.params) };
  });
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { fetch: recordingFetch }));
  try {
    const res = await client.callTool({ name: 'book', arguments: { rounds: Number(arg) } });
    summary.result = { text: res.content?.[0]?.text ?? null, isError: res.isError ?? false,
                       structured: res.structuredContent ?? null };
    return !summary.result.isError;
  } finally {
    await client.close();
  }
}

// A Standard Schema that accepts any object: client.request() needs a
// result schema for a method the SDK has no codec entry for.
const anyObject = {
  '~standard': {
    version: 1, vendor: 'mcpgw-interop',
    validate: (v) => (typeof v === 'object' && v !== null ? { value: v } : { issues: [{ message: 'not an object' }] }),
  },
};

// The envelope the SDK's Client puts on every modern request, built here
// for the request sent through the bare transport (its headers, Mcp-Method
// and Mcp-Name, are derived from it by the transport).
const envelope = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientInfo': { name: 'mcpgw-interop-mrtr', version: '1.0.0' },
  'io.modelcontextprotocol/clientCapabilities': { extensions: { [TASKS_EXT]: {} } },
};

// One request through a bare SDK transport; resolves with the response.
async function transportCall(method, params) {
  const transport = new StreamableHTTPClientTransport(new URL(url), { fetch: recordingFetch });
  const answer = new Promise((resolve, reject) => {
    transport.onmessage = (msg) => { if (msg.id === 'manual-1') resolve(msg); };
    transport.onerror = reject;
  });
  await transport.start();
  transport.setProtocolVersion('2026-07-28');
  await transport.send({ jsonrpc: '2.0', id: 'manual-1', method, params: { ...params, _meta: envelope } });
  try {
    return await answer;
  } finally {
    await transport.close();
  }
}

async function taskFlow(summary) {
  const ms = Number(arg);
  const client = newClient({ extensions: { [TASKS_EXT]: {} } });
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { fetch: recordingFetch }));
  try {
    try {
      const res = await client.callTool({ name: 'slow_job', arguments: { ms } });
      summary.native = { result: res };
    } catch (err) {
      summary.native = { error: describe(err) };
    }
    const created = await transportCall('tools/call', { name: 'slow_job', arguments: { ms } });
    const task = created.result;
    summary.manual = { created: task ?? null, createError: created.error ?? null, polls: 0 };
    if (task?.resultType !== 'task' || typeof task.taskId !== 'string') return false;
    const interval = Math.min(Math.max(task.pollIntervalMs ?? 100, 10), 1000);
    for (let i = 0; i < 200; i++) {
      await new Promise((r) => setTimeout(r, interval));
      summary.manual.polls++;
      let got;
      try {
        got = await client.request({ method: 'tasks/get', params: { taskId: task.taskId } }, anyObject);
      } catch (err) {
        summary.manual.error = describe(err);
        return false;
      }
      summary.manual.status = got.status ?? null;
      if (got.status === 'completed') {
        summary.manual.text = got.result?.content?.[0]?.text ?? null;
        return true;
      }
      if (got.status !== 'working') return false;
    }
    return false;
  } finally {
    await client.close();
  }
}

const summary = { flow, wire };
try {
  const done = flow === 'task' ? await taskFlow(summary) : await bookFlow(summary);
  console.log(JSON.stringify(summary));
  process.exit(done ? 0 : 1);
} catch (err) {
  summary.error = describe(err);
  console.log(JSON.stringify(summary));
  console.error(`mrtr_client: ${err?.stack || err}`);
  process.exit(1);
}
