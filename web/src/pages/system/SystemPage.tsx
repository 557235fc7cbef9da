// /system: what this server is, its metrics, where its documentation is, and its background tasks.
import { useTranslation } from "react-i18next";
import { PageHeader } from "../../app/Layout";
import { MetricsCard } from "./MetricsCard";
import { SystemInfoCard } from "./SystemInfoCard";
import { TasksCard } from "./TasksCard";
import "./system.css";

// The repository's docs/ files; the server does not serve them, so they are named, not linked.
const docs = ["console", "api", "bots", "webhook", "plugins", "security"] as const;

export default function SystemPage() {
  const { t } = useTranslation("system");
  return (
    <>
      <PageHeader title={t("title")} />
      <div className="system-grid">
        <SystemInfoCard />
        <section className="card" aria-labelledby="docs-title">
          <h2 id="docs-title">{t("docs.title")}</h2>
          <p className="muted">{t("docs.intro")}</p>
          <ul className="system-docs">
            {docs.map((d) => (
              <li key={d}>
                <span className="mono">docs/{d}.md</span> — {t(`docs.${d}`)}
              </li>
            ))}
          </ul>
        </section>
      </div>
      <MetricsCard />
      <TasksCard />
    </>
  );
}
