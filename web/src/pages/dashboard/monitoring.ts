// Activity from the server's monitoring records (issue 18; LangBot 4.9.5's /monitoring routes).
// LangBot has no time-series route. Model calls: each hour of the window is one GET
// /monitoring/overview (exact counts of that hour). Messages and replies: the overview's
// total_messages counts both (every recorded message row, as LangBot), so they come from GET
// /monitoring/messages of the whole window, bucketed here by role (`user` received, `assistant` a
// delivered reply); failed runs likewise from GET /monitoring/errors. Those pages hold the newest
// MAX_PAGE rows; beyond that the page says from when the counts are complete. A server without
// monitoring answers 404; the dashboard then falls back to the bots' event logs (activity.ts).
import { ApiError, get } from "../../api/client";
import { BUCKET_SECONDS, WINDOW_HOURS, type Activity, type SeriesName } from "./activity";

export interface Overview {
  total_messages: number;
  llm_calls: number;
  embedding_calls: number;
  model_calls: number;
  success_rate: number; // percent, two decimals; 100 when there were no messages
  active_sessions: number;
}

export const MAX_PAGE = 1000; // the server's largest page

export interface MessageRow {
  role: string;
  timestamp: string;
}

// Bucket start times (unix seconds), oldest first: the last WINDOW_HOURS whole hours up to now.
export function hourWindows(now: number): number[] {
  const end = Math.ceil(now / BUCKET_SECONDS) * BUCKET_SECONDS;
  const start = end - WINDOW_HOURS * BUCKET_SECONDS;
  return Array.from({ length: WINDOW_HOURS }, (_, i) => start + i * BUCKET_SECONDS);
}

// The server takes ISO 8601 times; its rows carry naive UTC ones (LangBot's isoformat()).
export const isoOf = (seconds: number) => new Date(seconds * 1000).toISOString();
export function secondsOf(timestamp: string): number {
  const zoned = /(Z|[+-]\d\d:?\d\d)$/.test(timestamp) ? timestamp : `${timestamp}Z`;
  return Date.parse(zoned) / 1000;
}

export function fromMonitoring(
  times: number[],
  overviews: Overview[],
  messages: MessageRow[],
  messagesTotal: number,
  errorTimes: string[],
  errorsTotal: number,
): Omit<Activity, "botsRead" | "botsFailed" | "source"> {
  const zeros = () => new Array<number>(times.length).fill(0);
  const counts: Record<SeriesName, number[]> = {
    messages: zeros(),
    replies: zeros(),
    modelCalls: overviews.map((o) => o.llm_calls),
    failures: zeros(),
  };
  const start = times[0];
  const end = times[times.length - 1] + BUCKET_SECONDS;
  // Adds each row to its hour; answers the oldest time read (null when none was in the window).
  const bucket = (rows: { timestamp: string }[], series: (row: number) => SeriesName | null) => {
    let oldest: number | null = null;
    rows.forEach((r, i) => {
      const t = secondsOf(r.timestamp);
      if (!Number.isFinite(t) || t < start || t >= end) return;
      oldest = oldest === null ? t : Math.min(oldest, t);
      const name = series(i);
      if (name) counts[name][Math.floor((t - start) / BUCKET_SECONDS)] += 1;
    });
    return oldest as number | null;
  };
  const role = (i: number): SeriesName | null =>
    messages[i].role === "user" ? "messages" : messages[i].role === "assistant" ? "replies" : null;
  const oldestMessage = bucket(messages, role);
  const oldestError = bucket(
    errorTimes.map((timestamp) => ({ timestamp })),
    () => "failures",
  );
  const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);
  const totals = {
    messages: sum(counts.messages),
    replies: sum(counts.replies),
    modelCalls: sum(counts.modelCalls),
    failures: errorsTotal,
  };
  // More rows than one page: the newest were read, so counts before the oldest read may be low.
  const cuts = [
    messagesTotal > messages.length ? oldestMessage : null,
    errorsTotal > errorTimes.length ? oldestError : null,
  ].filter((t): t is number => t !== null);
  const completeFrom = cuts.length ? Math.max(...cuts) : null;
  return { times, counts, totals, completeFrom };
}

// Resolves with null when the server has no monitoring routes (404).
export async function readMonitoring(now: number): Promise<Omit<Activity, "botsRead" | "botsFailed" | "source"> | null> {
  const times = hourWindows(now);
  const windowEnd = times[times.length - 1] + BUCKET_SECONDS;
  const range = (from: number, to: number) => ({ startTime: isoOf(from), endTime: isoOf(to - 0.001) });
  try {
    const window = { ...range(times[0], windowEnd), limit: MAX_PAGE };
    const [overviews, messages, errors] = await Promise.all([
      Promise.all(times.map((t) => get<Overview>("/monitoring/overview", range(t, t + BUCKET_SECONDS)))),
      get<{ messages: MessageRow[]; total: number }>("/monitoring/messages", window),
      get<{ errors: { timestamp: string }[]; total: number }>("/monitoring/errors", window),
    ]);
    return fromMonitoring(
      times,
      overviews,
      messages.messages,
      messages.total,
      errors.errors.map((e) => e.timestamp),
      errors.total,
    );
  } catch (e) {
    if (e instanceof ApiError && e.status === 404) return null;
    throw e;
  }
}
