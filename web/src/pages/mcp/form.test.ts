import { describe, expect, it } from "vitest";
import { bodyOf, formOf, statusOf } from "./form";
import type { McpServer } from "./types";

const server = (over: Partial<McpServer>): McpServer => ({
  uuid: "u",
  name: "github",
  enable: true,
  mode: "http",
  extra_args: {},
  runtime_info: null,
  created_at: "",
  updated_at: "",
  ...over,
});

describe("MCP server form", () => {
  it("sends masked header values back as they came, so the server keeps the secret", () => {
    const s = server({
      extra_args: { url: "https://x/mcp", headers: { Authorization: "Bear...cdef", "X-Plain": "****" }, timeout: 10 },
    });
    const body = bodyOf(formOf(s), s);
    expect(body.extra_args).toEqual({ url: "https://x/mcp", headers: { Authorization: "Bear...cdef", "X-Plain": "****" }, timeout: 10 });
  });

  it("keeps keys it does not edit and drops empty rows", () => {
    const s = server({ extra_args: { url: "https://x/mcp", future_option: { a: 1 } } });
    const form = { ...formOf(s), headers: [{ key: " ", value: "v" }, { key: "A", value: "b" }], timeout: "" };
    expect(bodyOf(form, s).extra_args).toEqual({ url: "https://x/mcp", headers: { A: "b" }, future_option: { a: 1 } });
  });

  it("maps stdio's command, one argument per line and the environment", () => {
    const form = { ...formOf(), name: " tools ", mode: "stdio" as const, command: "python3", args: "-m\n\n server \n", env: [{ key: "TOKEN", value: "t" }] };
    expect(bodyOf(form)).toEqual({
      name: "tools",
      mode: "stdio",
      enable: true,
      extra_args: { command: "python3", args: ["-m", "server"], env: { TOKEN: "t" } },
    });
  });

  it("sends sse's read timeout as a number, only in sse mode", () => {
    const form = { ...formOf(), mode: "sse" as const, url: "https://x/sse", timeout: "5", sseReadTimeout: "40" };
    expect(bodyOf(form).extra_args).toEqual({ url: "https://x/sse", headers: {}, timeout: 5, ssereadtimeout: 40 });
    expect(bodyOf({ ...form, mode: "http" }).extra_args).toEqual({ url: "https://x/sse", headers: {}, timeout: 5 });
  });

  it("shows a disabled server as disabled and one without a session yet as connecting", () => {
    expect(statusOf(server({ enable: false }))).toBe("disabled");
    expect(statusOf(server({}))).toBe("connecting");
    expect(statusOf(server({ runtime_info: { status: "error", error_message: "x", tool_count: 0, tools: [], restarts: 2 } }))).toBe("error");
  });
});
