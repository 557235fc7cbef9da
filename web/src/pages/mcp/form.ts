// The MCP server form's values and their mapping to and from LangBot's extra_args, kept apart from
// the dialog so the mapping is unit-tested. Keys of extra_args the form does not know (a newer
// server's, or another mode's) are kept as they were, so editing never loses configuration.
import type { McpMode, McpServer } from "./types";

export interface Pair {
  key: string;
  value: string;
}

export interface McpForm {
  name: string;
  mode: McpMode;
  enable: boolean;
  url: string;
  headers: Pair[];
  timeout: string; // seconds, empty: the server's default (10)
  sseReadTimeout: string; // seconds, empty: the server's default (30)
  command: string;
  args: string; // one per line
  env: Pair[];
}

export const modes: McpMode[] = ["http", "sse", "stdio"];

// The keys the form edits; everything else in extra_args is carried over untouched.
const formKeys = new Set(["url", "headers", "timeout", "ssereadtimeout", "command", "args", "env"]);

const pairsOf = (v: unknown): Pair[] =>
  v && typeof v === "object" && !Array.isArray(v)
    ? Object.entries(v as Record<string, unknown>).map(([key, value]) => ({ key, value: String(value ?? "") }))
    : [];

const text = (v: unknown) => (typeof v === "string" || typeof v === "number" ? String(v) : "");

export function formOf(server?: McpServer): McpForm {
  const a = server?.extra_args ?? {};
  return {
    name: server?.name ?? "",
    mode: modes.includes(server?.mode as McpMode) ? (server!.mode as McpMode) : "http",
    enable: server?.enable ?? true,
    url: text(a.url),
    headers: pairsOf(a.headers),
    timeout: text(a.timeout),
    sseReadTimeout: text(a.ssereadtimeout),
    command: text(a.command),
    args: Array.isArray(a.args) ? a.args.map(String).join("\n") : "",
    env: pairsOf(a.env),
  };
}

// Pairs with an empty name are dropped (an unfilled row); values are sent as typed, masks included.
function objectOf(pairs: Pair[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const p of pairs) if (p.key.trim() !== "") out[p.key.trim()] = p.value;
  return out;
}

const seconds = (s: string) => (s.trim() === "" ? undefined : Number(s));

// The body of POST /mcp/servers or PUT /mcp/servers/{name}.
export function bodyOf(form: McpForm, original?: McpServer) {
  const extra: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(original?.extra_args ?? {})) if (!formKeys.has(k)) extra[k] = v;
  if (form.mode === "stdio") {
    extra.command = form.command.trim();
    extra.args = form.args.split("\n").map((s) => s.trim()).filter(Boolean);
    extra.env = objectOf(form.env);
  } else {
    extra.url = form.url.trim();
    extra.headers = objectOf(form.headers);
    const timeout = seconds(form.timeout);
    if (timeout !== undefined) extra.timeout = timeout;
    if (form.mode === "sse") {
      const read = seconds(form.sseReadTimeout);
      if (read !== undefined) extra.ssereadtimeout = read;
    }
  }
  return { name: form.name.trim(), mode: form.mode, enable: form.enable, extra_args: extra };
}

// What a row shows: the server's own status, or "disabled" (a disabled server has no session).
export function statusOf(server: McpServer): string {
  if (!server.enable) return "disabled";
  return server.runtime_info?.status ?? "connecting";
}
