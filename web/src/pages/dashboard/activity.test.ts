import { describe, expect, it } from "vitest";
import type { BotLogEntry } from "../../api/types";
import { BUCKET_SECONDS, WINDOW_HOURS, bucketise, classify } from "./activity";

const entry = (seq: number, timestamp: number, text: string): BotLogEntry => ({
  seq_id: seq,
  timestamp,
  level: "info",
  text,
  images: [],
  message_session_id: "person_u1",
  created_at: "",
});

describe("classify", () => {
  it("reads the texts the server writes", () => {
    expect(classify("message from Ann: hi")).toEqual(["messages"]);
    expect(classify("reply (model 6cb2, 12 ms): [Quote] echo: hi")).toEqual(["replies", "modelCalls"]);
    expect(classify("reply (plugin a/b): hi")).toEqual(["replies"]);
    expect(classify("reply: hi")).toEqual(["replies"]);
    expect(classify("run failed for person_u1 after 3 ms: provider error: 401")).toEqual(["failures"]);
    expect(classify("running as account x")).toEqual([]);
    expect(classify("sent through the API: hi")).toEqual([]);
  });
});

describe("bucketise", () => {
  const now = 1_700_000_000;
  it("counts per hour over the window and ignores entries outside it", () => {
    const a = bucketise(
      [[entry(1, now - 30, "message from A: x"), entry(2, now - 20, "reply (model m, 1 ms): y"), entry(3, now - 2 * 86400, "message from A: old")]],
      now,
    );
    expect(a.times).toHaveLength(WINDOW_HOURS);
    expect(a.times[1] - a.times[0]).toBe(BUCKET_SECONDS);
    expect(a.totals).toEqual({ messages: 1, replies: 1, modelCalls: 1, failures: 0 });
    expect(a.counts.messages[WINDOW_HOURS - 1]).toBe(1);
    expect(a.completeFrom).toBeNull();
  });
  it("says from when the counts are complete when a full page ends inside the window", () => {
    const page = [entry(1, now - 100, "message from A: x"), entry(2, now - 50, "message from A: y")];
    expect(bucketise([page], now, 2).completeFrom).toBe(now - 100);
  });
});
