// An MCP server (tests/fakes/fake_mcp.py, Streamable HTTP): created on the MCP servers page with a
// secret header (its form tested before saving), seen connected with its tools, tested through the
// connection-test task, edited and tested with the masked header left as it is (the fake still
// receives the real value), switched off and on; then the pipeline's Extensions tab binds the
// pipeline to it alone.
import { alertDialog, dialog, expectVisible, goNav, serverApi, until } from "./common.mjs";

const NAME = "e2e-tools";
const TOKEN = "Bearer e2e-mcp-secret-0123456789";
const TOOLS = ["echo", "add", "slow", "crash", "grow"];

// The Authorization headers the fake received, newest last.
async function authorizations(ctx) {
  const res = await fetch(`${ctx.mcp.base}/_control/requests`);
  return (await res.json()).map((r) => r.headers?.authorization).filter(Boolean);
}

export async function mcpServer(ctx) {
  const { page, shot } = ctx;
  await goNav(page, "MCP servers");
  await expectVisible(page.getByRole("heading", { name: "MCP servers", level: 1 }));
  await page.getByRole("button", { name: "New MCP server" }).first().click();
  const form = dialog(page);
  await expectVisible(form);
  await form.getByLabel(/^Name/).fill(NAME);
  await form.getByLabel("Transport").selectOption("http");
  await form.getByLabel(/^URL/).fill(ctx.mcp.url);
  await form.getByRole("button", { name: "Add a header" }).click();
  await form.getByRole("textbox", { name: "Header name 1", exact: true }).fill("Authorization");
  await form.getByLabel("Header value 1", { exact: true }).fill(TOKEN);
  // The form's configuration tested before it is saved.
  await form.getByRole("button", { name: "Test connection" }).click();
  await expectVisible(form.getByText(`${TOOLS.length} tools.`, { exact: false }), 15_000);
  await shot("40-mcp-new");
  await form.getByRole("button", { name: "Save" }).click();
  await form.waitFor({ state: "hidden" });

  // Connected, with the fake's tools, as the server reports it.
  const row = page.getByRole("row", { name: new RegExp(NAME) });
  await expectVisible(row.getByText("Connected", { exact: true }), 15_000);
  await expectVisible(row.getByText(`${TOOLS.length} tools`));
  await row.getByText(`${TOOLS.length} tools`).click();
  for (const tool of TOOLS) await expectVisible(row.getByText(tool, { exact: true }));
  await shot("41-mcp-connected");
  const stored = (await serverApi(ctx, "GET", `/mcp/servers/${NAME}`)).server;
  if (stored.extra_args.headers.Authorization === TOKEN) throw new Error("the API answered the header unmasked");
  if (!(await authorizations(ctx)).includes(TOKEN)) throw new Error("the fake never received the Authorization header");

  // The connection test: a task whose result lists the tools.
  await row.getByRole("button", { name: `Test ${NAME}` }).click();
  const test = dialog(page);
  await expectVisible(test.getByText(`${TOOLS.length} tools.`, { exact: false }), 15_000);
  await expectVisible(test.getByText("echo", { exact: true }));
  await shot("42-mcp-test");
  await test.getByRole("button", { name: "Close" }).click();
  await test.waitFor({ state: "hidden" });

  // Edit: the header value is shown masked and sent back as it is, so the server keeps the secret.
  await row.getByRole("button", { name: `Edit ${NAME}` }).click();
  const edit = dialog(page);
  await expectVisible(edit);
  const shown = await edit.getByLabel("Header value 1", { exact: true }).inputValue();
  if (shown === TOKEN || shown === "") throw new Error(`the edit form shows the header as ${JSON.stringify(shown)}`);
  await edit.getByLabel(/^Timeout/).fill("15");
  const before = (await authorizations(ctx)).length;
  // Testing the edited form with the mask in it: the server fills in the stored header.
  await edit.getByRole("button", { name: "Test connection" }).click();
  await expectVisible(edit.getByText(`${TOOLS.length} tools.`, { exact: false }), 15_000);
  await edit.getByRole("button", { name: "Save" }).click();
  await edit.waitFor({ state: "hidden" });
  await until("the edited server saved", async () =>
    (await serverApi(ctx, "GET", `/mcp/servers/${NAME}`)).server.extra_args.timeout === 15);
  // The edited server's session is made again, with the stored (unmasked) header.
  await until("the fake reconnected with the real header", async () => {
    const seen = await authorizations(ctx);
    return seen.length > before && seen.slice(before).every((a) => a === TOKEN);
  }, 15_000);
  await expectVisible(row.getByText("Connected", { exact: true }), 15_000);

  // A server nobody answers at: Error with the reason, restarted with backoff.
  const closed = await import("node:net").then(({ createServer }) => new Promise((resolve) => {
    const probe = createServer().listen(0, "127.0.0.1", () => {
      const port = probe.address().port;
      probe.close(() => resolve(port));
    });
  }));
  await serverApi(ctx, "POST", "/mcp/servers", {
    name: "e2e-broken", mode: "http", enable: true, extra_args: { url: `http://127.0.0.1:${closed}/mcp`, timeout: 2 },
  });
  // The page reads the list every 10 s when no session is connecting: wait on the server, reload.
  await until("the broken server restarted", async () =>
    (await serverApi(ctx, "GET", "/mcp/servers/e2e-broken")).server.runtime_info?.restarts >= 1, 15_000);
  await page.reload();
  const broken = page.getByRole("row", { name: /e2e-broken/ });
  await expectVisible(broken.getByText(/^(Error|Connecting)$/), 15_000);
  await expectVisible(broken.getByText("Error", { exact: true }), 15_000);
  const why = await broken.locator(".mcp-error").textContent();
  if (!why?.trim()) throw new Error("the broken server's error shows no reason");
  await expectVisible(broken.getByText(/^Restarted \d+ times?$/), 15_000);
  await shot("47-mcp-error");
  await serverApi(ctx, "DELETE", "/mcp/servers/e2e-broken");
  await page.reload();
  await broken.waitFor({ state: "detached" });

  // A stdio server: its command, one argument per line and a secret environment variable.
  await page.getByRole("button", { name: "New MCP server" }).first().click();
  const stdio = dialog(page);
  await expectVisible(stdio);
  await stdio.getByLabel(/^Name/).fill("e2e-stdio");
  await stdio.getByLabel("Transport").selectOption("stdio");
  await stdio.getByLabel(/^Command/).fill("python3");
  await stdio.getByLabel(/^Arguments/).fill(`${ctx.fakes}/fake_mcp.py\n--stdio\n`);
  await stdio.getByRole("button", { name: "Add a variable" }).click();
  await stdio.getByRole("textbox", { name: "Variable name 1", exact: true }).fill("E2E_TOKEN");
  await stdio.getByLabel("Variable value 1", { exact: true }).fill("stdio-secret-0123456789");
  await stdio.getByRole("button", { name: "Save" }).click();
  await stdio.waitFor({ state: "hidden" });
  const saved = (await serverApi(ctx, "GET", "/mcp/servers/e2e-stdio")).server;
  const a = saved.extra_args;
  if (saved.mode !== "stdio" || a.command !== "python3" ||
      JSON.stringify(a.args) !== JSON.stringify([`${ctx.fakes}/fake_mcp.py`, "--stdio"])) {
    throw new Error(`the stdio server was stored as ${JSON.stringify(saved)}`);
  }
  if (!a.env?.E2E_TOKEN || a.env.E2E_TOKEN === "stdio-secret-0123456789") {
    throw new Error(`the environment variable is missing or unmasked: ${JSON.stringify(a.env)}`);
  }
  await expectVisible(page.getByRole("row", { name: /e2e-stdio/ }).locator(".badge"));
  await serverApi(ctx, "DELETE", "/mcp/servers/e2e-stdio");
  await page.reload();
  await page.getByRole("row", { name: /e2e-stdio/ }).waitFor({ state: "detached" });

  // Off and on again with the switch.
  const enable = row.getByRole("switch", { name: `Enable ${NAME}` });
  await enable.click();
  await expectVisible(row.getByText("Disabled", { exact: true }));
  await until("the server disabled", async () => !(await serverApi(ctx, "GET", `/mcp/servers/${NAME}`)).server.enable);
  await enable.click();
  await expectVisible(row.getByText("Connected", { exact: true }), 15_000);
}

// The pipeline's Extensions tab: from "all MCP servers" to this one only, saved with the pipeline
// and read back through /pipelines/{uuid}/extensions.
export async function mcpBinding(ctx) {
  const { page, shot, state } = ctx;
  await page.goto(`/pipelines/${state.pipelineUuid}`);
  await page.getByRole("tab", { name: "Extensions" }).click();
  const all = page.getByRole("checkbox", { name: "Use all MCP servers" });
  await expectVisible(all);
  await all.uncheck();
  await page.getByRole("checkbox", { name: new RegExp(`^${NAME}`) }).check();
  await shot("43-pipeline-extensions");
  await page.getByRole("button", { name: "Save" }).first().click();
  await until("the binding saved", async () => {
    const ext = await serverApi(ctx, "GET", `/pipelines/${state.pipelineUuid}/extensions`);
    return ext.enable_all_mcp_servers === false && JSON.stringify(ext.bound_mcp_servers) === JSON.stringify([NAME]);
  });
}

// Deleting through the in-page confirmation; the pipeline's binding is then shown as gone.
export async function mcpDelete(ctx) {
  const { page, state } = ctx;
  await goNav(page, "MCP servers");
  await page.getByRole("row", { name: new RegExp(NAME) }).getByRole("button", { name: `Delete ${NAME}` }).click();
  const confirm = alertDialog(page);
  await expectVisible(confirm);
  await confirm.getByRole("button", { name: "Delete", exact: true }).click();
  await confirm.waitFor({ state: "hidden" });
  await until("the server gone", async () =>
    !(await serverApi(ctx, "GET", "/mcp/servers")).servers.some((s) => s.name === NAME));
  await page.getByRole("cell", { name: new RegExp(NAME) }).first().waitFor({ state: "detached" });
  await page.goto(`/pipelines/${state.pipelineUuid}`);
  await page.getByRole("tab", { name: "Extensions" }).click();
  await expectVisible(page.getByText("No longer exists"));
}
