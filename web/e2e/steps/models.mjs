// A provider pointing at the fake model server, an LLM model on it, and its Test button.
import { dialog, expectVisible, goNav, serverApi, until } from "./common.mjs";

export async function providerAndModel(ctx) {
  const { page, llm, shot, state } = ctx;
  await goNav(page, "Models");
  await page.getByRole("button", { name: "New provider" }).click();
  const form = dialog(page);
  await expectVisible(form);
  await form.getByLabel(/^Name/).fill("Fake provider");
  await form.getByLabel(/^Requester/).selectOption("openai-chat-completions");
  await form.getByLabel(/^Base URL/).fill(llm.baseUrl);
  const keyInput = form.getByRole("textbox", { name: /key 1$/i });
  if (!(await keyInput.isVisible())) await form.getByRole("button", { name: /add( a)? key/i }).click();
  await keyInput.fill("sk-good-e2e");
  await shot("04-new-provider");
  await form.getByRole("button", { name: "Save" }).click();
  await form.waitFor({ state: "hidden" });
  const providers = await until("the provider on the server", async () =>
    (await serverApi(ctx, "GET", "/provider/providers")).providers.find((p) => p.name === "Fake provider"));
  state.providerUuid = providers.uuid;
  await expectVisible(page.getByText("Fake provider"));

  await page.getByRole("button", { name: "New model" }).click();
  const modelForm = dialog(page);
  await expectVisible(modelForm);
  await modelForm.getByLabel(/^Name/).fill("gpt-test");
  const providerSelect = modelForm.getByLabel(/^Provider/);
  if ((await providerSelect.evaluate((el) => el.tagName)) === "SELECT") {
    await providerSelect.selectOption({ label: "Fake provider" });
  }
  await shot("05-new-model");
  await modelForm.getByRole("button", { name: "Save" }).click();
  await modelForm.waitFor({ state: "hidden" });
  const model = await until("the model on the server", async () =>
    (await serverApi(ctx, "GET", "/provider/models/llm")).models.find((m) => m.name === "gpt-test"));
  state.modelUuid = model.uuid;

  await page.getByRole("button", { name: /^Test\b/ }).first().click();
  await expectVisible(page.getByText("echo: Hello"), 15_000);
  await expectVisible(page.getByText(/\d+(\.\d+)?\s*ms/));
  await shot("06-model-tested");

  // Keys are edited one by one although the browser only ever sees masks: add a second key, then
  // remove the first, and the server holds exactly the right real keys each time.
  const editProvider = page.getByRole("button", { name: "Edit provider Fake provider" });
  const keysOnServer = async () =>
    (await serverApi(ctx, "GET", `/provider/providers/${state.providerUuid}?include_secret=true`)).provider.api_keys;
  await editProvider.click();
  await expectVisible(form);
  await form.getByRole("button", { name: /add( a)? key/i }).click();
  await form.getByRole("textbox", { name: /key 2$/i }).fill("sk-good-second");
  await form.getByRole("button", { name: "Save" }).click();
  await form.waitFor({ state: "hidden" });
  await until("two keys on the server", async () => JSON.stringify(await keysOnServer()) === '["sk-good-e2e","sk-good-second"]');
  await editProvider.click();
  await expectVisible(form);
  await form.getByRole("button", { name: /remove (api )?key 1$/i }).click();
  await shot("06b-provider-keys");
  await form.getByRole("button", { name: "Save" }).click();
  await form.waitFor({ state: "hidden" });
  await until("only the second key on the server", async () => JSON.stringify(await keysOnServer()) === '["sk-good-second"]');
}
