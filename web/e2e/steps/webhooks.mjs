// An outgoing webhook (docs/webhooks.md) to tests/fakes/fake_webhook_receiver.py: created on the
// Webhooks page, its secret shown once; the receiver, given that secret, gets a correctly signed
// push of the webhook bot's next message and the row shows the delivery; then the secret is
// rotated (shown once again), the webhook switched off and deleted.
import { sendSigned } from "../lib/webhook.mjs";
import { alertDialog, dialog, expectVisible, goNav, serverApi, until } from "./common.mjs";

const NAME = "E2E receiver";
const BOT_SECRET = "whsec_e2e_console"; // the webhook bot's own signing secret (bots.mjs)

async function control(ctx, method, path, body) {
  const res = await fetch(`${ctx.receiver.base}${path}`, {
    method,
    headers: body ? { "Content-Type": "application/json" } : {},
    body: body ? JSON.stringify(body) : undefined,
  });
  return res.json();
}

// The secret in the one-time banner, and the banner dismissed.
async function takeSecret(page) {
  const field = page.getByRole("textbox", { name: "Signing secret" });
  await expectVisible(field);
  const secret = await field.inputValue();
  if (secret.length < 24 || secret.includes("*") || secret.includes("...")) {
    throw new Error(`the secret shown looks masked: ${JSON.stringify(secret)}`);
  }
  await expectVisible(page.getByRole("button", { name: "Copy the signing secret" }));
  return secret;
}

async function dismiss(page, secret) {
  await page.getByRole("button", { name: "I have copied it" }).click();
  await page.getByRole("textbox", { name: "Signing secret" }).waitFor({ state: "detached" });
  if (await page.getByText(secret).count()) throw new Error("the whole secret is still shown after it was dismissed");
}

export async function outgoingWebhook(ctx) {
  const { page, shot, state, server } = ctx;
  await control(ctx, "POST", "/_control/reset");
  await goNav(page, "Webhooks");
  await expectVisible(page.getByRole("heading", { name: "Webhooks", level: 1 }));
  await page.getByRole("button", { name: "New webhook" }).first().click();
  const form = dialog(page);
  await expectVisible(form);
  await form.getByLabel(/^Name/).fill(NAME);
  await form.getByLabel(/^URL/).fill(`${ctx.receiver.base}/hook`);
  await form.getByRole("button", { name: "Save" }).click();
  await form.waitFor({ state: "hidden" });
  const secret = await takeSecret(page);
  await shot("44-webhook-created");
  const stored = (await serverApi(ctx, "GET", "/webhooks")).webhooks.find((w) => w.name === NAME);
  if (!stored || stored.secret === secret) throw new Error("the list answers the secret unmasked");
  await dismiss(page, secret);
  const row = page.getByRole("row", { name: new RegExp(NAME) });
  await expectVisible(row.getByText("Never sent", { exact: true }));

  // A message to the webhook bot is pushed, signed with the secret the page showed.
  await control(ctx, "POST", "/_control/config", { secret });
  const text = "pushed to the e2e receiver";
  const sent = await sendSigned(server.url, state.botUuid, BOT_SECRET, {
    message_id: "e2e-push-1",
    sender: { id: "u-e2e", name: "E2E" },
    chat: { type: "person", id: "u-e2e" },
    message_chain: [{ type: "Plain", text }],
    timestamp: Math.floor(Date.now() / 1000),
  });
  if (sent.status !== 200) throw new Error(`the signed webhook POST answered ${sent.status}: ${sent.body}`);
  const push = await until("the push at the receiver", async () =>
    (await control(ctx, "GET", "/_control/pushes")).find((p) => JSON.stringify(p.body).includes(text)), 15_000);
  if (!push.signature_ok) throw new Error("the push's signature does not verify with the secret the page showed");
  await until("the delivery recorded", async () =>
    (await serverApi(ctx, "GET", `/webhooks/${stored.id}`)).webhook.last_delivery.status === "ok", 15_000);
  await page.reload();
  await expectVisible(row.getByText("Delivered", { exact: true }));
  await expectVisible(row.getByText(/1 push, 0 failed/));
  await shot("45-webhook-delivered");

  // Edited: the description saved, the secret unchanged (the receiver still verifies it).
  await row.getByRole("button", { name: `Edit ${NAME}` }).click();
  const edit = dialog(page);
  await expectVisible(edit);
  await edit.getByLabel(/^Description/).fill("pushes for the e2e test");
  await edit.getByRole("button", { name: "Save" }).click();
  await edit.waitFor({ state: "hidden" });
  await expectVisible(row.getByText("pushes for the e2e test"));
  const after = (await serverApi(ctx, "GET", `/webhooks/${stored.id}`)).webhook;
  if (after.secret !== stored.secret) throw new Error("editing the webhook changed its secret");

  // A new secret, shown once.
  await row.getByRole("button", { name: `Rotate secret of ${NAME}` }).click();
  const rotate = alertDialog(page);
  await expectVisible(rotate);
  await rotate.getByRole("button", { name: "Make a new secret" }).click();
  await rotate.waitFor({ state: "hidden" });
  const rotated = await takeSecret(page);
  if (rotated === secret) throw new Error("rotating showed the old secret");
  await dismiss(page, rotated);

  // Off, then deleted.
  await row.getByRole("switch", { name: `Enable ${NAME}` }).click();
  await until("the webhook disabled", async () => !(await serverApi(ctx, "GET", `/webhooks/${stored.id}`)).webhook.enabled);
  await row.getByRole("button", { name: `Delete ${NAME}` }).click();
  const confirm = alertDialog(page);
  await expectVisible(confirm);
  await confirm.getByRole("button", { name: "Delete", exact: true }).click();
  await confirm.waitFor({ state: "hidden" });
  await until("the webhook gone", async () => !(await serverApi(ctx, "GET", "/webhooks")).webhooks.some((w) => w.name === NAME));
  await page.getByRole("cell", { name: new RegExp(NAME) }).first().waitFor({ state: "detached" });
}
