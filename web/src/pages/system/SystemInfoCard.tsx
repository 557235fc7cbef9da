// What this server is (GET /system/info, public): version, edition, the marketplace it uses.
// The data directory is not in that answer (src/http/api/encoders.cpp EncodeSystemInfo), so the
// page says so instead of guessing a path.
import { useQuery } from "@tanstack/react-query";
import { useTranslation } from "react-i18next";
import { get } from "../../api/client";
import type { SystemInfo } from "../../api/types";
import { QueryState } from "../../components/PageState";

export function SystemInfoCard() {
  const { t } = useTranslation("system");
  const info = useQuery({ queryKey: ["system", "info"], queryFn: () => get<SystemInfo>("/system/info") });
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
            <dt>{t("info.dataDir")}</dt>
            <dd className="muted">{t("info.dataDirUnavailable")}</dd>
          </dl>
        )}
      </QueryState>
    </section>
  );
}
