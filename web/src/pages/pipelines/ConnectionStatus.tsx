// The debug chat's connection, said plainly: connected, connecting, lost and reconnecting (with a
// countdown and a way to try at once), offline, or refused for good.
import { useEffect, useState } from "react";
import { useTranslation } from "react-i18next";
import type { Connection } from "./useChatSocket";

export function ConnectionStatus({ connection, onRetry }: { connection: Connection; onRetry: () => void }) {
  const { t } = useTranslation("pipelines");
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    if (connection.status !== "reconnecting") return;
    const id = window.setInterval(() => setNow(Date.now()), 1000);
    return () => window.clearInterval(id);
  }, [connection.status]);
  let text: string;
  switch (connection.status) {
    case "connected":
      text = t("chat.status.connected");
      break;
    case "connecting":
      text = t("chat.status.connecting");
      break;
    case "reconnecting":
      text = t("chat.status.reconnecting");
      break;
    case "offline":
      text = t("chat.status.offline");
      break;
    case "failed":
      text = t("chat.status.failed", { message: connection.message });
      break;
  }
  return (
    <div className={`chat-status chat-status-${connection.status}`}>
      <span role="status">
        <span className="chat-status-dot" aria-hidden="true" /> {text}
      </span>
      {connection.status === "reconnecting" && (
        // Outside the status region: a countdown read aloud every second would drown everything else.
        <span className="muted" aria-hidden="true">
          {t("chat.status.retryIn", {
            seconds: Math.max(0, Math.ceil((connection.retryAt - now) / 1000)),
            attempt: connection.attempt,
          })}
        </span>
      )}
      {(connection.status === "reconnecting" || connection.status === "failed") && (
        <button type="button" className="btn btn-small" onClick={onRetry}>
          {t("chat.status.retryNow")}
        </button>
      )}
    </div>
  );
}
