// One debug-chat session (a pipeline and person or group) over its WebSocket (docs/bots.md "The
// pipeline debug chat"). The socket reconnects with backoff when lost, waits for the network when
// the browser is offline, and reloads the session's history on every connect so nothing said while
// away is missing. A message whose echo never came back (the socket dropped, the server refused
// it) is handed back to the composer instead of vanishing.
import { useCallback, useEffect, useReducer, useRef, useState } from "react";
import { ApiError, get, post, websocketUrl } from "../../api/client";
import type { ChainElement, ChatMessage, SessionType } from "./types";

export type Connection =
  | { status: "connecting" }
  | { status: "connected" }
  | { status: "reconnecting"; attempt: number; retryAt: number }
  | { status: "offline" }
  | { status: "failed"; message: string };

export interface Notice {
  key: number;
  afterId: number; // shown after this message (-1: before all)
  tone: "ignored" | "error";
  text: string;
}

export interface Unsent {
  text: string;
  image: string | null;
}

interface State {
  messages: Map<number, ChatMessage>;
  notices: Notice[];
}

type Action =
  | { type: "upsert"; message: ChatMessage }
  | { type: "history"; messages: ChatMessage[] }
  | { type: "notice"; tone: Notice["tone"]; text: string }
  | { type: "clear" };

let noticeKey = 0;

function reduce(state: State, action: Action): State {
  switch (action.type) {
    case "upsert": {
      const messages = new Map(state.messages);
      messages.set(action.message.id, action.message);
      return { ...state, messages };
    }
    case "history": {
      // The server's list wins; a reply still being streamed is not in it yet and stays.
      const messages = new Map(action.messages.map((m) => [m.id, m]));
      for (const m of state.messages.values()) if (!m.is_final && !messages.has(m.id)) messages.set(m.id, m);
      return { ...state, messages };
    }
    case "notice": {
      const afterId = Math.max(-1, ...state.messages.keys());
      return { ...state, notices: [...state.notices, { key: ++noticeKey, afterId, tone: action.tone, text: action.text }] };
    }
    case "clear":
      return { messages: new Map(), notices: [] };
  }
}

const maxDelayMs = 30_000;
const pingEveryMs = 20_000;

export function useChatSocket(pipelineUuid: string, sessionType: SessionType, onUnsent: (u: Unsent, why: string) => void) {
  const [state, dispatch] = useReducer(reduce, { messages: new Map(), notices: [] });
  const [connection, setConnection] = useState<Connection>({ status: "connecting" });
  const socket = useRef<WebSocket | null>(null);
  const myConnectionId = useRef<string | null>(null);
  const pending = useRef<Unsent | null>(null);
  const reconnectNow = useRef<() => void>(() => {});
  const onUnsentRef = useRef(onUnsent);
  onUnsentRef.current = onUnsent;

  const historyPath = `/pipelines/${pipelineUuid}/ws/messages/${sessionType}`;

  useEffect(() => {
    let disposed = false;
    let attempt = 0;
    let timer: number | undefined;
    let pinger: number | undefined;

    const giveBack = (why: string) => {
      if (pending.current) onUnsentRef.current(pending.current, why);
      pending.current = null;
    };

    const schedule = () => {
      if (disposed) return;
      if (!navigator.onLine) return setConnection({ status: "offline" });
      attempt += 1;
      // Exponential backoff with jitter: 1 s, 2 s, 4 s ... up to 30 s.
      const delay = Math.min(maxDelayMs, 1000 * 2 ** (attempt - 1)) * (0.75 + Math.random() * 0.5);
      setConnection({ status: "reconnecting", attempt, retryAt: Date.now() + delay });
      timer = window.setTimeout(connect, delay);
    };

    const connect = () => {
      window.clearTimeout(timer);
      if (disposed) return;
      let opened = false;
      let lastPong = Date.now();
      setConnection((c) => (c.status === "reconnecting" ? c : { status: "connecting" }));
      const ws = new WebSocket(websocketUrl(`/pipelines/${pipelineUuid}/ws/connect`, { session_type: sessionType }));
      socket.current = ws;
      ws.onmessage = (event) => {
        let frame: { type?: string; [k: string]: unknown };
        try {
          frame = JSON.parse(String(event.data));
        } catch {
          return;
        }
        switch (frame.type) {
          case "connected":
            opened = true;
            attempt = 0;
            myConnectionId.current = String(frame.connection_id ?? "");
            setConnection({ status: "connected" });
            get<{ messages: ChatMessage[] }>(historyPath).then(
              (d) => !disposed && dispatch({ type: "history", messages: d.messages }),
              () => {},
            );
            window.clearInterval(pinger);
            pinger = window.setInterval(() => {
              // No pong for two rounds: the connection is dead even if the browser has not noticed.
              if (Date.now() - lastPong > 2 * pingEveryMs + 5_000) return ws.close();
              if (ws.readyState === WebSocket.OPEN) ws.send(JSON.stringify({ type: "ping" }));
            }, pingEveryMs);
            break;
          case "pong":
            lastPong = Date.now();
            break;
          case "user_message":
          case "response": {
            const message = frame.data as ChatMessage;
            if (frame.type === "user_message" && message.connection_id === myConnectionId.current) pending.current = null;
            dispatch({ type: "upsert", message });
            break;
          }
          case "ignored":
            dispatch({ type: "notice", tone: "ignored", text: String(frame.message ?? frame.reason ?? "") });
            break;
          case "error":
            dispatch({ type: "notice", tone: "error", text: String(frame.message ?? "") });
            giveBack(String(frame.message ?? ""));
            break;
        }
      };
      ws.onclose = () => {
        window.clearInterval(pinger);
        if (socket.current === ws) socket.current = null;
        if (disposed) return;
        giveBack("lost");
        if (opened) return schedule();
        // Never got in: ask over HTTP why, so a deleted pipeline or a bad session stops retrying.
        get(historyPath).then(schedule, (e) => {
          if (disposed) return;
          if (e instanceof ApiError && e.status >= 400 && e.status < 500) {
            setConnection({ status: "failed", message: e.message });
          } else {
            schedule();
          }
        });
      };
    };

    const online = () => {
      if (socket.current === null && !disposed) {
        attempt = 0;
        connect();
      }
    };
    const offline = () => socket.current?.close();
    reconnectNow.current = () => {
      attempt = 0;
      if (socket.current === null) connect();
    };
    window.addEventListener("online", online);
    window.addEventListener("offline", offline);
    connect();
    return () => {
      disposed = true;
      window.clearTimeout(timer);
      window.clearInterval(pinger);
      window.removeEventListener("online", online);
      window.removeEventListener("offline", offline);
      const ws = socket.current;
      socket.current = null;
      if (ws) {
        if (ws.readyState === WebSocket.OPEN) ws.send(JSON.stringify({ type: "disconnect" }));
        ws.close();
      }
    };
  }, [pipelineUuid, sessionType, historyPath]);

  // False when the message cannot go out now; the caller keeps it.
  const send = useCallback((chain: ChainElement[], unsent: Unsent): boolean => {
    const ws = socket.current;
    if (!ws || ws.readyState !== WebSocket.OPEN) return false;
    pending.current = unsent;
    ws.send(JSON.stringify({ type: "message", message: chain, stream: true }));
    return true;
  }, []);

  const reset = useCallback(async () => {
    await post(`/pipelines/${pipelineUuid}/ws/reset/${sessionType}`);
    dispatch({ type: "clear" });
  }, [pipelineUuid, sessionType]);

  return { ...state, connection, send, reset, reconnectNow: () => reconnectNow.current() };
}
