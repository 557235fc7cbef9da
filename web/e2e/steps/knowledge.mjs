// A knowledge base end to end: an embedding model on the fake embeddings service (set up through the
// API: the Models page has its own step), then through the pages: the base created from the
// engine's forms, a text file uploaded and ingested to "Completed", a retrieval that shows its
// passage with the file and score, the base ticked in the pipeline's local agent, the file and
// the base deleted, each checked on the server.
import { alertDialog, dialog, expectVisible, goNav, serverApi, until } from "./common.mjs";

const NAME = "E2E manuals";
const PASSAGE = "The Zephyr kettle resets when you hold its power button for ten seconds.";

export async function knowledgeBase(ctx) {
  const { page, shot, state, embeddings } = ctx;
  const provider = await serverApi(ctx, "POST", "/provider/providers", {
    name: "Fake embeddings",
    requester: "openai-chat-completions",
    base_url: embeddings.baseUrl,
    api_keys: [embeddings.apiKey],
  });
  const model = await serverApi(ctx, "POST", "/provider/models/embedding", {
    name: embeddings.model,
    provider_uuid: provider.uuid,
  });

  await goNav(page, "Knowledge");
  await expectVisible(page.getByText("No knowledge bases yet"));
  await page.getByRole("button", { name: "New knowledge base" }).click();
  const form = dialog(page);
  await expectVisible(form);
  await form.getByLabel(/^Name/).fill(NAME);
  await form.getByLabel(/^Description/).fill("How the kettle works");
  await form.getByRole("combobox", { name: "Embedding model", exact: true }).selectOption(model.uuid);
  await form.getByRole("spinbutton", { name: "Score threshold", exact: true }).fill("0.1");
  await shot("30-knowledge-new");
  await form.getByRole("button", { name: "Save" }).click();
  await form.waitFor({ state: "hidden" });
  const base = await until("the base on the server", async () =>
    (await serverApi(ctx, "GET", "/knowledge/bases")).bases.find((b) => b.name === NAME));
  if (base.creation_settings.embedding_model_uuid !== model.uuid) throw new Error("the base's embedding model was not saved");
  if (base.retrieval_settings.score_threshold !== 0.1) {
    throw new Error(`score_threshold saved as ${JSON.stringify(base.retrieval_settings.score_threshold)}`);
  }
  await page.waitForURL(`**/knowledge/${base.uuid}`);
  await expectVisible(page.getByRole("heading", { level: 1, name: new RegExp(NAME) }));

  await page.getByLabel("Document", { exact: true }).setInputFiles({
    name: "kettle.txt",
    mimeType: "text/plain",
    buffer: Buffer.from(`Kettle manual\n\n${PASSAGE}\n\nDescale it every month with citric acid.\n`),
  });
  await page.getByRole("button", { name: "Upload", exact: true }).click();
  const files = page.getByRole("table");
  await expectVisible(files.getByText("Completed", { exact: true }), 30_000);
  await expectVisible(files.getByText(/^kettle.*\.txt$/));
  const [file] = (await serverApi(ctx, "GET", `/knowledge/bases/${base.uuid}/files`)).files;
  if (file?.status !== "completed" || file.chunk_count < 1) throw new Error(`file on the server: ${JSON.stringify(file)}`);
  await shot("31-knowledge-file");

  await page.getByRole("searchbox", { name: "Question" }).fill("How do I reset the Zephyr kettle?");
  await page.getByRole("button", { name: "Search", exact: true }).click();
  const results = page.getByRole("list", { name: "Passages" });
  await expectVisible(results.getByText(PASSAGE));
  await expectVisible(results.getByText(file.file_name));
  await expectVisible(results.getByText(/^score \d\.\d\d$/));
  await shot("32-knowledge-retrieval");

  // A file the embedding provider refuses: Failed, with the reason beside it; the good file stays.
  const control = embeddings.baseUrl.replace(/\/v1$/, "");
  const refused = await fetch(`${control}/_control/fail`, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ marker: "POISONPILL", status: 400, message: "this input is refused by the e2e test" }),
  });
  if (!refused.ok) throw new Error(`the fake embeddings service refused the failure setup: ${refused.status}`);
  await page.getByLabel("Document", { exact: true }).setInputFiles({
    name: "poison.txt",
    mimeType: "text/plain",
    buffer: Buffer.from("POISONPILL is in this file.\n"),
  });
  await page.getByRole("button", { name: "Upload", exact: true }).click();
  const poisonRow = files.getByRole("row").filter({ hasText: /poison.*\.txt/ });
  await expectVisible(poisonRow.getByText("Failed", { exact: true }), 30_000);
  await expectVisible(poisonRow.getByText(/refused by the e2e test/));
  await expectVisible(files.getByRole("row").filter({ hasText: /kettle/ }).getByText("Completed", { exact: true }));
  await shot("33-knowledge-failed-file");
  await fetch(`${control}/_control/reset`, { method: "POST" });
  const poison = (await serverApi(ctx, "GET", `/knowledge/bases/${base.uuid}/files`)).files.find((f) => f.status === "failed");
  if (!poison) throw new Error("no failed file on the server");

  // The pipeline's local agent offers the base; ticking it and saving stores its uuid.
  await page.goto(`/pipelines/${state.pipelineUuid}`);
  const kbGroup = page.getByRole("group", { name: "Knowledge Bases" });
  await kbGroup.getByRole("checkbox", { name: new RegExp(NAME) }).check();
  await page.getByRole("button", { name: "Save" }).first().click();
  await until("the base in the pipeline's knowledge-bases", async () => {
    const p = await serverApi(ctx, "GET", `/pipelines/${state.pipelineUuid}`);
    return JSON.stringify(p.pipeline.config.ai?.["local-agent"]?.["knowledge-bases"]) === JSON.stringify([base.uuid]);
  });

  await goNav(page, "Knowledge");
  await page.getByRole("link", { name: NAME }).click();
  await page.waitForURL(`**/knowledge/${base.uuid}`);
  for (const name of [poison.file_name, file.file_name]) {
    await page.getByRole("button", { name: `Delete file ${name}` }).click();
    await alertDialog(page).getByRole("button", { name: "Delete" }).click();
    await alertDialog(page).waitFor({ state: "hidden" });
  }
  await expectVisible(page.getByText("No files yet"));
  await until("no file on the server", async () =>
    (await serverApi(ctx, "GET", `/knowledge/bases/${base.uuid}/files`)).files.length === 0);

  await page.getByRole("button", { name: `Delete knowledge base ${NAME}` }).click();
  await alertDialog(page).getByRole("button", { name: "Delete" }).click();
  await page.waitForURL("**/knowledge");
  await expectVisible(page.getByText("No knowledge bases yet"));
  await until("no base on the server", async () => (await serverApi(ctx, "GET", "/knowledge/bases")).bases.length === 0);
}
