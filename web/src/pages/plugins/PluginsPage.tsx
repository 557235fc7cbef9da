// /plugins: the installed plugins with their live status, and installing new ones from the
// marketplace or a zip, each install followed by its task to the end.
import * as Tabs from "@radix-ui/react-tabs";
import { useQuery } from "@tanstack/react-query";
import { useTranslation } from "react-i18next";
import { useSearchParams } from "react-router";
import { PageHeader } from "../../app/Layout";
import { QueryState } from "../../components/PageState";
import { listPlugins, pluginKeys, pluginPollInterval } from "./api";
import { InstalledList } from "./InstalledList";
import { InstallTask } from "./InstallTask";
import { MarketplaceBrowser } from "./MarketplaceBrowser";
import { UploadPackage } from "./UploadPackage";
import { useTrackedTasks } from "./useTrackedTasks";
import "./plugins.css";

const tabs = ["installed", "marketplace", "upload"] as const;
type Tab = (typeof tabs)[number];

export default function PluginsPage() {
  const { t } = useTranslation("plugins");
  const [params, setParams] = useSearchParams();
  const tab: Tab = tabs.includes(params.get("tab") as Tab) ? (params.get("tab") as Tab) : "installed";
  const setTab = (next: string) => setParams(next === "installed" ? {} : { tab: next }, { replace: true });
  const query = useQuery({
    queryKey: pluginKeys.list,
    queryFn: listPlugins,
    refetchInterval: (q) => pluginPollInterval(q.state.data),
  });
  const { tasks, add, dismiss } = useTrackedTasks();

  return (
    <>
      <PageHeader title={t("title")}>
        <p className="muted">{t("subtitle")}</p>
      </PageHeader>
      {tasks.length > 0 && (
        <section aria-label={t("install.tasks")}>
          <ul className="install-tasks">
            {tasks.map((task) => (
              <InstallTask key={task.id} tracked={task} onDismiss={() => dismiss(task.id)} />
            ))}
          </ul>
        </section>
      )}
      <Tabs.Root value={tab} onValueChange={setTab}>
        <Tabs.List className="tabs-list" aria-label={t("tabs.label")}>
          <Tabs.Trigger value="installed">
            {t("tabs.installed")}
            {query.data ? ` (${query.data.length})` : ""}
          </Tabs.Trigger>
          <Tabs.Trigger value="marketplace">{t("tabs.marketplace")}</Tabs.Trigger>
          <Tabs.Trigger value="upload">{t("tabs.upload")}</Tabs.Trigger>
        </Tabs.List>
        <Tabs.Content value="installed">
          <QueryState query={query}>
            {(plugins) => <InstalledList plugins={plugins} onInstall={() => setTab("marketplace")} />}
          </QueryState>
        </Tabs.Content>
        <Tabs.Content value="marketplace">
          <MarketplaceBrowser installed={query.data ?? []} onStarted={add} />
        </Tabs.Content>
        <Tabs.Content value="upload">
          <section className="card narrow">
            <h2>{t("upload.title")}</h2>
            <UploadPackage onStarted={add} />
          </section>
        </Tabs.Content>
      </Tabs.Root>
    </>
  );
}
