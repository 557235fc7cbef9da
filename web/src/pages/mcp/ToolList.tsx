// The tools an MCP server offers, by name with their description.
import type { McpTool } from "./types";

export function ToolList({ tools }: { tools: McpTool[] }) {
  if (tools.length === 0) return null;
  return (
    <ul className="mcp-tools">
      {tools.map((tool) => (
        <li key={tool.name}>
          <span className="mono">{tool.name}</span>
          {tool.description && <span className="muted"> — {tool.description}</span>}
        </li>
      ))}
    </ul>
  );
}
