// Accessibility checks with axe-core (WCAG 2 A and AA rules) on the page as it is. The source is
// evaluated through the DevTools protocol, which the console's Content-Security-Policy (no inline
// scripts) does not apply to.
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";

const require = createRequire(import.meta.url);
const source = readFileSync(require.resolve("axe-core/axe.min.js"), "utf8");

// The violations, as lines "rule: what (selector, ...)"; empty when the page passes.
export async function axeViolations(page) {
  if (!(await page.evaluate(() => typeof window.axe !== "undefined"))) await page.evaluate(source);
  // Toasts are left out: they fade in and out, and a half-faded one fails the contrast rule
  // depending only on when the check ran (seen under load in CI-like runs).
  const result = await page.evaluate(() =>
    window.axe.run(
      { exclude: [["[data-sonner-toaster]"]] },
      { runOnly: { type: "tag", values: ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"] } },
    ),
  );
  return result.violations.map(
    (v) => `${v.id}: ${v.help} (${v.nodes.slice(0, 3).map((n) => n.target.join(" ")).join(", ")}${v.nodes.length > 3 ? `, +${v.nodes.length - 3}` : ""})`,
  );
}
