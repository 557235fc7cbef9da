// Messages and model calls over time: from the server's monitoring records (monitoring.ts) when it
// has them, otherwise computed in the browser from bots' event logs. What the log fallback reads is
// bounded and said on the page: the newest LOG_PAGE entries of up to MAX_BOTS enabled bots, the
// most recently updated first.
//
// Entries are classified by the texts the server writes (src/runtime/bot_runtime_manager.cpp,
// src/pipeline/engine.cpp): "message from <who>: …" when a message arrives, "reply: …" or
// "reply (<made by>): …" when a reply was delivered ("reply (model <uuid>, <n> ms): …" when a
// model made it), "run failed for <session> after <n> ms: …" when the runner (the model call)
// failed.
import { useQuery } from "@tanstack/react-query";
import { post } from "../../api/client";
import type { Bot, BotLogEntry } from "../../api/types";
import { readMonitoring } from "./monitoring";

export const MAX_BOTS = 20;
export const LOG_PAGE = 200;
export const WINDOW_HOURS = 24;
export const BUCKET_SECONDS = 3600;

export const seriesNames = ["messages", "replies", "modelCalls", "failures"] as const;
export type SeriesName = (typeof seriesNames)[number];

export function classify(text: string): SeriesName[] {
  if (text.startsWith("message from ")) return ["messages"];
  if (text.startsWith("reply (model ")) return ["replies", "modelCalls"];
  if (text.startsWith("reply: ") || text.startsWith("reply (")) return ["replies"];
  if (text.startsWith("run failed for ")) return ["failures"];
  return [];
}

export interface Activity {
  // Where the numbers come from: the server's monitoring records, or the bots' event logs.
  source: "monitoring" | "logs";
  // Bucket start times (unix seconds), oldest first, and one count per bucket for each series.
  times: number[];
  counts: Record<SeriesName, number[]>;
  totals: Record<SeriesName, number>;
  botsRead: number;
  botsFailed: number;
  // From this time on every read bot's entries are all counted; before it, a busy bot's entries
  // may lie beyond the newest LOG_PAGE and be missing. Null when nothing was cut off.
  completeFrom: number | null;
}

export function pickBots(bots: Bot[]): Bot[] {
  return bots
    .filter((b) => b.enable)
    .sort((a, b) => (a.updated_at < b.updated_at ? 1 : a.updated_at > b.updated_at ? -1 : 0))
    .slice(0, MAX_BOTS);
}

export function bucketise(
  pages: BotLogEntry[][],
  now: number,
  pageSize = LOG_PAGE,
): Omit<Activity, "botsRead" | "botsFailed" | "source"> {
  const end = Math.ceil(now / BUCKET_SECONDS) * BUCKET_SECONDS;
  const start = end - WINDOW_HOURS * BUCKET_SECONDS;
  const times = Array.from({ length: WINDOW_HOURS }, (_, i) => start + i * BUCKET_SECONDS);
  const empty = () => new Array<number>(WINDOW_HOURS).fill(0);
  const counts = { messages: empty(), replies: empty(), modelCalls: empty(), failures: empty() };
  const totals = { messages: 0, replies: 0, modelCalls: 0, failures: 0 };
  let completeFrom: number | null = null;
  for (const entries of pages) {
    if (entries.length >= pageSize && entries[0].timestamp > start) {
      completeFrom = Math.max(completeFrom ?? 0, entries[0].timestamp);
    }
    for (const e of entries) {
      if (e.timestamp < start || e.timestamp >= end) continue;
      const bucket = Math.floor((e.timestamp - start) / BUCKET_SECONDS);
      for (const s of classify(e.text)) {
        counts[s][bucket] += 1;
        totals[s] += 1;
      }
    }
  }
  return { times, counts, totals, completeFrom };
}

async function readActivity(bots: Bot[]): Promise<Activity> {
  const results = await Promise.allSettled(
    bots.map((b) =>
      post<{ logs: BotLogEntry[] }>(`/platform/bots/${b.uuid}/logs`, { from_index: -1, max_count: LOG_PAGE }),
    ),
  );
  const pages = results.flatMap((r) => (r.status === "fulfilled" ? [r.value.logs] : []));
  const failed = results.length - pages.length;
  if (results.length > 0 && failed === results.length) {
    throw (results[0] as PromiseRejectedResult).reason;
  }
  return { ...bucketise(pages, Date.now() / 1000), source: "logs", botsRead: pages.length, botsFailed: failed };
}

// Once the server said it has no monitoring (404), later refreshes go straight to the logs.
let monitoringMissing = false;

async function readBest(bots: Bot[]): Promise<Activity> {
  if (!monitoringMissing) {
    const fromServer = await readMonitoring(Date.now() / 1000);
    if (fromServer) return { ...fromServer, source: "monitoring", botsRead: 0, botsFailed: 0 };
    monitoringMissing = true;
  }
  return readActivity(bots);
}

export function useActivity(bots: Bot[] | undefined) {
  const picked = bots ? pickBots(bots) : [];
  return useQuery({
    queryKey: ["dashboard", "activity", picked.map((b) => b.uuid).join(",")],
    queryFn: () => readBest(picked),
    enabled: bots !== undefined,
    // The log reads are the page's heaviest work: once a minute is enough for an hourly chart.
    staleTime: 60_000,
    refetchInterval: 60_000,
    placeholderData: (previous) => previous,
  });
}
