// First run, log out, log in, and (last of the run) the password change on the account page.
import { expectVisible, nav } from "./common.mjs";

export async function setupAdmin({ page, admin, shot }) {
  await page.goto("/");
  await page.waitForURL("**/setup");
  await expectVisible(page.getByRole("heading", { name: "Create the administrator" }));
  await shot("01-setup");
  await page.getByLabel("Email or user name").fill(admin.user);
  await page.getByLabel("Password", { exact: true }).fill(admin.password);
  await page.getByLabel("Repeat the password").fill(admin.password);
  await page.getByRole("button", { name: "Create account" }).click();
  await expectVisible(nav(page));
  await page.waitForURL((url) => url.pathname === "/");
}

export async function logoutLogin({ page, admin, shot, watch }) {
  await page.getByRole("button", { name: "Log out" }).click();
  await expectVisible(page.getByRole("heading", { name: "Log in" }));
  // A wrong password first: the page must say why, and keep the person on the form.
  watch.expect(/\/api\/v1\/user\/auth$/, 401);
  await page.getByLabel("Email or user name").fill(admin.user);
  await page.getByLabel("Password").fill("not-the-password");
  await page.getByRole("button", { name: "Log in" }).click();
  await expectVisible(page.getByRole("alert"));
  await shot("02-login-refused");
  await page.getByLabel("Password").fill(admin.password);
  await page.getByRole("button", { name: "Log in" }).click();
  await expectVisible(nav(page));
  await shot("03-dashboard");
}

export async function changePassword(ctx) {
  const { page, admin, shot } = ctx;
  await page.getByRole("link", { name: admin.user }).click();
  await page.waitForURL("**/account");
  const next = "second-password-456";
  await page.getByLabel("Current password").fill(admin.password);
  await page.getByLabel("New password").fill(next);
  await page.getByLabel("Repeat the password").fill(next);
  await page.getByRole("button", { name: "Save" }).click();
  await expectVisible(page.getByRole("status").filter({ hasText: "Password changed" }));
  await shot("20-password-changed");
  admin.password = next;
  // The console signed in again with the new password: the session goes on across a reload.
  await page.reload();
  await expectVisible(nav(page));
  await page.getByRole("button", { name: "Log out" }).click();
  await page.getByLabel("Email or user name").fill(admin.user);
  await page.getByLabel("Password").fill(next);
  await page.getByRole("button", { name: "Log in" }).click();
  await expectVisible(nav(page));
}
