// A pipeline: created, its Model field set to the model of the previous step and saved, then
// its debug chat answers with the fake model's echo.
import { dialog, expectVisible, goNav, serverApi, until } from "./common.mjs";

const NAME = "E2E pipeline";

export async function pipelineEdit(ctx) {
  const { page, shot, state } = ctx;
  await goNav(page, "Pipelines");
  await page.getByRole("button", { name: "New pipeline" }).click();
  const form = dialog(page);
  await expectVisible(form);
  await form.getByLabel(/^Name/).fill(NAME);
  await form.getByRole("button", { name: /^(Save|Create)$/ }).click();
  const pipeline = await until("the pipeline on the server", async () =>
    (await serverApi(ctx, "GET", "/pipelines")).pipelines.find((p) => p.name === NAME));
  state.pipelineUuid = pipeline.uuid;
  // The page may open the new pipeline's editor by itself; otherwise open it from the list.
  await form.waitFor({ state: "hidden" });
  await page.waitForURL(`**/pipelines/${pipeline.uuid}`, { timeout: 2_000 }).catch(() => {});
  if (!new URL(page.url()).pathname.startsWith(`/pipelines/${pipeline.uuid}`)) {
    await page.getByRole("link", { name: new RegExp(`^Edit.*${NAME}`) }).click();
  }
  await page.waitForURL(`**/pipelines/${pipeline.uuid}`);
  // Named "Model" for assistive technology (the visible " *" is aria-hidden).
  const model = page.getByRole("combobox", { name: "Model", exact: true });
  await expectVisible(model);
  await model.selectOption(state.modelUuid);
  await shot("07-pipeline-editor");
  await page.getByRole("button", { name: "Save" }).first().click();
  await until("the model saved in the pipeline", async () => {
    const p = await serverApi(ctx, "GET", `/pipelines/${pipeline.uuid}`);
    return JSON.stringify(p.pipeline.config).includes(state.modelUuid);
  });
}

export async function debugChat(ctx) {
  const { page, shot, state } = ctx;
  await goNav(page, "Pipelines");
  const row = page.getByRole("row", { name: new RegExp(NAME) });
  await row.getByRole("link", { name: /chat/i }).or(row.getByRole("button", { name: /chat/i })).first().click();
  await page.waitForURL(`**/pipelines/${state.pipelineUuid}/chat`);
  const box = page.getByRole("textbox", { name: /message/i });
  await expectVisible(box);
  await box.fill("hello from the e2e test");
  await page.getByRole("button", { name: /^Send/ }).click();
  await expectVisible(page.getByText("echo: hello from the e2e test"), 15_000);
  await shot("08-debug-chat");
}
