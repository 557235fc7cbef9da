// The example plugin (examples/plugins/greeter) installed from a zip upload, then configured.
import path from "node:path";
import { tempDir } from "../lib/processes.mjs";
import { zipDirectory } from "../lib/zip.mjs";
import { expectVisible, goNav, serverApi, until } from "./common.mjs";

export async function pluginZip(ctx) {
  const { page, shot, repo } = ctx;
  const zip = zipDirectory(path.join(repo, "examples/plugins/greeter"), path.join(tempDir("sb-e2e-zip-"), "greeter.zip"));
  await goNav(page, "Plugins");
  let file = page.getByLabel(/package|zip|file/i).and(page.locator("input[type=file]"));
  if (!(await file.count())) {
    await page.getByRole("tab", { name: /upload|zip|file/i }).or(page.getByRole("button", { name: /upload|zip/i })).first().click();
  }
  file = page.getByLabel(/package|zip|file/i).and(page.locator("input[type=file]"));
  await file.setInputFiles(zip);
  await shot("12-plugin-upload");
  await page.getByRole("button", { name: /install/i }).click();
  await until(
    "the greeter plugin running",
    async () => {
      const p = await serverApi(ctx, "GET", "/plugins/switchboard/greeter").catch(() => null);
      return p?.plugin?.status === "running" || p?.status === "running";
    },
    30_000,
  );
  const installedTab = page.getByRole("tab", { name: /^Installed/ });
  if (await installedTab.count()) await installedTab.click();
  await expectVisible(page.getByRole("link", { name: /Greeter/ }));
  await shot("13-plugin-installed");
  await page.getByRole("link", { name: /Greeter/ }).first().click();
  await page.waitForURL("**/plugins/switchboard/greeter");
  const greeting = page.getByLabel(/^Greeting/);
  await expectVisible(greeting);
  await greeting.fill("Howdy from the e2e test");
  await page.getByRole("button", { name: "Save" }).click();
  await until("the plugin's new config on the server", async () => {
    const c = await serverApi(ctx, "GET", "/plugins/switchboard/greeter/config");
    return JSON.stringify(c).includes("Howdy from the e2e test");
  }, 20_000);
  // The save answers once the plugin restarted with its new config; the button is Save again then.
  await page.getByRole("button", { name: "Save" }).waitFor({ timeout: 20_000 });
  await shot("14-plugin-configured");
  // Off and on again from its switch: the server stops and restarts it.
  const enabled = page.getByRole("switch", { name: "Enable" });
  const plugin = async () => (await serverApi(ctx, "GET", "/plugins/switchboard/greeter")).plugin;
  await enabled.click();
  await until("the plugin stopped", async () => { const p = await plugin(); return !p.enabled && p.status === "stopped"; }, 20_000);
  await enabled.click();
  await until("the plugin running again", async () => { const p = await plugin(); return p.enabled && p.status === "running"; }, 20_000);
}

// The marketplace (the fake of tests/fakes): a plugin installed from its listing with the task's
// progress, then the uploaded greeter upgraded to the version the marketplace now has.
export async function pluginMarketplace(ctx) {
  const { page, shot, repo, market } = ctx;
  const greeter = path.join(repo, "examples/plugins/greeter");
  const publish = async (body) => {
    const r = await fetch(`${market.url}/_control/publish_dir`, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ dir: greeter, ...body }),
    });
    if (!r.ok) throw new Error(`publishing to the fake marketplace: ${r.status} ${await r.text()}`);
  };
  await publish({
    author: "e2e",
    name: "hello",
    version: "1.0.0",
    manifest_overrides: { "metadata.author": "e2e", "metadata.name": "hello", "metadata.version": "1.0.0" },
    label: "Hello from the marketplace",
  });
  await publish({
    author: "switchboard",
    name: "greeter",
    version: "1.1.0",
    manifest_overrides: { "metadata.version": "1.1.0" },
  });
  await goNav(page, "Plugins");
  await page.getByRole("tab", { name: /marketplace/i }).click();
  const install = page.getByRole("button", { name: "Install Hello from the marketplace" });
  await expectVisible(install);
  await install.click();
  await expectVisible(page.getByRole("progressbar").first());
  await shot("17-marketplace-installing");
  await until(
    "e2e/hello running",
    async () => (await serverApi(ctx, "GET", "/plugins/e2e/hello").catch(() => null))?.plugin?.status === "running",
    30_000,
  );
  await expectVisible(page.getByText("Installed.").first(), 15_000);
  await page.goto("/plugins/switchboard/greeter");
  await page.getByRole("button", { name: "Upgrade" }).click();
  await expectVisible(page.getByText("Upgraded from v1.0.0 to v1.1.0."), 30_000);
  await shot("18-plugin-upgraded");
}
