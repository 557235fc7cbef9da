// The Prometheus metrics at /metrics. That route needs a credential and takes the console's token
// only as a header, so a plain link would answer 401: the page fetches it with the token and shows
// the text, or saves it as a file. A 401 here is shown, not treated as a lost session.
import { useState } from "react";
import { useTranslation } from "react-i18next";
import { getToken } from "../../auth/token";
import { ErrorState, Loading } from "../../components/PageState";

async function fetchMetrics(): Promise<string> {
  const token = getToken();
  let response: Response;
  try {
    response = await fetch("/metrics", { headers: token ? { Authorization: `Bearer ${token}` } : {} });
  } catch {
    throw new Error("The server cannot be reached. Is Switchboard running?");
  }
  const text = await response.text();
  if (!response.ok) throw new Error(`${response.status} ${response.statusText}${text ? `: ${text.slice(0, 200)}` : ""}`);
  return text;
}

function download(text: string) {
  const url = URL.createObjectURL(new Blob([text], { type: "text/plain" }));
  const a = document.createElement("a");
  a.href = url;
  a.download = `switchboard-metrics-${new Date().toISOString().replace(/[:.]/g, "-")}.txt`;
  document.body.appendChild(a);
  a.click();
  a.remove();
  URL.revokeObjectURL(url);
}

export function MetricsCard() {
  const { t } = useTranslation("system");
  const [text, setText] = useState<string | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const [filter, setFilter] = useState("");

  const load = async (then?: (text: string) => void) => {
    setBusy(true);
    setError(null);
    try {
      const body = await fetchMetrics();
      setText(body);
      then?.(body);
    } catch (e) {
      setError(e);
    } finally {
      setBusy(false);
    }
  };

  const lines = text === null ? [] : text.split("\n");
  const shown = filter ? lines.filter((l) => l.toLowerCase().includes(filter.toLowerCase())) : lines;
  return (
    <section className="card" aria-labelledby="metrics-title">
      <h2 id="metrics-title">{t("metrics.title")}</h2>
      <p className="muted">{t("metrics.intro")}</p>
      <div className="row">
        <button type="button" className="btn" disabled={busy} onClick={() => load()}>
          {text === null ? t("metrics.show") : t("metrics.refresh")}
        </button>
        <button type="button" className="btn" disabled={busy} onClick={() => load(download)}>
          {t("metrics.download")}
        </button>
        {text !== null && (
          <button type="button" className="btn btn-ghost" onClick={() => setText(null)}>
            {t("metrics.hide")}
          </button>
        )}
      </div>
      {busy && <Loading />}
      {error != null && <ErrorState error={error} onRetry={() => load()} />}
      {text !== null && !busy && (
        <div className="metrics-view">
          <div className="field">
            <label htmlFor="metrics-filter">{t("metrics.filter")}</label>
            <input
              id="metrics-filter"
              type="search"
              className="mono"
              placeholder="switchboard_http_requests_total"
              value={filter}
              onChange={(e) => setFilter(e.target.value)}
            />
          </div>
          <p className="muted" aria-live="polite">
            {t("metrics.lines", { count: shown.length, total: lines.length })}
          </p>
          <pre className="metrics-text" tabIndex={0} aria-label={t("metrics.title")}>
            {shown.join("\n")}
          </pre>
        </div>
      )}
    </section>
  );
}
