// For people: the console from the keyboard alone, and what a page shows when the server fails.
import { expectVisible, goNav, until } from "./common.mjs";

const focusedName = (page) =>
  page.evaluate(() => {
    const el = document.activeElement;
    if (!el || el === document.body) return "";
    return (el.getAttribute("aria-label") || el.textContent || "").trim();
  });

// Presses Tab until the focused element is named `name` (at most `limit` presses).
async function tabTo(page, name, limit = 60) {
  for (let i = 0; i < limit; i++) {
    await page.keyboard.press("Tab");
    if ((await focusedName(page)) === name) return;
  }
  throw new Error(`"${name}" was not reached with Tab in ${limit} presses`);
}

// The skip link comes first; a dialog opens from the keyboard, keeps focus inside, and Escape
// closes it and gives focus back to the button that opened it.
export async function keyboard({ page, shot }) {
  await goNav(page, "API keys");
  // A fresh load, so that Tab starts from the top of the page.
  await page.reload();
  await expectVisible(page.getByRole("heading", { name: "API keys", level: 1 }));
  await page.keyboard.press("Tab");
  if ((await focusedName(page)) !== "Skip to content") {
    throw new Error(`the first Tab stop is "${await focusedName(page)}", not the skip link`);
  }
  await tabTo(page, "New API key");
  await page.keyboard.press("Enter");
  const dialog = page.getByRole("dialog");
  await expectVisible(dialog);
  await until("focus inside the dialog", () => dialog.evaluate((d) => d.contains(document.activeElement)));
  await shot("24-keyboard-dialog");
  // Tab stays inside the dialog (focus trap).
  for (let i = 0; i < 8; i++) {
    await page.keyboard.press("Tab");
    if (!(await dialog.evaluate((d) => d.contains(document.activeElement)))) {
      throw new Error("Tab left the open dialog");
    }
  }
  await page.keyboard.press("Escape");
  await dialog.waitFor({ state: "hidden" });
  await until("focus back on New API key", async () => (await focusedName(page)) === "New API key");
}

// Every list page with its API failing: the server's message shows, never a blank page; with nothing
// to show yet it is an alert with a way to try again (a page that still holds data from before
// keeps it and says that refreshing failed).
export async function errorStates({ page, watch, shot }) {
  const pages = [
    ["Bots", /\/api\/v1\/platform\/bots(\?|$)/],
    ["Pipelines", /\/api\/v1\/pipelines(\?|$)/],
    ["Models", /\/api\/v1\/provider\/providers(\?|$)/],
    ["Knowledge", /\/api\/v1\/knowledge\/bases(\?|$)/],
    ["Plugins", /\/api\/v1\/plugins(\?|$)/],
    ["MCP servers", /\/api\/v1\/mcp\/servers(\?|$)/],
    ["Webhooks", /\/api\/v1\/webhooks(\?|$)/],
    ["API keys", /\/api\/v1\/apikeys(\?|$)/],
  ];
  for (const [name, pattern] of pages) {
    const message = `internal error; request id e2e-${name.replace(/\W/g, "")}`;
    await page.route(pattern, (route) =>
      route.request().method() === "GET"
        ? route.fulfill({ status: 500, contentType: "application/json", body: JSON.stringify({ code: -2, msg: message }) })
        : route.fallback(),
    );
    watch.expect(pattern, 500);
    await goNav(page, name);
    const said = page.getByRole("main").getByText(message);
    await expectVisible(said, 15_000);
    await shot(`25-error-${name.replace(/\W/g, "").toLowerCase()}`);
    await page.unroute(pattern);
    // Once the server answers again, trying again (or the page's own refresh) shows the page.
    const retry = page.getByRole("main").getByRole("alert").getByRole("button", { name: "Try again" });
    if (await retry.count()) await retry.first().click();
    await said.first().waitFor({ state: "detached", timeout: 10_000 });
  }
}
