// Which MCP servers' tools this pipeline's models are offered (docs/mcp.md "Tools offered to
// models"): all servers, or only the checked ones. Kept in the same extensions_preferences as the
// plugin bindings ({enable_all_mcp_servers, mcp_servers: [name]}) and saved with the pipeline; the
// servers and their live status come from GET /pipelines/{uuid}/extensions. A binding to a server
// that no longer exists is listed so it can be dropped, never hidden.
import { useQuery } from "@tanstack/react-query";
import { useId } from "react";
import { useTranslation } from "react-i18next";
import { Link } from "react-router";
import { get } from "../../api/client";
import { QueryState } from "../../components/PageState";
import { StatusBadge } from "../../components/StatusBadge";
import { statusOf } from "../mcp/form";
import type { McpServer } from "../mcp/types";
import type { ExtensionsPreferences } from "./types";

interface Extensions {
  available_mcp_servers: McpServer[];
}

export function McpBindings({
  pipelineUuid,
  value,
  onChange,
}: {
  pipelineUuid: string;
  value: ExtensionsPreferences;
  onChange: (v: ExtensionsPreferences) => void;
}) {
  const { t } = useTranslation("pipelines");
  const id = useId();
  const extensions = useQuery({
    queryKey: ["pipelines", pipelineUuid, "extensions"],
    queryFn: () => get<Extensions>(`/pipelines/${pipelineUuid}/extensions`),
  });
  const all = value.enable_all_mcp_servers !== false;
  const bound: string[] = Array.isArray(value.mcp_servers) ? (value.mcp_servers as string[]) : [];
  const toggle = (name: string, on: boolean) =>
    onChange({ ...value, mcp_servers: on ? [...bound, name] : bound.filter((b) => b !== name) });

  return (
    <section className="card" aria-labelledby={`${id}-title`}>
      <h3 id={`${id}-title`}>{t("mcp.title")}</h3>
      <p className="muted">{t("mcp.help")}</p>
      <div className="field field-check">
        <input
          id={`${id}-all`}
          type="checkbox"
          checked={all}
          onChange={(e) => onChange({ ...value, enable_all_mcp_servers: e.target.checked, mcp_servers: bound })}
        />
        <label htmlFor={`${id}-all`}>{t("mcp.all")}</label>
      </div>
      <QueryState query={extensions}>
        {({ available_mcp_servers: servers }) => {
          const missing = bound.filter((b) => !servers.some((s) => s.name === b));
          if (servers.length === 0 && missing.length === 0) {
            return (
              <p className="muted">
                {t("mcp.none")} <Link to="/mcp">{t("mcp.add")}</Link>
              </p>
            );
          }
          return (
            <fieldset className="plugin-list" disabled={all}>
              <legend>{all ? t("mcp.listAll") : t("mcp.listSome")}</legend>
              {servers.map((s) => {
                const cid = `${id}-${s.uuid}`;
                return (
                  <div key={s.uuid} className="field field-check">
                    <input
                      id={cid}
                      type="checkbox"
                      checked={all || bound.includes(s.name)}
                      onChange={(e) => toggle(s.name, e.target.checked)}
                    />
                    <label htmlFor={cid}>
                      {s.name} <StatusBadge status={statusOf(s)} />
                      {s.runtime_info && (
                        <span className="muted"> {t("mcp.tools", { count: s.runtime_info.tool_count })}</span>
                      )}
                    </label>
                  </div>
                );
              })}
              {missing.map((name) => {
                const cid = `${id}-missing-${name}`;
                return (
                  <div key={name} className="field field-check">
                    <input id={cid} type="checkbox" checked onChange={() => toggle(name, false)} />
                    <label htmlFor={cid}>
                      <span className="mono">{name}</span> <span className="badge badge-warning">{t("mcp.gone")}</span>
                    </label>
                  </div>
                );
              })}
            </fieldset>
          );
        }}
      </QueryState>
    </section>
  );
}
