// A bot's event log, newest first, live. Says whether it is live, retrying after a failed poll or
// paused (while reading far back); older entries page in with "Load older".
import { memo, useMemo, useState } from "react";
import { useTranslation } from "react-i18next";
import type { BotLogEntry } from "../../api/types";
import { Empty, ErrorState, Loading, errorMessage } from "../../components/PageState";
import { MAX_ENTRIES, useLiveLog, type LiveState } from "./useLiveLog";

const levels = ["debug", "info", "warning", "error"] as const;

export function EventLog({ uuid }: { uuid: string }) {
  const { t } = useTranslation("bots");
  const log = useLiveLog(uuid);
  const [minLevel, setMinLevel] = useState(0);
  const shown = useMemo(() => {
    const out: BotLogEntry[] = [];
    for (let i = log.entries.length - 1; i >= 0; i--) {
      const e = log.entries[i];
      if (levels.indexOf(e.level) >= minLevel) out.push(e);
    }
    return out;
  }, [log.entries, minLevel]);

  return (
    <section aria-labelledby="event-log-title">
      <div className="log-toolbar row">
        <h2 id="event-log-title" className="log-title">
          {t("log.title")}
        </h2>
        <LiveIndicator state={log.state} error={log.error} onBackToNewest={log.backToNewest} />
        <div className="inline-field log-level">
          <label htmlFor="log-level">{t("log.level")}</label>
          <select id="log-level" value={minLevel} onChange={(e) => setMinLevel(Number(e.target.value))}>
            <option value={0}>{t("log.levelAll")}</option>
            <option value={1}>{t("log.levelInfo")}</option>
            <option value={2}>{t("log.levelWarning")}</option>
            <option value={3}>{t("log.levelError")}</option>
          </select>
        </div>
      </div>
      <p className="muted log-order">{t("log.order", { max: MAX_ENTRIES.toLocaleString() })}</p>
      {log.state === "loading" ? (
        <Loading />
      ) : log.entries.length === 0 && log.state === "retrying" ? (
        <ErrorState error={log.error} onRetry={log.backToNewest} />
      ) : log.entries.length === 0 ? (
        <Empty>{t("log.empty")}</Empty>
      ) : (
        <>
          {shown.length === 0 ? (
            <Empty>{t("log.noneAtLevel")}</Empty>
          ) : (
            <ol className="log-list">
              {shown.map((e) => (
                <LogItem key={e.seq_id} entry={e} />
              ))}
            </ol>
          )}
          <div className="log-footer row">
            {log.hasOlder ? (
              <button type="button" className="btn" onClick={log.loadOlder} disabled={log.loadingOlder}>
                {log.loadingOlder ? t("log.loadingOlder") : t("log.loadOlder")}
              </button>
            ) : (
              <span className="muted">{t("log.start")}</span>
            )}
            {log.olderError != null && (
              <span className="form-error" role="alert">
                {errorMessage(log.olderError)}
              </span>
            )}
          </div>
        </>
      )}
    </section>
  );
}

function LiveIndicator({
  state,
  error,
  onBackToNewest,
}: {
  state: LiveState;
  error: unknown;
  onBackToNewest: () => void;
}) {
  const { t } = useTranslation("bots");
  if (state === "live") {
    return (
      <span className="live live-on" role="status">
        <span className="live-dot" aria-hidden="true" />
        {t("log.live")}
      </span>
    );
  }
  if (state === "retrying") {
    return (
      <span className="live live-off" role="status">
        <span className="live-dot" aria-hidden="true" />
        {t("log.retrying", { message: errorMessage(error) })}
      </span>
    );
  }
  if (state === "paused") {
    return (
      <span className="live live-paused" role="status">
        {t("log.paused")}{" "}
        <button type="button" className="btn btn-small" onClick={onBackToNewest}>
          {t("log.backToNewest")}
        </button>
      </span>
    );
  }
  return null;
}

// Entries never change once written, so a poll re-renders only the new ones.
const LogItem = memo(function LogItem({ entry }: { entry: BotLogEntry }) {
  const { t } = useTranslation("bots");
  const time = new Date(entry.timestamp * 1000);
  return (
    <li className={`log-entry log-${entry.level}`}>
      <div className="log-meta">
        <span className={`badge badge-log-${entry.level}`}>{t(`log.levels.${entry.level}`)}</span>
        <time dateTime={entry.created_at} title={entry.created_at}>
          {time.toLocaleString()}
        </time>
        {entry.message_session_id && <span className="mono log-session">{entry.message_session_id}</span>}
        <span className="muted log-seq">#{entry.seq_id}</span>
      </div>
      <pre className="log-text">{entry.text}</pre>
      {entry.images.length > 0 && (
        <ul className="log-images" aria-label={t("log.images")}>
          {entry.images.map((src, i) => (
            <li key={i}>
              <a href={src} target="_blank" rel="noreferrer noopener">
                {src.startsWith("https://") ? (
                  <img src={src} alt={t("log.imageAlt", { n: i + 1 })} loading="lazy" referrerPolicy="no-referrer" />
                ) : (
                  t("log.imageLink", { n: i + 1 })
                )}
              </a>
            </li>
          ))}
        </ul>
      )}
    </li>
  );
});
