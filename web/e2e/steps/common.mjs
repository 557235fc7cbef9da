// What several steps share: the main navigation, visibility waits with a clear message, the
// signed-in token (for checking the server's side of what a page did), dialogs.
import { apiCall } from "../lib/server.mjs";

export const nav = (page) => page.getByRole("navigation", { name: "Main" });

export async function expectVisible(locator, timeout = 10_000) {
  await locator.first().waitFor({ state: "visible", timeout });
}

export async function goNav(page, name) {
  await nav(page).getByRole("link", { name, exact: true }).click();
}

// The server's view, read with the page's own token.
export async function serverApi(ctx, method, apiPath, body) {
  const token = await ctx.page.evaluate(() => localStorage.getItem("switchboard.token"));
  return apiCall(ctx.server.url, method, apiPath, { token, body });
}

// The open modal dialog (Radix: role dialog or alertdialog).
export const dialog = (page) => page.getByRole("dialog");
export const alertDialog = (page) => page.getByRole("alertdialog");

// Polls `check` (an async function returning a truthy value when done) every 100 ms.
export async function until(what, check, timeoutMs = 10_000) {
  const deadline = Date.now() + timeoutMs;
  let last;
  for (;;) {
    try {
      last = await check();
      if (last) return last;
    } catch (e) {
      last = e;
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what} (last: ${last?.message ?? last})`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

// A page is settled when no loading state is left in its main region.
export async function settled(page, timeoutMs = 10_000) {
  const loading = page.getByRole("main").getByRole("status").filter({ hasText: "Loading" });
  await until("the page's loading states to end", async () => (await loading.count()) === 0, timeoutMs);
}
