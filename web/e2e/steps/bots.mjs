// A webhook bot bound to the pipeline: created, enabled with its switch, then a signed message
// from outside; its log view shows the message and the reply without a reload.
import { startCallbackServer, sendSigned } from "../lib/webhook.mjs";
import { dialog, expectVisible, goNav, serverApi, until } from "./common.mjs";

const NAME = "E2E webhook bot";
const SECRET = "whsec_e2e_console";

export async function webhookBot(ctx) {
  const { page, shot, state, server } = ctx;
  const callback = await startCallbackServer(SECRET);
  try {
    await goNav(page, "Bots");
    await page.getByRole("button", { name: "New bot" }).first().click();
    const form = dialog(page);
    await expectVisible(form);
    await form.getByLabel(/^Name/).fill(NAME);
    await form.getByLabel(/^Adapter/).selectOption("webhook");
    await form.getByLabel(/^Signing Secret/).fill(SECRET);
    await form.getByLabel(/^Callback URL/).fill(callback.url);
    await form.getByLabel(/^Pipeline/).selectOption(state.pipelineUuid);
    await shot("09-new-bot");
    await form.getByRole("button", { name: "Save" }).click();
    await form.waitFor({ state: "hidden" });
    const bot = await until("the bot on the server", async () =>
      (await serverApi(ctx, "GET", "/platform/bots")).bots.find((b) => b.name === NAME));
    state.botUuid = bot.uuid;
    if (!new URL(page.url()).pathname.startsWith(`/bot/${bot.uuid}`)) {
      await page.getByRole("link", { name: NAME }).click();
    }
    await page.waitForURL(`**/bot/${bot.uuid}`);
    const enable = page.getByRole("switch", { name: "Enable" });
    await expectVisible(enable);
    if ((await enable.getAttribute("aria-checked")) !== "true") await enable.click();
    await until("the bot running", async () => {
      const b = (await serverApi(ctx, "GET", `/platform/bots/${bot.uuid}`)).bot;
      return b.runtime.status === "running";
    });
    await expectVisible(page.getByText(/running/i));
    await shot("10-bot-enabled");

    const text = "hi from the signed webhook";
    const sent = await sendSigned(server.url, bot.uuid, SECRET, {
      message_id: "e2e-1",
      sender: { id: "u-e2e", name: "E2E" },
      chat: { type: "person", id: "u-e2e" },
      message_chain: [{ type: "Plain", text }],
      timestamp: Math.floor(Date.now() / 1000),
    });
    if (sent.status !== 200) throw new Error(`the signed webhook POST answered ${sent.status}: ${sent.body}`);
    await callback.waitFor((c) => JSON.stringify(c.message_chain).includes(`echo: ${text}`), 15_000);
    // The page was not reloaded: the entries come in through its live log.
    await expectVisible(page.getByText(new RegExp(`message from .*${text}`)), 15_000);
    await expectVisible(page.getByText(new RegExp(`reply .*echo: ${text}`)), 15_000);
    await shot("11-bot-log");
  } finally {
    await callback.close();
  }
}
