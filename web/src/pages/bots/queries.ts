// The Bots pages' reads and writes. Bots are always read with `include_secret=false`: the console
// never needs a whole token, and a masked value sent back on save keeps the stored secret.
import { useQuery, useQueryClient } from "@tanstack/react-query";
import { get, put } from "../../api/client";
import type { Bot, Pipeline } from "../../api/types";
import type { Adapter } from "./types";

// Keys start with "bots" so that no other page's cache entry of another shape can collide.
export const keys = {
  adapters: ["bots", "adapters"] as const,
  bots: ["bots", "list"] as const,
  bot: (uuid: string) => ["bots", "one", uuid] as const,
  pipelines: ["bots", "pipelines"] as const,
};

// How often runtime status is re-read: the server has no push channel for it, and a status that
// changes (starting -> running, or an error) should show within a couple of seconds.
export const STATUS_POLL_MS = 2500;

export function useAdapters() {
  return useQuery({
    queryKey: keys.adapters,
    queryFn: () => get<{ adapters: Adapter[] }>("/platform/adapters").then((d) => d.adapters),
    // The catalogue is compiled into the server: it changes only with a new version.
    staleTime: Infinity,
  });
}

export function useBots(options: { live?: boolean } = {}) {
  return useQuery({
    queryKey: keys.bots,
    queryFn: () => get<{ bots: Bot[] }>("/platform/bots", { include_secret: false }).then((d) => d.bots),
    refetchInterval: options.live ? STATUS_POLL_MS : false,
    // Hidden tabs do not poll (the default, stated because the list can hold 1,000 bots).
    refetchIntervalInBackground: false,
  });
}

export function useBot(uuid: string, options: { live?: boolean } = {}) {
  return useQuery({
    queryKey: keys.bot(uuid),
    queryFn: () => get<{ bot: Bot }>(`/platform/bots/${uuid}`, { include_secret: false }).then((d) => d.bot),
    refetchInterval: options.live ? STATUS_POLL_MS : false,
    refetchIntervalInBackground: false,
  });
}

export function usePipelines() {
  return useQuery({
    queryKey: keys.pipelines,
    queryFn: () => get<{ pipelines: Pipeline[] }>("/pipelines").then((d) => d.pipelines),
  });
}

// After any write the list and the bot's own view are both stale.
export function useInvalidateBots() {
  const client = useQueryClient();
  return (uuid?: string) =>
    Promise.all([
      client.invalidateQueries({ queryKey: keys.bots }),
      uuid ? client.invalidateQueries({ queryKey: keys.bot(uuid) }) : undefined,
    ]);
}

export function setBotEnabled(uuid: string, enable: boolean) {
  return put(`/platform/bots/${uuid}`, { enable });
}
