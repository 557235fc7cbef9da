// Bots by runtime status, straight from the bot list (the first thing the dashboard shows), and
// the bots in error with their last error and a link to their page.
import { useTranslation } from "react-i18next";
import { Link } from "react-router";
import type { Bot, RuntimeStatus } from "../../api/types";

const statuses: RuntimeStatus[] = ["running", "starting", "error", "stopped"];
const SHOWN_ERRORS = 10;

export function StatusCards({ bots }: { bots: Bot[] }) {
  const { t } = useTranslation("dashboard");
  const counts = Object.fromEntries(statuses.map((s) => [s, 0])) as Record<RuntimeStatus, number>;
  let disabled = 0;
  for (const b of bots) {
    counts[b.runtime.status] = (counts[b.runtime.status] ?? 0) + 1;
    if (!b.enable) disabled += 1;
  }
  return (
    <ul className="status-cards" aria-label={t("bots.byStatus")}>
      {statuses.map((s) => (
        <li key={s} className={`card status-card status-card-${s}`}>
          <span className="status-count">{counts[s]}</span>
          <span className="status-label">{t(`status.${s}`, { ns: "common" })}</span>
          {s === "stopped" && disabled > 0 && (
            <span className="muted status-note">{t("bots.disabled", { count: disabled })}</span>
          )}
        </li>
      ))}
    </ul>
  );
}

export function BotsInError({ bots }: { bots: Bot[] }) {
  const { t } = useTranslation("dashboard");
  const failing = bots.filter((b) => b.runtime.status === "error");
  if (failing.length === 0) return null;
  return (
    <section className="card" aria-labelledby="dash-bot-errors">
      <h2 id="dash-bot-errors">{t("bots.inError", { count: failing.length })}</h2>
      <ul className="attention-list">
        {failing.slice(0, SHOWN_ERRORS).map((b) => (
          <li key={b.uuid}>
            <div className="row">
              <Link to={`/bot/${b.uuid}`}>{b.name}</Link>
              <time className="muted" dateTime={b.runtime.since}>
                {t("since", { time: new Date(b.runtime.since).toLocaleString() })}
              </time>
            </div>
            <p className="attention-error">{b.runtime.error || t("bots.noError")}</p>
          </li>
        ))}
        {failing.length > SHOWN_ERRORS && (
          <li>
            <Link to="/bots">{t("more", { count: failing.length - SHOWN_ERRORS })}</Link>
          </li>
        )}
      </ul>
    </section>
  );
}
