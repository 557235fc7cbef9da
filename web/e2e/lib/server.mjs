// The real switchboard binary on a free port with a fresh data directory, and the fakes it talks
// to (the model provider, the embeddings service and the plugin marketplace of tests/fakes), started the way the API
// suite's harness (tests/api/harness.py) starts them.
import path from "node:path";
import { sandboxWorks, startProcess, stopProcess, tempDir } from "./processes.mjs";

export async function startFakeLlm(fakesDir) {
  const proc = await startProcess("fake_llm", "python3", [path.join(fakesDir, "fake_llm.py"), "--port", "0"], {
    ready: /FAKE_LLM_PORT=(\d+)/,
  });
  return { proc, port: Number(proc.match[1]), baseUrl: `http://127.0.0.1:${proc.match[1]}/v1` };
}

// The OpenAI-style embeddings service the knowledge steps' base embeds with (key sk-embed-test,
// models embed-test and embed-test-random).
export async function startFakeEmbeddings(fakesDir) {
  const proc = await startProcess(
    "fake_embeddings",
    "python3",
    [path.join(fakesDir, "fake_embeddings.py"), "--port", "0"],
    { ready: /FAKE_EMBEDDINGS_PORT=(\d+)/ },
  );
  return { proc, baseUrl: `http://127.0.0.1:${proc.match[1]}/v1`, apiKey: "sk-embed-test", model: "embed-test" };
}

export async function startFakeMarketplace(fakesDir) {
  const proc = await startProcess(
    "fake_marketplace",
    "python3",
    [path.join(fakesDir, "fake_marketplace.py"), "--port", "0"],
    { ready: /FAKE_MARKETPLACE_PORT=(\d+)/ },
  );
  return { proc, url: `http://127.0.0.1:${proc.match[1]}` };
}

// The MCP server of tests/fakes in Streamable HTTP mode (endpoint /mcp; tools echo, add, slow,
// crash, grow; GET /_control/requests shows what it received).
export async function startFakeMcp(fakesDir) {
  const proc = await startProcess("fake_mcp", "python3", [path.join(fakesDir, "fake_mcp.py"), "--port", "0"], {
    ready: /FAKE_MCP_PORT=(\d+)/,
  });
  const base = `http://127.0.0.1:${proc.match[1]}`;
  return { proc, base, url: `${base}/mcp` };
}

// The receiver of outgoing webhooks of tests/fakes (POST /_control/config {secret}, GET
// /_control/pushes).
export async function startFakeWebhookReceiver(fakesDir) {
  const proc = await startProcess(
    "fake_webhook_receiver",
    "python3",
    [path.join(fakesDir, "fake_webhook_receiver.py"), "--port", "0"],
    { ready: /FAKE_WEBHOOK_PORT=(\d+)/ },
  );
  return { proc, base: `http://127.0.0.1:${proc.match[1]}` };
}

// Starts `binary serve` and waits for /healthz. `env` adds to the environment (config overrides
// such as SPACE__URL); `consoleDir` serves that directory instead of the embedded console.
export async function startServer(binary, { env = {}, consoleDir } = {}) {
  const root = tempDir("sb-e2e-");
  const dataDir = path.join(root, "data");
  const logFile = path.join(root, "server.log");
  const sandboxEnv = sandboxWorks() ? {} : { PLUGINS__SANDBOX: "off" };
  const args = ["serve", "--data-dir", dataDir, "--port", "0", "--host", "127.0.0.1"];
  if (consoleDir) args.push("--console-dir", consoleDir);
  const proc = await startProcess("switchboard", binary, args, {
    ready: /listening on \S*:(\d+)/,
    env: { ...sandboxEnv, ...env },
    logFile,
  });
  const url = `http://127.0.0.1:${proc.match[1]}`;
  const deadline = Date.now() + 20_000;
  for (;;) {
    try {
      if ((await fetch(`${url}/healthz`)).ok) break;
    } catch {
      // not accepting yet
    }
    if (Date.now() > deadline) throw new Error(`switchboard did not become healthy at ${url}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  return {
    proc,
    url,
    dataDir,
    logFile,
    sandbox: !sandboxEnv.PLUGINS__SANDBOX,
    stop: () => stopProcess(proc, 15_000),
  };
}

// One API call with the envelope unwrapped: resolves with `data`, throws with the server's `msg`.
export async function apiCall(baseUrl, method, apiPath, { token, body } = {}) {
  const headers = {};
  if (token) headers.Authorization = `Bearer ${token}`;
  if (body !== undefined) headers["Content-Type"] = "application/json";
  const res = await fetch(`${baseUrl}/api/v1${apiPath}`, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  let json;
  try {
    json = JSON.parse(text);
  } catch {
    throw new Error(`${method} ${apiPath}: ${res.status} ${text.slice(0, 200)}`);
  }
  if (!res.ok || json.code !== 0) throw new Error(`${method} ${apiPath}: ${res.status} ${json.msg}`);
  return json.data;
}

export async function createAdmin(baseUrl, user, password) {
  await apiCall(baseUrl, "POST", "/user/init", { body: { user, password } });
  return (await apiCall(baseUrl, "POST", "/user/auth", { body: { user, password } })).token;
}
