// The one way the console talks to the server: JSON over /api/v1 with the envelope of contract §1
// ({code, msg, data}). A non-zero code or a non-2xx status becomes an ApiError carrying the server's
// own message, so every page can show why something failed instead of a blank screen.
import { clearToken, getToken } from "../auth/token";

export class ApiError extends Error {
  constructor(
    public readonly status: number,
    message: string,
    public readonly code = -1,
  ) {
    super(message);
    this.name = "ApiError";
  }
}

type Listener = () => void;
const unauthorizedListeners = new Set<Listener>();

// Called once per expired or revoked token; the auth layer sends the person to the login page.
export function onUnauthorized(listener: Listener): () => void {
  unauthorizedListeners.add(listener);
  return () => unauthorizedListeners.delete(listener);
}

export interface RequestOptions {
  method?: string;
  body?: unknown;
  query?: Record<string, string | number | boolean | undefined>;
  signal?: AbortSignal;
  // The login and first-run calls answer 401 for a wrong password: that is not a lost session.
  anonymous?: boolean;
}

export function apiUrl(path: string, query?: RequestOptions["query"]): string {
  const url = new URL(`/api/v1${path}`, window.location.origin);
  for (const [k, v] of Object.entries(query ?? {})) {
    if (v !== undefined) url.searchParams.set(k, String(v));
  }
  return url.pathname + url.search;
}

export async function api<T = unknown>(path: string, options: RequestOptions = {}): Promise<T> {
  const headers: Record<string, string> = { Accept: "application/json" };
  const token = options.anonymous ? null : getToken();
  if (token) headers.Authorization = `Bearer ${token}`;
  let body: BodyInit | undefined;
  if (options.body instanceof FormData) {
    body = options.body;
  } else if (options.body !== undefined) {
    headers["Content-Type"] = "application/json";
    body = JSON.stringify(options.body);
  }
  let response: Response;
  try {
    response = await fetch(apiUrl(path, options.query), {
      method: options.method ?? (body ? "POST" : "GET"),
      headers,
      body,
      signal: options.signal,
    });
  } catch (e) {
    if ((e as Error).name === "AbortError") throw e;
    throw new ApiError(0, "The server cannot be reached. Is Switchboard running?");
  }
  const text = await response.text();
  let envelope: { code?: number; msg?: string; data?: unknown } | undefined;
  try {
    envelope = text ? JSON.parse(text) : undefined;
  } catch {
    envelope = undefined;
  }
  if (response.status === 401 && token && !options.anonymous) {
    clearToken();
    unauthorizedListeners.forEach((l) => l());
  }
  if (!response.ok || (envelope && typeof envelope.code === "number" && envelope.code !== 0)) {
    const message = envelope?.msg || `${response.status} ${response.statusText}`.trim();
    throw new ApiError(response.status, message, envelope?.code ?? -1);
  }
  return (envelope?.data ?? null) as T;
}

export const get = <T>(path: string, query?: RequestOptions["query"]) => api<T>(path, { query });
export const post = <T>(path: string, body: unknown = {}) => api<T>(path, { method: "POST", body });
export const put = <T>(path: string, body: unknown = {}) => api<T>(path, { method: "PUT", body });
export const del = <T>(path: string) => api<T>(path, { method: "DELETE" });

// A WebSocket URL on this origin with the token in the query (browsers cannot set headers on a
// WebSocket; the server accepts `?token=` on WebSocket routes only).
export function websocketUrl(path: string, query: Record<string, string> = {}): string {
  const url = new URL(`/api/v1${path}`, window.location.href);
  url.protocol = url.protocol === "https:" ? "wss:" : "ws:";
  for (const [k, v] of Object.entries(query)) url.searchParams.set(k, v);
  const token = getToken();
  if (token) url.searchParams.set("token", token);
  return url.toString();
}
