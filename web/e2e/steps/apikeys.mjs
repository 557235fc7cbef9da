// An API key: created (the key is shown once), then deleted through the in-page confirmation.
import { alertDialog, dialog, expectVisible, goNav, serverApi, until } from "./common.mjs";

const NAME = "E2E key";

export async function apiKey(ctx) {
  const { page, shot } = ctx;
  await goNav(page, "API keys");
  await page.getByRole("button", { name: "New API key" }).first().click();
  const form = dialog(page);
  await expectVisible(form);
  await form.getByLabel(/^Name/).fill(NAME);
  await form.getByRole("button", { name: /^(Save|Create)$/ }).click();
  // The key is shown once, in the dialog or on the page, as text or in a read-only field.
  const shown = page.getByRole("textbox", { name: /new key/i }).or(page.getByText(/lbk_[A-Za-z0-9_-]{43}/));
  await expectVisible(shown);
  const first = shown.first();
  const value = (await first.evaluate((el) => el.tagName)) === "INPUT" ? await first.inputValue() : await first.textContent();
  const key = /lbk_[A-Za-z0-9_-]{43}/.exec(value ?? "")?.[0];
  if (!key) throw new Error(`the new key is not shown (saw ${JSON.stringify(value)})`);
  await shot("15-apikey-created");
  // The key works against the API.
  const res = await fetch(`${ctx.server.url}/api/v1/system/tasks`, { headers: { "X-API-Key": key } });
  if (res.status !== 200) throw new Error(`the key shown was refused by the server (${res.status})`);
  await page.getByRole("button", { name: /^(Close|Done|I have copied it)$/ }).first().click();
  await form.waitFor({ state: "hidden" });
  await shown.first().waitFor({ state: "detached" });
  await expectVisible(page.getByRole("cell", { name: NAME }));
  if (await page.getByText(key).count()) throw new Error("the full key is still shown after it was dismissed");
  await page.getByRole("row", { name: new RegExp(NAME) }).getByRole("button", { name: /^Delete/ }).click();
  const confirm = alertDialog(page);
  await expectVisible(confirm);
  await shot("16-apikey-confirm-delete");
  await confirm.getByRole("button", { name: "Delete", exact: true }).click();
  await confirm.waitFor({ state: "hidden" });
  await until("the key gone from the server", async () =>
    !(await serverApi(ctx, "GET", "/apikeys")).keys.some((k) => k.name === NAME));
  await page.getByRole("cell", { name: NAME }).waitFor({ state: "detached" });
}
