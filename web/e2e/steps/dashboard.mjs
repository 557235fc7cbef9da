// The dashboard's activity after the webhook bot's message: taken from the server's monitoring
// records (not the browser's reading of event logs), with the counts the server holds.
import { expectVisible, goNav, serverApi, settled, until } from "./common.mjs";

const total = async (page, series) => {
  const text = await page.locator(".activity-totals").getByText(new RegExp(`^${series}:`)).textContent();
  return Number(/:\s*(\d+)/.exec(text ?? "")?.[1]);
};

export async function dashboardMonitoring(ctx) {
  const { page, shot } = ctx;
  const now = Date.now();
  const range = {
    startTime: new Date(now - 24 * 3600_000).toISOString(),
    endTime: new Date(now + 3600_000).toISOString(),
  };
  const q = new URLSearchParams(range).toString();
  // The records are written in batches off the message path: wait for the message and its reply.
  const rows = await until("the webhook bot's message and reply in the monitoring records", async () => {
    const m = (await serverApi(ctx, "GET", `/monitoring/messages?${q}&limit=1000`)).messages;
    const o = await serverApi(ctx, "GET", `/monitoring/overview?${q}`);
    const received = m.filter((r) => r.role === "user").length;
    const replies = m.filter((r) => r.role === "assistant").length;
    return received >= 1 && replies >= 1 && o.llm_calls >= 1 ? { received, replies } : null;
  }, 15_000);
  await goNav(page, "Dashboard");
  // A fresh load: the activity query of an earlier visit may still be cached.
  await page.reload();
  await expectVisible(page.getByText("From the server's monitoring records", { exact: false }));
  await settled(page);
  const messages = await total(page, "Messages");
  const calls = await total(page, "Model calls");
  const replies = await total(page, "Replies");
  if (messages !== rows.received || replies !== rows.replies) {
    throw new Error(`the dashboard shows ${messages} messages and ${replies} replies, ` +
      `the server recorded ${rows.received} received and ${rows.replies} replies`);
  }
  if (calls < 1) throw new Error(`the dashboard shows ${calls} model calls after a reply by the model`);
  await shot("46-dashboard-monitoring");
}
