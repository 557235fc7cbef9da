// The dashboard: bots by runtime status first (from the bot list alone, so the page is usable as
// soon as that one fast call answers), then what needs attention, then activity from the event
// logs, which fills in when it arrives and never holds the rest of the page.
import { useTranslation } from "react-i18next";
import { Link } from "react-router";
import { PageHeader } from "../../app/Layout";
import { ErrorState, Loading } from "../../components/PageState";
import { useBots } from "../bots/queries";
import { ActivitySection } from "./ActivitySection";
import { PluginsAttention, TasksAttention } from "./Attention";
import { BotsInError, StatusCards } from "./BotStatus";
import "./dashboard.css";

export default function DashboardPage() {
  const { t } = useTranslation("dashboard");
  const bots = useBots({ live: true });
  return (
    <>
      <PageHeader title={t("title")}>
        <p className="muted">{t("subtitle")}</p>
      </PageHeader>
      <section aria-labelledby="dash-bots" className="dash-bots">
        <div className="row dash-section-head">
          <h2 id="dash-bots">{t("bots.title")}</h2>
          <Link to="/bots">{t("bots.all")}</Link>
          {bots.error != null && bots.data && <span className="form-error">{t("pollFailed")}</span>}
        </div>
        {bots.isPending ? (
          <Loading />
        ) : bots.error && !bots.data ? (
          <ErrorState error={bots.error} onRetry={() => bots.refetch()} />
        ) : bots.data!.length === 0 ? (
          <p className="muted">
            {t("bots.none")} <Link to="/bots">{t("bots.create")}</Link>
          </p>
        ) : (
          <>
            <StatusCards bots={bots.data!} />
            <BotsInError bots={bots.data!} />
          </>
        )}
      </section>
      <div className="dash-grid">
        <PluginsAttention />
        <TasksAttention />
      </div>
      <ActivitySection bots={bots.data} />
    </>
  );
}
