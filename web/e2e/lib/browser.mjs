// Debian's Chromium driven by playwright-core (nothing downloaded), and a watch on each page:
// every uncaught page error, failed request and HTTP answer >= 400 is a problem unless the step
// running declared it expected.
import { chromium } from "playwright-core";

export const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
export const DESKTOP = { width: 1280, height: 800 };
export const PHONE = { width: 390, height: 844 };

export function launchChromium() {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      "--no-sandbox",
      "--disable-gpu",
      "--disable-background-networking",
      "--disable-component-update",
      "--no-first-run",
      "--disable-sync",
      "--disable-dev-shm-usage",
    ],
  });
}

// Collects the problems of one page. `expect(urlPattern, status)` lets the current step accept a
// request failing or answering `status`; `take()` returns and clears what was not accepted.
export class PageWatch {
  constructor(page) {
    this.problems = [];
    this.expected = [];
    page.on("pageerror", (e) => this.problems.push(`page error on ${page.url()}: ${e.message}`));
    page.on("requestfailed", (req) => {
      const why = req.failure()?.errorText ?? "failed";
      // The browser cancelling its own request (a full navigation, an AbortController on leaving a
      // page) is not the server failing.
      if (why === "net::ERR_ABORTED") return;
      if (this.accepts(req.url(), "failed")) return;
      this.problems.push(`request failed: ${req.method()} ${req.url()} (${why})`);
    });
    page.on("response", (res) => {
      if (res.status() < 400 || this.accepts(res.url(), res.status())) return;
      this.problems.push(`HTTP ${res.status()} for ${res.request().method()} ${res.url()}`);
    });
  }

  accepts(url, status) {
    return this.expected.some((e) => e.pattern.test(url) && (e.status === undefined || e.status === status));
  }

  expect(pattern, status) {
    this.expected.push({ pattern, status });
  }

  take() {
    const out = this.problems;
    this.problems = [];
    this.expected = [];
    return out;
  }
}
