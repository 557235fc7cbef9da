import { describe, expect, it } from "vitest";
import { BUCKET_SECONDS, WINDOW_HOURS } from "./activity";
import { fromMonitoring, hourWindows, isoOf, secondsOf, type Overview } from "./monitoring";

const overview = (messages: number, rate: number, llm: number): Overview => ({
  total_messages: messages,
  llm_calls: llm,
  embedding_calls: 0,
  model_calls: llm,
  success_rate: rate,
  active_sessions: 0,
});

describe("activity from monitoring", () => {
  const now = 1_700_000_000;
  const times = hourWindows(now);

  it("windows the last whole hours up to now", () => {
    expect(times).toHaveLength(WINDOW_HOURS);
    expect(times[1] - times[0]).toBe(BUCKET_SECONDS);
    expect(times[WINDOW_HOURS - 1] + BUCKET_SECONDS).toBeGreaterThanOrEqual(now);
    expect(times[WINDOW_HOURS - 1]).toBeLessThan(now);
  });

  it("reads the server's naive UTC times and sends ISO ones", () => {
    expect(secondsOf("2023-11-14T22:13:20")).toBe(1_700_000_000);
    expect(secondsOf("2023-11-14T22:13:20.500Z")).toBe(1_700_000_000.5);
    expect(isoOf(1_700_000_000)).toBe("2023-11-14T22:13:20.000Z");
  });

  it("takes model calls from each hour's overview and buckets messages by role and the errors", () => {
    const overviews = times.map(() => overview(0, 100, 0));
    overviews[WINDOW_HOURS - 1] = overview(5, 80, 3);
    const last = times[WINDOW_HOURS - 1];
    const at = (t: number) => isoOf(t).replace("Z", "");
    const messages = [
      { role: "user", timestamp: at(last + 1) },
      { role: "assistant", timestamp: at(last + 2) },
      { role: "user", timestamp: at(last + 3) },
      { role: "user", timestamp: at(times[0] - 10) }, // before the window
      { role: "assistant", timestamp: at(times[0] + 5) },
    ];
    const errors = [at(last + 10), isoOf(times[0] - 10), isoOf(last + 20)];
    const a = fromMonitoring(times, overviews, messages, messages.length, errors, 3);
    expect(a.counts.messages[WINDOW_HOURS - 1]).toBe(2);
    expect(a.counts.replies[WINDOW_HOURS - 1]).toBe(1);
    expect(a.counts.replies[0]).toBe(1);
    expect(a.counts.modelCalls[WINDOW_HOURS - 1]).toBe(3);
    expect(a.counts.failures[WINDOW_HOURS - 1]).toBe(2);
    expect(a.totals).toEqual({ messages: 2, replies: 2, modelCalls: 3, failures: 3 });
    expect(a.completeFrom).toBeNull();
  });

  it("says from when the counts are complete when a list had more than one page", () => {
    const overviews = times.map(() => overview(0, 100, 0));
    const last = times[WINDOW_HOURS - 1];
    const a = fromMonitoring(times, overviews, [], 0, [isoOf(last + 30), isoOf(last + 5)], 5000);
    expect(a.totals.failures).toBe(5000);
    expect(a.completeFrom).toBe(last + 5);
    const messages = [{ role: "user", timestamp: isoOf(last + 50) }];
    const b = fromMonitoring(times, overviews, messages, 2000, [isoOf(last + 5)], 5000);
    expect(b.completeFrom).toBe(last + 50); // the later cut bounds both
  });
});
