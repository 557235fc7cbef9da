// Every page of the main navigation, in the light and the dark theme at 1280×800, then once at
// phone size (390×844) through the menu button; a screenshot of each.
import { DESKTOP, PHONE } from "../lib/browser.mjs";
import { axeViolations } from "../lib/axe.mjs";
import { expectVisible, nav, settled } from "./common.mjs";

export const NAV_LINKS = ["Dashboard", "Bots", "Pipelines", "Models", "Knowledge", "Plugins", "MCP servers", "Webhooks", "API keys", "System"];
const slug = (name) => name.toLowerCase().replace(/\s+/g, "-");

async function setTheme(page, theme) {
  const current = await page.evaluate(() => document.documentElement.dataset.theme);
  if (current !== theme) await page.getByRole("button", { name: `Switch to ${theme} theme` }).click();
  await page.waitForFunction((t) => document.documentElement.dataset.theme === t, theme);
}

// How far the page is wider than the window, and the outermost elements sticking out (a table
// may be wider inside its horizontally scrolling frame).
function overflowOf() {
  const width = window.innerWidth;
  const out = [];
  for (const el of document.querySelectorAll("body *")) {
    if (el.getBoundingClientRect().right <= width + 1) continue;
    // Inside a table's scrolling frame only what is positioned out of it (an absolutely placed
    // element whose containing block is outside the frame) widens the page.
    const scrolled = el.parentElement?.closest(".table-wrap");
    if (scrolled && !["absolute", "fixed"].includes(getComputedStyle(el).position)) continue;
    if (out.some((o) => o.contains(el))) continue;
    out.push(el);
  }
  const name = (el) => el.tagName.toLowerCase() + (el.className ? `.${String(el.className).split(" ").join(".")}` : "");
  return { by: document.documentElement.scrollWidth - width, elements: out.slice(0, 3).map(name) };
}

async function visitAll(ctx, theme, { phone = false } = {}) {
  const { page, shot } = ctx;
  const overflows = [];
  const a11y = [];
  for (const name of NAV_LINKS) {
    if (phone) await page.getByRole("button", { name: "Menu" }).click();
    await nav(page).getByRole("link", { name, exact: true }).click();
    await expectVisible(page.getByRole("main").getByRole("heading", { level: 1 }));
    await settled(page);
    await shot(`tour-${phone ? "phone" : theme}-${slug(name)}`);
    const overflow = await page.evaluate(overflowOf);
    if (overflow.by > 1) overflows.push(`${name} is ${overflow.by} px wider than the window (${overflow.elements.join(", ")})`);
    for (const v of await axeViolations(page)) a11y.push(`${name} (${phone ? "phone" : theme}): ${v}`);
  }
  // Labels, names, roles and contrast (WCAG 2.1 A and AA, by axe-core) in both themes.
  if (a11y.length) throw new Error(`accessibility: ${a11y.join("; ")}`);
  // Nothing may stick out of the screen but a table inside its scrolling frame.
  if (overflows.length) throw new Error(`at ${page.viewportSize().width} px: ${overflows.join("; ")}`);
}

export async function tourLight(ctx) {
  await setTheme(ctx.page, "light");
  await visitAll(ctx, "light");
}

export async function tourDark(ctx) {
  await setTheme(ctx.page, "dark");
  await visitAll(ctx, "dark");
  await setTheme(ctx.page, "light");
}

export async function tourPhone(ctx) {
  const { page } = ctx;
  await page.setViewportSize(PHONE);
  try {
    await visitAll(ctx, "light", { phone: true });
  } finally {
    await page.setViewportSize(DESKTOP);
  }
}
