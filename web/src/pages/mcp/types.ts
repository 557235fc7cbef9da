// GET /mcp/servers (src/http/api/mcp_routes.cpp, docs/mcp.md): LangBot 4.9.5's shapes. Every
// `headers` and `env` value of extra_args comes masked; a PUT that sends a mask back unchanged keeps
// the stored value. runtime_info is null for a disabled server.
export type McpMode = "http" | "sse" | "stdio";

export interface McpTool {
  name: string;
  description: string;
}

export interface McpRuntime {
  status: "connected" | "connecting" | "error" | string;
  error_message: string | null;
  tool_count: number;
  tools: McpTool[];
  restarts: number;
}

export interface McpServer {
  uuid: string;
  name: string;
  enable: boolean;
  mode: McpMode | string;
  extra_args: Record<string, unknown>;
  runtime_info: McpRuntime | null;
  created_at: string;
  updated_at: string;
}

// The connection test's result (the task's runtime.result).
export interface McpTestResult {
  protocol_version?: string;
  tool_count?: number;
  tools?: McpTool[];
}
