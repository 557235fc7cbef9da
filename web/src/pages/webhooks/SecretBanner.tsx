// A webhook's whole signing secret, right after it was made (created or rotated): the server sends
// it this once, so it stays on the page, with a copy button, until the person dismisses it.
import { useTranslation } from "react-i18next";
import { CopyButton } from "../../components/CopyButton";
import type { Webhook } from "./types";

export function SecretBanner({ webhook, rotated, onDismiss }: { webhook: Webhook; rotated: boolean; onDismiss: () => void }) {
  const { t } = useTranslation("webhooks");
  return (
    <section className="card new-secret" aria-labelledby="new-secret-title">
      <h2 id="new-secret-title">{t(rotated ? "secret.rotatedTitle" : "secret.title", { name: webhook.name })}</h2>
      <p className="new-secret-warning" role="alert">
        {t("secret.warning")}
      </p>
      <div className="field">
        <label htmlFor="new-secret-value">{t("secret.label")}</label>
        <div className="new-secret-value">
          <input id="new-secret-value" className="mono" readOnly value={webhook.secret} onFocus={(e) => e.currentTarget.select()} />
          <CopyButton value={webhook.secret} label={t("secret.copy")} />
        </div>
      </div>
      <p className="muted">{t("secret.howToUse")}</p>
      <div className="form-actions">
        <button type="button" className="btn" onClick={onDismiss}>
          {t("secret.done")}
        </button>
      </div>
    </section>
  );
}
