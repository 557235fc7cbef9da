// Every page of the main navigation, in the light and the dark theme at 1280×800, then once at
// phone size (390×844) through the menu button; a screenshot of each.
import { DESKTOP, PHONE } from "../lib/browser.mjs";
import { expectVisible, nav } from "./common.mjs";

export const NAV_LINKS = ["Dashboard", "Bots", "Pipelines", "Models", "Plugins", "API keys", "System"];
const slug = (name) => name.toLowerCase().replace(/\s+/g, "-");

async function setTheme(page, theme) {
  const current = await page.evaluate(() => document.documentElement.dataset.theme);
  if (current !== theme) await page.getByRole("button", { name: `Switch to ${theme} theme` }).click();
  await page.waitForFunction((t) => document.documentElement.dataset.theme === t, theme);
}

async function visitAll(ctx, theme, { phone = false } = {}) {
  const { page, shot } = ctx;
  for (const name of NAV_LINKS) {
    if (phone) await page.getByRole("button", { name: "Menu" }).click();
    await nav(page).getByRole("link", { name, exact: true }).click();
    await expectVisible(page.getByRole("main").getByRole("heading", { level: 1 }));
    // A page is settled when no loading state is left in it.
    await page.getByRole("main").getByRole("status").filter({ hasText: "Loading" }).waitFor({ state: "detached" });
    await shot(`tour-${phone ? "phone" : theme}-${slug(name)}`);
  }
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
    // Nothing may be wider than the screen except inside a scrolling table.
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    if (overflow > 1) throw new Error(`the System page is ${overflow} px wider than the phone screen`);
  } finally {
    await page.setViewportSize(DESKTOP);
  }
}
