// What happens when state changes under the console: a session the server ended, a forgotten
// password, the other language.
import { readFileSync } from "node:fs";
import path from "node:path";
import { apiCall } from "../lib/server.mjs";
import { expectVisible, goNav, nav, until } from "./common.mjs";

// The password is changed from elsewhere, which ends every token issued before: the next request
// of the page gets 401, and the console goes to the login page once (no loop), says why, and
// after logging in the person can go on.
export async function sessionExpired({ page, admin, server, shot, watch }) {
  const { token } = await apiCall(server.url, "POST", "/user/auth", {
    body: { user: admin.user, password: admin.password },
  });
  const next = "changed-elsewhere-789";
  await apiCall(server.url, "POST", "/user/change-password", {
    token,
    body: { current_password: admin.password, new_password: next },
  });
  admin.password = next;
  watch.expect(/\/api\/v1\//, 401);
  const loginVisits = [];
  const onNav = (frame) => {
    if (frame === page.mainFrame() && new URL(frame.url()).pathname === "/login") loginVisits.push(frame.url());
  };
  page.on("framenavigated", onNav);
  await goNav(page, "Bots");
  await until("the login page", async () => new URL(page.url()).pathname === "/login");
  await expectVisible(page.getByText("Your session ended"));
  await shot("21-session-ended");
  // Give a loop time to show itself: the login page must stay put.
  await page.waitForTimeout(1500);
  page.off("framenavigated", onNav);
  if (new URL(page.url()).pathname !== "/login") throw new Error(`left the login page for ${page.url()}`);
  if (loginVisits.length > 1) throw new Error(`the login page was entered ${loginVisits.length} times`);
  await page.getByLabel("Email or user name").fill(admin.user);
  await page.getByLabel("Password").fill(next);
  await page.getByRole("button", { name: "Log in" }).click();
  // Back where the person was going.
  await page.waitForURL("**/bots");
  await expectVisible(nav(page));
}

// "Forgot the password?" with the recovery key printed at first start (data/recovery_key).
export async function recoveryReset({ page, admin, server, shot, watch }) {
  const recoveryKey = readFileSync(path.join(server.dataDir, "recovery_key"), "utf8").trim();
  await page.getByRole("button", { name: "Log out" }).click();
  await page.getByRole("link", { name: /recovery key/i }).click();
  await page.waitForURL("**/reset-password");
  // A wrong key is refused with the server's reason, and the form keeps what was typed.
  watch.expect(/\/api\/v1\/user\/reset-password$/, 401);
  watch.expect(/\/api\/v1\/user\/reset-password$/, 403);
  watch.expect(/\/api\/v1\/user\/reset-password$/, 400);
  await page.getByLabel("Email or user name").fill(admin.user);
  await page.getByLabel("Recovery key").fill("not-the-key");
  const next = "recovered-password-321";
  await page.getByLabel("New password").fill(next);
  await page.getByRole("button", { name: "Set new password" }).click();
  await expectVisible(page.getByRole("alert"));
  if ((await page.getByLabel("Email or user name").inputValue()) !== admin.user) {
    throw new Error("the refused form lost the user name");
  }
  await page.getByLabel("Recovery key").fill(recoveryKey);
  await page.getByRole("button", { name: "Set new password" }).click();
  await expectVisible(page.getByRole("status").filter({ hasText: "The password was changed" }));
  await shot("22-recovery-reset");
  admin.password = next;
  await page.getByRole("link", { name: "Log in" }).click();
  await page.getByLabel("Email or user name").fill(admin.user);
  await page.getByLabel("Password").fill(next);
  await page.getByRole("button", { name: "Log in" }).click();
  await expectVisible(nav(page));
}

// Simplified Chinese from the picker: the navigation is translated, and the choice survives a
// reload; then back to English for the steps after.
export async function language({ page, shot }) {
  await page.getByRole("combobox", { name: "Language" }).selectOption("zh");
  const zhNav = page.getByRole("navigation", { name: "主导航" });
  await expectVisible(zhNav.getByRole("link", { name: "机器人" }));
  await page.reload();
  await expectVisible(zhNav.getByRole("link", { name: "仪表盘" }));
  await until("the page's language to be zh-CN", async () => (await page.getAttribute("html", "lang")) === "zh-CN");
  await shot("23-chinese");
  // A lazily loaded page's own namespace in Chinese too (the Knowledge page's strings).
  await zhNav.getByRole("link", { name: "知识库" }).click();
  await expectVisible(page.getByRole("button", { name: "新建知识库" }));
  await shot("23b-chinese-knowledge");
  await page.getByRole("combobox", { name: "语言" }).selectOption("en");
  await expectVisible(nav(page));
}
