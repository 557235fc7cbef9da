// What this server is and where it keeps its state: the public GET /system/info (version, edition,
// marketplace) and GET /system/about (data directory, config file, database, uptime), which needs
// a credential because it names paths on the server.
import { useQuery } from "@tanstack/react-query";
import { useTranslation } from "react-i18next";
import { get } from "../../api/client";
import type { SystemInfo } from "../../api/types";
import { ErrorState, QueryState } from "../../components/PageState";

interface SystemAbout {
  data_dir: string;
  config_file: string;
  database: string;
  database_path: string;
  console: string;
  webhook_prefix: string;
  started_at: number;
  uptime_seconds: number;
}

function formatUptime(seconds: number): string {
  const d = Math.floor(seconds / 86400);
  const h = Math.floor((seconds % 86400) / 3600);
  const m = Math.floor((seconds % 3600) / 60);
  return [d ? `${d}d` : "", h ? `${h}h` : "", `${m}m`].filter(Boolean).join(" ");
}

export function SystemInfoCard() {
  const { t } = useTranslation("system");
  const info = useQuery({ queryKey: ["system", "info"], queryFn: () => get<SystemInfo>("/system/info") });
  const about = useQuery({ queryKey: ["system", "about"], queryFn: () => get<SystemAbout>("/system/about") });
  const a = about.data;
  return (
    <section className="card" aria-labelledby="system-info-title">
      <h2 id="system-info-title">{t("info.title")}</h2>
      <QueryState query={info}>
        {(i) => (
          <dl className="system-facts">
            <dt>{t("info.version")}</dt>
            <dd className="mono">{i.version}</dd>
            <dt>{t("info.apiVersion")}</dt>
            <dd>
              <span className="mono">{i.api_version}</span>{" "}
              <span className="muted">{t("info.apiVersionHelp")}</span>
            </dd>
            <dt>{t("info.edition")}</dt>
            <dd>{i.edition}</dd>
            <dt>{t("info.debug")}</dt>
            <dd>{i.debug ? t("info.on") : t("info.off")}</dd>
            <dt>{t("info.marketplace")}</dt>
            <dd>
              {i.enable_marketplace ? t("info.enabled") : t("info.disabled")}
              {i.cloud_service_url && (
                <>
                  {" · "}
                  <a href={i.cloud_service_url} target="_blank" rel="noreferrer noopener" className="mono">
                    {i.cloud_service_url}
                  </a>
                </>
              )}
            </dd>
            {a && (
              <>
                <dt>{t("info.dataDir")}</dt>
                <dd className="mono">{a.data_dir}</dd>
                <dt>{t("info.configFile")}</dt>
                <dd className="mono">{a.config_file}</dd>
                <dt>{t("info.database")}</dt>
                <dd>
                  {a.database} · <span className="mono">{a.database_path}</span>
                </dd>
                <dt>{t("info.webhookPrefix")}</dt>
                <dd className="mono">{a.webhook_prefix}</dd>
                <dt>{t("info.console")}</dt>
                <dd className="mono">{a.console}</dd>
                <dt>{t("info.uptime")}</dt>
                <dd>
                  {formatUptime(a.uptime_seconds)}{" "}
                  <span className="muted">
                    ({t("info.since", { time: new Date(a.started_at * 1000).toLocaleString() })})
                  </span>
                </dd>
              </>
            )}
          </dl>
        )}
      </QueryState>
      {about.error && <ErrorState error={about.error} onRetry={() => about.refetch()} />}
    </section>
  );
}
