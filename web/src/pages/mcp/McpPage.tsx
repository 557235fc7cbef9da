// /mcp: the MCP servers whose tools models may call (docs/mcp.md). Each row shows the server's
// session as the server reports it (connected, connecting, error with the reason, restarts, tools);
// the list is read again every few seconds while a session is still connecting.
import { useQuery, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { useTranslation } from "react-i18next";
import { del, get, put } from "../../api/client";
import { PageHeader } from "../../app/Layout";
import { ConfirmDelete } from "../../components/Dialog";
import { Empty, QueryState } from "../../components/PageState";
import { ServerSwitch } from "../../components/ServerSwitch";
import { StatusBadge } from "../../components/StatusBadge";
import { statusOf } from "./form";
import { McpServerDialog } from "./McpServerDialog";
import { McpTestDialog } from "./McpTestDialog";
import { ToolList } from "./ToolList";
import type { McpServer } from "./types";
import "./mcp.css";

export const mcpKey = ["mcp", "servers"];

export default function McpPage() {
  const { t } = useTranslation("mcp");
  const { t: tc } = useTranslation();
  const client = useQueryClient();
  const servers = useQuery({
    queryKey: mcpKey,
    queryFn: () => get<{ servers: McpServer[] }>("/mcp/servers").then((d) => d.servers),
    refetchInterval: (q) => (q.state.data?.some((s) => statusOf(s) === "connecting") ? 1500 : 10_000),
  });
  const [creating, setCreating] = useState(false);
  const [editing, setEditing] = useState<McpServer | null>(null);
  const [testing, setTesting] = useState<McpServer | null>(null);
  const refresh = () => client.invalidateQueries({ queryKey: mcpKey });
  const path = (s: McpServer) => `/mcp/servers/${encodeURIComponent(s.name)}`;

  return (
    <>
      <PageHeader
        title={t("title")}
        actions={
          <button type="button" className="btn btn-primary" onClick={() => setCreating(true)}>
            {t("new")}
          </button>
        }
      >
        <p className="muted">{t("intro")}</p>
      </PageHeader>
      <QueryState query={servers}>
        {(list) =>
          list.length === 0 ? (
            <Empty>{t("empty")}</Empty>
          ) : (
            <div className="table-wrap">
              <table className="table table-cards">
                <thead>
                  <tr>
                    <th scope="col">{t("col.name")}</th>
                    <th scope="col">{t("col.mode")}</th>
                    <th scope="col">{t("col.status")}</th>
                    <th scope="col">{t("col.tools")}</th>
                    <th scope="col">{t("col.enabled")}</th>
                    <th scope="col">
                      <span className="visually-hidden">{t("col.actions")}</span>
                    </th>
                  </tr>
                </thead>
                <tbody>
                  {list.map((s) => {
                    const rt = s.runtime_info;
                    return (
                      <tr key={s.uuid}>
                        <td data-label={t("col.name")}>
                          <strong>{s.name}</strong>
                          <div className="muted mono mcp-target">{String(s.extra_args.url ?? s.extra_args.command ?? "")}</div>
                        </td>
                        <td className="nowrap" data-label={t("col.mode")}>
                          {t(`mode.${s.mode}`, { defaultValue: s.mode })}
                        </td>
                        <td className="mcp-status" data-label={t("col.status")}>
                          <StatusBadge status={statusOf(s)} />
                          {rt?.error_message && <p className="field-error mcp-error">{rt.error_message}</p>}
                          {rt && rt.restarts > 0 && <p className="muted mcp-restarts">{t("restarts", { count: rt.restarts })}</p>}
                        </td>
                        <td className="mcp-tools-cell" data-label={t("col.tools")}>
                          {rt ? (
                            rt.tools.length > 0 ? (
                              <details>
                                <summary>{t("toolCount", { count: rt.tool_count })}</summary>
                                <ToolList tools={rt.tools} />
                              </details>
                            ) : (
                              t("toolCount", { count: rt.tool_count })
                            )
                          ) : (
                            <span className="muted">—</span>
                          )}
                        </td>
                        <td data-label={t("col.enabled")}>
                          <ServerSwitch
                            checked={s.enable}
                            label={t("enableNamed", { name: s.name })}
                            onToggle={async (next) => {
                              await put(path(s), { enable: next });
                              await refresh();
                            }}
                            failureText={(m) => t("toggleFailed", { message: m })}
                          />
                        </td>
                        <td>
                          <div className="row row-actions mcp-actions">
                            <button
                              type="button"
                              className="btn btn-small"
                              aria-label={t("testNamed", { name: s.name })}
                              onClick={() => setTesting(s)}
                            >
                              {t("test.button")}
                            </button>
                            <button
                              type="button"
                              className="btn btn-small"
                              aria-label={t("editNamed", { name: s.name })}
                              onClick={() => setEditing(s)}
                            >
                              {tc("edit")}
                            </button>
                            <ConfirmDelete
                              what={s.name}
                              triggerLabel={t("deleteNamed", { name: s.name })}
                              detail={t("deleteDetail")}
                              onConfirm={async () => {
                                await del(path(s));
                                await refresh();
                              }}
                            />
                          </div>
                        </td>
                      </tr>
                    );
                  })}
                </tbody>
              </table>
            </div>
          )
        }
      </QueryState>
      <McpServerDialog
        open={creating}
        onOpenChange={setCreating}
        onSaved={() => {
          setCreating(false);
          void refresh();
        }}
      />
      <McpServerDialog
        open={editing !== null}
        onOpenChange={(o) => !o && setEditing(null)}
        server={editing ?? undefined}
        onSaved={() => {
          setEditing(null);
          void refresh();
        }}
      />
      <McpTestDialog server={testing} onClose={() => setTesting(null)} />
    </>
  );
}
