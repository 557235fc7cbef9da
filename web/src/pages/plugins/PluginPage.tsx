// /plugins/:author/:name: one installed plugin, with its live status, settings, sandbox, operations
// (enable, upgrade, delete) and readme.
import { useQuery } from "@tanstack/react-query";
import { useState } from "react";
import { useTranslation } from "react-i18next";
import { Link, useParams } from "react-router";
import { PageHeader } from "../../app/Layout";
import { ErrorState, Loading } from "../../components/PageState";
import { localize } from "../../i18n";
import { getPlugin, pluginKeys, pluginPollInterval } from "./api";
import { EnableSwitch } from "./EnableSwitch";
import { PluginConfig } from "./PluginConfig";
import { PluginDetails } from "./PluginDetails";
import { PluginIcon } from "./PluginIcon";
import { PluginOperations } from "./PluginOperations";
import { PluginReadme } from "./PluginReadme";
import { PluginSandbox } from "./PluginSandbox";
import { PluginStatusBadge } from "./PluginStatusBadge";
import { StartAgainButton } from "./StartAgainButton";
import "./plugins.css";

export default function PluginPage() {
  const { t, i18n } = useTranslation("plugins");
  const { author = "", name = "" } = useParams();
  // While it is being deleted the plugin is about to vanish: stop asking, so no 404 flashes by.
  const [deleting, setDeleting] = useState(false);
  const query = useQuery({
    queryKey: pluginKeys.one(author, name),
    queryFn: () => getPlugin(author, name),
    enabled: !deleting,
    refetchInterval: (q) => pluginPollInterval(q.state.data ? [q.state.data] : undefined),
  });
  const back = (
    <p className="plugins-breadcrumb">
      <Link to="/plugins">← {t("title")}</Link>
    </p>
  );
  if (query.isPending) return <>{back}<Loading /></>;
  if (query.error)
    return (
      <>
        {back}
        <ErrorState error={query.error} onRetry={() => query.refetch()} />
      </>
    );
  const plugin = query.data;
  const label = localize(plugin.label, i18n.language) || plugin.name;
  const description = localize(plugin.description, i18n.language);
  return (
    <>
      {back}
      <div className="plugin-head">
        <PluginIcon plugin={plugin} label={label} size={56} />
        <PageHeader title={label}>
          <p className="muted mono">
            {plugin.plugin_id} · v{plugin.version}
          </p>
        </PageHeader>
      </div>
      <div className="plugin-layout">
        <div className="plugin-main">
          <section className="card" aria-labelledby="plugin-state">
            <h2 id="plugin-state" className="visually-hidden">
              {t("state.title")}
            </h2>
            {description && <p>{description}</p>}
            <div className="row plugin-state-row">
              <PluginStatusBadge plugin={plugin} />
              <EnableSwitch plugin={plugin} label={t("state.enable")} visibleLabel />
              <StartAgainButton plugin={plugin} />
            </div>
            {plugin.error && (
              <p className="plugin-error" role={plugin.status === "failed" ? "alert" : undefined}>
                {plugin.error}
              </p>
            )}
            <PluginOperations plugin={plugin} label={label} onDeleting={setDeleting} />
          </section>
          <PluginConfig plugin={plugin} />
          <PluginReadme author={plugin.author} name={plugin.name} version={plugin.version} />
        </div>
        <div className="plugin-side">
          <PluginDetails plugin={plugin} />
          <PluginSandbox plugin={plugin} />
        </div>
      </div>
    </>
  );
}
