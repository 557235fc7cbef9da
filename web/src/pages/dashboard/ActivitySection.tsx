// Messages and model calls over the last 24 hours. The numbers come from the server's monitoring
// records, or from the bots' event logs read by the browser where the server has none (see
// activity.ts), and the section says which; the chart itself is a lazy chunk.
import { lazy, Suspense } from "react";
import { useTranslation } from "react-i18next";
import type { Bot } from "../../api/types";
import { ErrorState, Loading } from "../../components/PageState";
import { LOG_PAGE, MAX_BOTS, WINDOW_HOURS, seriesNames, useActivity } from "./activity";

const ActivityChart = lazy(() => import("./ActivityChart"));

export function ActivitySection({ bots }: { bots: Bot[] | undefined }) {
  const { t } = useTranslation("dashboard");
  const activity = useActivity(bots);
  const enabled = bots?.filter((b) => b.enable).length ?? 0;
  const fromLogs = activity.data?.source !== "monitoring";
  return (
    <section className="card" aria-labelledby="dash-activity">
      <h2 id="dash-activity">{t("activity.title", { hours: WINDOW_HOURS })}</h2>
      <p className="muted activity-source">
        {fromLogs ? (
          <>
            {t("activity.source", { entries: LOG_PAGE, bots: MAX_BOTS })}{" "}
            {enabled > MAX_BOTS && t("activity.notAll", { total: enabled })}
          </>
        ) : (
          t("activity.sourceMonitoring")
        )}
      </p>
      {bots === undefined || activity.isPending ? (
        <Loading label={t("activity.loading")} />
      ) : activity.error && !activity.data ? (
        <ErrorState error={activity.error} onRetry={() => activity.refetch()} />
      ) : fromLogs && enabled === 0 ? (
        <p className="muted">{t("activity.noBots")}</p>
      ) : (
        <>
          <p className="activity-totals" aria-live="polite">
            {seriesNames.map((s) => (
              <span key={s} className={`activity-total activity-${s}`}>
                <span className="activity-swatch" aria-hidden="true" />
                {t(`series.${s}`)}: <strong>{activity.data!.totals[s]}</strong>
              </span>
            ))}
          </p>
          <Suspense fallback={<Loading />}>
            <ActivityChart activity={activity.data!} />
          </Suspense>
          <p className="muted activity-note">
            {t(fromLogs ? "activity.classes" : "activity.classesMonitoring")}
            {activity.data!.completeFrom !== null &&
              " " +
                t(fromLogs ? "activity.completeFrom" : "activity.completeFromMonitoring", {
                  time: new Date(activity.data!.completeFrom * 1000).toLocaleString(),
                })}
            {activity.data!.botsFailed > 0 && " " + t("activity.someFailed", { count: activity.data!.botsFailed })}
          </p>
        </>
      )}
    </section>
  );
}
