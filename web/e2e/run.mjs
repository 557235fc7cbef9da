#!/usr/bin/env node
// The console's end-to-end test (issue 15, "Tests and figures"): the real binary, the fakes of
// tests/fakes and Debian's Chromium, driven through the pages the way a person would (roles and
// labels only). Each step's screenshot lands in build/console-e2e/.
//
//   node web/e2e/run.mjs [--binary build/switchboard] [--fakes tests/fakes] [--console-dir DIR]
//                        [--shots build/console-e2e] [--only step,step] [--timeout 240]
//
// Exit codes: 0 all steps passed, 1 a step failed (each failure is printed with its step), 77 the
// binary has no console built in (ctest counts that as skipped), 124 the global timeout hit.
import { copyFileSync, existsSync, mkdirSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { launchChromium, DESKTOP, PageWatch } from "./lib/browser.mjs";
import { stopAll } from "./lib/processes.mjs";
import { axeViolations } from "./lib/axe.mjs";
import {
  startFakeEmbeddings,
  startFakeLlm,
  startFakeMarketplace,
  startFakeMcp,
  startFakeWebhookReceiver,
  startServer,
} from "./lib/server.mjs";
import { steps } from "./steps/index.mjs";

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const { values: opts } = parseArgs({
  options: {
    binary: { type: "string", default: process.env.SWITCHBOARD_BIN ?? path.join(repo, "build/switchboard") },
    fakes: { type: "string", default: path.join(repo, "tests/fakes") },
    "console-dir": { type: "string" },
    shots: { type: "string", default: path.join(repo, "build/console-e2e") },
    only: { type: "string" },
    timeout: { type: "string", default: process.env.E2E_TIMEOUT_S ?? "240" },
  },
});

const SKIP = 77;
let browser;
let finishing = false;

async function finish(code, message) {
  if (finishing) return;
  finishing = true;
  if (message) console.error(message);
  await Promise.race([
    (async () => {
      await browser?.close().catch(() => {});
      await stopAll();
    })(),
    new Promise((r) => setTimeout(r, 20_000)),
  ]);
  process.exit(code);
}

const timer = setTimeout(
  () => finish(124, `console e2e: FAILED: global timeout of ${opts.timeout} s reached`),
  Number(opts.timeout) * 1000,
);
timer.unref();
for (const sig of ["SIGTERM", "SIGINT", "SIGHUP"]) process.on(sig, () => finish(128 + 15, `console e2e: stopped by ${sig}`));
process.on("unhandledRejection", (e) => finish(1, `console e2e: FAILED: ${e?.stack ?? e}`));

// The steps named by --only, with every step they need, in the order of steps/index.mjs.
function selectSteps() {
  if (!opts.only) return steps;
  const wanted = new Set();
  const add = (name) => {
    const step = steps.find((s) => s.name === name);
    if (!step) throw new Error(`no step named ${name}; steps: ${steps.map((s) => s.name).join(", ")}`);
    if (wanted.has(name)) return;
    wanted.add(name);
    (step.needs ?? []).forEach(add);
  };
  opts.only.split(",").forEach((n) => add(n.trim()));
  return steps.filter((s) => wanted.has(s.name));
}

async function main() {
  if (!existsSync(opts.binary)) return finish(1, `console e2e: FAILED: no binary at ${opts.binary}`);
  const started = Date.now();
  const [llm, market, embeddings, mcp, receiver] = await Promise.all([
    startFakeLlm(opts.fakes),
    startFakeMarketplace(opts.fakes),
    startFakeEmbeddings(opts.fakes),
    startFakeMcp(opts.fakes),
    startFakeWebhookReceiver(opts.fakes),
  ]);
  const server = await startServer(opts.binary, {
    consoleDir: opts["console-dir"],
    env: { SPACE__URL: market.url },
  });
  const probe = await fetch(`${server.url}/`);
  if (probe.status === 503) {
    return finish(SKIP, "console e2e: skipped: the web console is not built into this binary (build web/dist first)");
  }
  mkdirSync(opts.shots, { recursive: true });
  browser = await launchChromium();
  const context = await browser.newContext({ viewport: DESKTOP, baseURL: server.url, locale: "en-US" });
  const page = await context.newPage();
  page.setDefaultTimeout(10_000);
  const watch = new PageWatch(page);
  const ctx = {
    page,
    context,
    browser,
    watch,
    server,
    llm,
    market,
    embeddings,
    mcp,
    receiver,
    repo,
    fakes: opts.fakes,
    state: {},
    admin: { user: "admin@example.com", password: "first-password-123" },
    // Every screenshot is also an accessibility check (axe-core, WCAG 2.1 AA) of what it shows:
    // dialogs, editors and logs as well as the pages of the tour.
    shot: async (name) => {
      await page.screenshot({ path: path.join(opts.shots, `${name}.png`) });
      if (name.endsWith("-failed")) return;
      for (const v of await axeViolations(page)) watch.problems.push(`accessibility at ${name}: ${v}`);
    },
    log: (...args) => console.log("   ", ...args),
  };
  console.log(`console e2e: server ${server.url} (plugins ${server.sandbox ? "sandboxed" : "unsandboxed"}), ` +
    `fake model ${llm.baseUrl}, screenshots in ${opts.shots}`);

  const results = [];
  const failed = new Set();
  for (const step of selectSteps()) {
    if (finishing) return;
    const blocked = (step.needs ?? []).filter((n) => failed.has(n));
    if (blocked.length) {
      failed.add(step.name);
      results.push({ name: step.name, status: "skipped", detail: `needs ${blocked.join(", ")}` });
      console.log(`- ${step.name}: skipped (needs ${blocked.join(", ")})`);
      continue;
    }
    const t0 = Date.now();
    let error;
    try {
      ctx.stepName = step.name;
      await step.run(ctx);
    } catch (e) {
      error = e;
    }
    if (finishing) return;
    // Let the last requests of the step answer before judging them.
    await page.waitForLoadState("networkidle", { timeout: 2_000 }).catch(() => {});
    const problems = watch.take();
    const seconds = ((Date.now() - t0) / 1000).toFixed(1);
    if (error || problems.length) {
      failed.add(step.name);
      await ctx.shot(`${step.name}-failed`).catch(() => {});
      // A fresh load closes whatever the failed step left open (a modal dialog would block the
      // next steps); the token in localStorage keeps the session.
      await page.goto("/").catch(() => {});
      watch.take();
      const detail = [error ? firstLines(error) : null, ...problems].filter(Boolean).join("\n      ");
      results.push({ name: step.name, status: "FAILED", detail });
      console.log(`✗ ${step.name} (${seconds} s): FAILED at ${page.url()}\n      ${detail}`);
    } else {
      results.push({ name: step.name, status: "ok" });
      console.log(`✓ ${step.name} (${seconds} s)`);
    }
  }
  await browser.close();
  browser = undefined;
  const rc = await server.stop();
  copyFileSync(server.logFile, path.join(opts.shots, "server.log"));
  if (rc !== 0) {
    failed.add("server");
    console.log(`✗ the server exited with ${rc} after SIGTERM (log: ${server.logFile})`);
  }
  const total = ((Date.now() - started) / 1000).toFixed(1);
  if (failed.size) {
    return finish(1, `console e2e: FAILED: ${[...failed].join(", ")} (${total} s; screenshots in ${opts.shots})`);
  }
  console.log(`console e2e: all ${results.length} steps passed in ${total} s; screenshots in ${opts.shots}`);
  return finish(0);
}

function firstLines(error) {
  return String(error?.message ?? error).split("\n").slice(0, 12).join("\n      ");
}

main().catch((e) => finish(1, `console e2e: FAILED: ${e?.stack ?? e}`));
