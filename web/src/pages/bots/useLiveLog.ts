// A bot's event log, kept live by polling the newest page (the server has no push channel for it):
// entries with a seq_id above the last one seen are appended, a gap larger than one page is filled
// by paging back, and older entries page in on request. At most MAX_ENTRIES stay in memory: live
// appends drop the oldest; reading further back than that drops the newest and pauses live updates
// until the person returns to the newest entries.
import { useCallback, useEffect, useRef, useState } from "react";
import { post } from "../../api/client";
import type { BotLogEntry } from "../../api/types";

export const MAX_ENTRIES = 2000;
const FIRST_PAGE = 100;
const POLL_PAGE = 200;
const OLDER_PAGE = 100;
const POLL_MS = 1500;
const MAX_BACKOFF_MS = 15_000;

interface LogPage {
  logs: BotLogEntry[];
  total_count: number;
}

export type LiveState = "loading" | "live" | "retrying" | "paused";

function fetchPage(uuid: string, from_index: number, max_count: number) {
  return post<LogPage>(`/platform/bots/${uuid}/logs`, { from_index, max_count });
}

export function useLiveLog(uuid: string) {
  const [entries, setEntries] = useState<BotLogEntry[]>([]); // oldest first
  const [state, setState] = useState<LiveState>("loading");
  const [error, setError] = useState<unknown>(null);
  const [oldestRetained, setOldestRetained] = useState<number | null>(null);
  const [loadingOlder, setLoadingOlder] = useState(false);
  const [olderError, setOlderError] = useState<unknown>(null);
  const [generation, setGeneration] = useState(0); // bumping it restarts from the newest
  const entriesRef = useRef(entries);
  entriesRef.current = entries;
  const pausedRef = useRef(false);

  useEffect(() => {
    let stopped = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    let failures = 0;
    let lastSeen = -1;
    let first = true;
    pausedRef.current = false;
    setEntries([]);
    setState("loading");
    setError(null);

    const schedule = (ms: number) => {
      clearTimeout(timer);
      if (!stopped) timer = setTimeout(tick, ms);
    };

    async function tick() {
      if (stopped || pausedRef.current) return;
      if (document.hidden) return; // resumed by the visibilitychange listener
      try {
        const page = await fetchPage(uuid, -1, first ? FIRST_PAGE : POLL_PAGE);
        if (stopped || pausedRef.current) return;
        let fresh = page.logs.filter((e) => e.seq_id > lastSeen);
        // More entries arrived since the last poll than one page holds: page back to fill the gap.
        while (!first && fresh.length > 0 && fresh[0].seq_id > lastSeen + 1 && fresh.length < MAX_ENTRIES) {
          const back = await fetchPage(uuid, fresh[0].seq_id - 1, POLL_PAGE);
          if (stopped || pausedRef.current) return;
          const older = back.logs.filter((e) => e.seq_id > lastSeen);
          if (older.length === 0) break;
          fresh = [...older, ...fresh];
        }
        const newest = page.logs.length > 0 ? page.logs[page.logs.length - 1].seq_id : lastSeen;
        setOldestRetained(page.total_count > 0 ? newest - page.total_count + 1 : null);
        if (fresh.length > 0) {
          lastSeen = fresh[fresh.length - 1].seq_id;
          setEntries((current) => {
            const merged = first ? fresh : [...current, ...fresh];
            return merged.length > MAX_ENTRIES ? merged.slice(merged.length - MAX_ENTRIES) : merged;
          });
        }
        first = false;
        failures = 0;
        setError(null);
        setState("live");
        schedule(POLL_MS);
      } catch (e) {
        if (stopped) return;
        failures += 1;
        setError(e);
        setState("retrying");
        schedule(Math.min(POLL_MS * 2 ** failures, MAX_BACKOFF_MS));
      }
    }

    const onVisible = () => {
      if (!document.hidden) schedule(0);
    };
    document.addEventListener("visibilitychange", onVisible);
    void tick();
    return () => {
      stopped = true;
      clearTimeout(timer);
      document.removeEventListener("visibilitychange", onVisible);
    };
  }, [uuid, generation]);

  const oldestInView = entries.length > 0 ? entries[0].seq_id : null;
  const hasOlder = oldestInView !== null && oldestRetained !== null && oldestInView > oldestRetained;

  const loadOlder = useCallback(async () => {
    const current = entriesRef.current;
    if (current.length === 0) return;
    setLoadingOlder(true);
    setOlderError(null);
    try {
      const page = await fetchPage(uuid, current[0].seq_id - 1, OLDER_PAGE);
      if (entriesRef.current.length + page.logs.length > MAX_ENTRIES) {
        pausedRef.current = true;
        setState("paused");
      }
      setEntries((now) => {
        const older = page.logs.filter((e) => e.seq_id < (now[0]?.seq_id ?? Infinity));
        const merged = [...older, ...now];
        return merged.length <= MAX_ENTRIES ? merged : merged.slice(0, MAX_ENTRIES);
      });
      if (page.logs.length === 0) setOldestRetained(current[0].seq_id);
    } catch (e) {
      setOlderError(e);
    } finally {
      setLoadingOlder(false);
    }
  }, [uuid]);

  const backToNewest = useCallback(() => setGeneration((g) => g + 1), []);

  return { entries, state, error, hasOlder, loadOlder, loadingOlder, olderError, backToNewest };
}
