import { useTranslation } from "react-i18next";
import { Link } from "react-router";
import { Empty } from "../../components/PageState";
import { localize } from "../../i18n";
import { EnableSwitch } from "./EnableSwitch";
import { PluginIcon } from "./PluginIcon";
import { PluginStatusBadge } from "./PluginStatusBadge";
import type { Plugin } from "./types";

// The installed plugins with what their processes are doing right now (the parent polls).
export function InstalledList({ plugins, onInstall }: { plugins: Plugin[]; onInstall: () => void }) {
  const { t, i18n } = useTranslation("plugins");
  if (plugins.length === 0) {
    return (
      <Empty
        action={
          <button type="button" className="btn btn-primary" onClick={onInstall}>
            {t("list.installFirst")}
          </button>
        }
      >
        {t("list.empty")}
      </Empty>
    );
  }
  return (
    <div className="table-wrap">
      <table className="table plugin-table">
        <caption className="visually-hidden">{t("list.caption")}</caption>
        <thead>
          <tr>
            <th scope="col">{t("list.plugin")}</th>
            <th scope="col">{t("list.version")}</th>
            <th scope="col">{t("list.status")}</th>
            <th scope="col">{t("list.enabled")}</th>
          </tr>
        </thead>
        <tbody>
          {plugins.map((p) => {
            const label = localize(p.label, i18n.language) || p.name;
            return (
              <tr key={p.plugin_id}>
                <td>
                  <div className="plugin-cell">
                    <PluginIcon plugin={p} label={label} size={32} />
                    <div>
                      <Link to={`/plugins/${p.plugin_id}`} className="plugin-name">
                        {label}
                      </Link>
                      <div className="muted mono plugins-small">{p.plugin_id}</div>
                    </div>
                  </div>
                </td>
                <td className="nowrap">
                  {p.version}
                  <div className="muted plugins-small">{t(`source.${p.install_source}`, { defaultValue: p.install_source })}</div>
                </td>
                <td className="plugin-status-cell">
                  <PluginStatusBadge plugin={p} />
                  {p.restarts > 0 && (
                    <div className="muted plugins-small">{t("list.restarts", { count: p.restarts })}</div>
                  )}
                  {p.error && <p className="plugin-error">{p.error}</p>}
                </td>
                <td>
                  <EnableSwitch plugin={p} label={t("list.enableNamed", { plugin: label })} />
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </div>
  );
}
