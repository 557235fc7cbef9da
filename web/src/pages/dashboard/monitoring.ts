// Activity from the server's monitoring records (issue 18; LangBot 4.9.5's /monitoring routes).
// LangBot has no time-series route, so each hour of the window is one GET /monitoring/overview
// (exact counts of that hour), and failed runs come from GET /monitoring/errors of the whole
// window (errors are few), bucketed here. A server without monitoring answers 404; the dashboard
// then falls back to the bots' event logs (activity.ts).
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

export const MAX_ERRORS = 1000; // the server's largest page

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
  errorTimes: string[],
  errorsTotal: number,
): Omit<Activity, "botsRead" | "botsFailed" | "source"> {
  const counts: Record<SeriesName, number[]> = {
    messages: overviews.map((o) => o.total_messages),
    // Messages the pipeline finished successfully: what was answered.
    replies: overviews.map((o) => Math.round((o.total_messages * o.success_rate) / 100)),
    modelCalls: overviews.map((o) => o.llm_calls),
    failures: new Array<number>(times.length).fill(0),
  };
  const start = times[0];
  const end = times[times.length - 1] + BUCKET_SECONDS;
  let oldestRead: number | null = null;
  for (const ts of errorTimes) {
    const t = secondsOf(ts);
    if (!Number.isFinite(t) || t < start || t >= end) continue;
    counts.failures[Math.floor((t - start) / BUCKET_SECONDS)] += 1;
    oldestRead = oldestRead === null ? t : Math.min(oldestRead, t);
  }
  const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);
  const totals = {
    messages: sum(counts.messages),
    replies: sum(counts.replies),
    modelCalls: sum(counts.modelCalls),
    failures: errorsTotal,
  };
  // More errors than one page: the newest were read, so failures before the oldest read may be low.
  const completeFrom = errorsTotal > errorTimes.length && oldestRead !== null ? oldestRead : null;
  return { times, counts, totals, completeFrom };
}

// Resolves with null when the server has no monitoring routes (404).
export async function readMonitoring(now: number): Promise<Omit<Activity, "botsRead" | "botsFailed" | "source"> | null> {
  const times = hourWindows(now);
  const windowEnd = times[times.length - 1] + BUCKET_SECONDS;
  const range = (from: number, to: number) => ({ startTime: isoOf(from), endTime: isoOf(to - 0.001) });
  try {
    const [overviews, errors] = await Promise.all([
      Promise.all(times.map((t) => get<Overview>("/monitoring/overview", range(t, t + BUCKET_SECONDS)))),
      get<{ errors: { timestamp: string }[]; total: number }>("/monitoring/errors", {
        ...range(times[0], windowEnd),
        limit: MAX_ERRORS,
      }),
    ]);
    return fromMonitoring(
      times,
      overviews,
      errors.errors.map((e) => e.timestamp),
      errors.total,
    );
  } catch (e) {
    if (e instanceof ApiError && e.status === 404) return null;
    throw e;
  }
}
