// auth_client.mjs - the official TypeScript SDK 1.x client
// (@modelcontextprotocol/sdk: Client + StreamableHTTPClientTransport with
// an OAuthClientProvider) against a gateway that requires a bearer token.
// Mode "token": the provider holds an access token; the client must
// initialize, list tools and call echo.  Mode "none": the provider has no
// token; the SDK's OAuth discovery must follow the gateway's 401
// (WWW-Authenticate resource_metadata) to its Protected Resource Metadata,
// accept it (the SDK checks that "resource" is the server URL it was
// given) and go on to the authorization server it names, up to the
// redirect to its authorization endpoint (recorded, not followed).
// Usage: node auth_client.mjs '{"url":..., "mode":"token"|"none",
//   "token":...}'
// Prints one JSON summary line; exits 0 when the mode's expectation held.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

const opt = JSON.parse(process.argv[2]);
setTimeout(() => {
  console.error('auth_client: timed out');
  process.exit(3);
}, 30000).unref();

const summary = { mode: opt.mode, fetches: [], ok: false };

async function recordingFetch(input, init = {}) {
  const url = typeof input === 'string' ? input : input.url ?? String(input);
  let auth = null;
  const h = new Headers(init.headers ?? {});
  if (h.get('authorization')) auth = h.get('authorization').split(' ')[0];
  try {
    const res = await fetch(input, init);
    summary.fetches.push({ method: init.method || 'GET', url, status: res.status, auth,
      wwwAuthenticate: res.headers.get('www-authenticate') });
    return res;
  } catch (e) {
    summary.fetches.push({ method: init.method || 'GET', url, error: String(e.message ?? e), auth });
    throw e;
  }
}

const provider = {
  get redirectUrl() { return 'http://127.0.0.1:1/callback'; },
  get clientMetadata() {
    return { client_name: 'mcpgw-auth-interop', redirect_uris: ['http://127.0.0.1:1/callback'] };
  },
  clientInformation() { return { client_id: 'mcpgw-auth-interop' }; },
  tokens() {
    return opt.mode === 'token' ? { access_token: opt.token, token_type: 'Bearer' } : undefined;
  },
  saveTokens() {},
  redirectToAuthorization(url) { summary.redirectedTo = String(url); throw new Error('redirect to authorization'); },
  saveCodeVerifier() {},
  codeVerifier() { return 'v'; },
};

const transport = new StreamableHTTPClientTransport(new URL(opt.url), {
  authProvider: provider, fetch: recordingFetch,
});
const client = new Client({ name: 'mcpgw-auth-interop', version: '1.0.0' });
try {
  await client.connect(transport);
  summary.connected = true;
  const tools = await client.listTools();
  summary.tools = tools.tools.map((t) => t.name);
  const r = await client.callTool({ name: 'echo', arguments: { text: 'through auth' } });
  summary.echo = r.content?.[0]?.text ?? null;
  await transport.terminateSession().catch(() => {});
  await client.close();
  summary.ok = opt.mode === 'token';
} catch (e) {
  summary.error = String(e?.message ?? e);
  if (opt.mode === 'none') {
    const prm = summary.fetches.find((f) => f.url.includes('/.well-known/oauth-protected-resource'));
    const first = summary.fetches[0];
    const asIdx = summary.fetches.findIndex((f) => opt.as && f.url.startsWith(opt.as));
    summary.prmStatus = prm?.status ?? null;
    summary.firstStatus = first?.status ?? null;
    summary.challenge = first?.wwwAuthenticate ?? null;
    summary.followedToAs = asIdx >= 0 && prm && summary.fetches.indexOf(prm) < asIdx;
    summary.ok = summary.firstStatus === 401 && summary.prmStatus === 200 && summary.followedToAs;
  }
}
console.log(JSON.stringify(summary));
process.exit(summary.ok ? 0 : 1);
