// The whole key of a key just created: the server sends it once and keeps only its hash, so this
// is the one chance to copy it. It stays on the page until the person dismisses it.
import { useTranslation } from "react-i18next";
import { CopyButton } from "../../components/CopyButton";
import type { ApiKey } from "./types";

export function NewKeyBanner({ apiKey, onDismiss }: { apiKey: ApiKey; onDismiss: () => void }) {
  const { t } = useTranslation("apikeys");
  return (
    <section className="card new-key" aria-labelledby="new-key-title">
      <h2 id="new-key-title">{t("created.title", { name: apiKey.name })}</h2>
      <p className="new-key-warning" role="alert">
        {t("created.warning")}
      </p>
      <div className="field">
        <label htmlFor="new-key-value">{t("created.label")}</label>
        <div className="new-key-value">
          <input
            id="new-key-value"
            className="mono"
            readOnly
            value={apiKey.key}
            onFocus={(e) => e.currentTarget.select()}
          />
          <CopyButton value={apiKey.key} label={t("created.copy")} />
        </div>
      </div>
      <p className="muted">{t("created.howToUse")}</p>
      <div className="form-actions">
        <button type="button" className="btn" onClick={onDismiss}>
          {t("created.done")}
        </button>
      </div>
    </section>
  );
}
