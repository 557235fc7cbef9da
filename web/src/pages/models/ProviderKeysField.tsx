// A provider's API keys. New keys are typed into password inputs (one per key, add and remove).
// Stored keys only ever reach the browser masked, and the server stores whatever list a PUT sends
// (a mask sent back would replace the real key), so editing shows the stored keys read-only and
// offers to replace them all: the PUT carries `api_keys` only when the person chose to.
import { useId, useState } from "react";
import { useTranslation } from "react-i18next";

export function ProviderKeysField({
  stored,
  replacing,
  onReplacingChange,
  keys,
  onChange,
  error,
  disabled,
}: {
  stored?: string[]; // masked; undefined when creating
  replacing: boolean;
  onReplacingChange: (replacing: boolean) => void;
  keys: string[];
  onChange: (keys: string[]) => void;
  error?: string;
  disabled?: boolean;
}) {
  const { t } = useTranslation("models");
  const id = useId();
  const [visible, setVisible] = useState(false);
  const editing = stored !== undefined;
  const errId = error ? `${id}-err` : undefined;

  if (editing && !replacing) {
    return (
      <fieldset className="field keys-field">
        <legend>{t("provider.keys")}</legend>
        {stored.length === 0 ? (
          <p className="muted">{t("provider.noKeys")}</p>
        ) : (
          <ul className="keys-stored" aria-label={t("provider.storedKeys")}>
            {stored.map((mask, i) => (
              <li key={i} className="mono">
                {mask}
              </li>
            ))}
          </ul>
        )}
        <div className="row">
          <button type="button" className="btn btn-small" disabled={disabled} onClick={() => {
            onChange([""]);
            onReplacingChange(true);
          }}>
            {t("provider.replaceKeys")}
          </button>
        </div>
        <p className="field-help">{t("provider.keysKept")}</p>
      </fieldset>
    );
  }

  const set = (i: number, v: string) => onChange(keys.map((k, j) => (j === i ? v : k)));
  return (
    <fieldset className={`field keys-field${error ? " field-invalid" : ""}`} aria-describedby={errId}>
      <legend>{t("provider.keys")}</legend>
      {editing && (
        <p className="notice" role="note">
          {t("provider.replaceNotice", { count: stored.length })}
        </p>
      )}
      {keys.map((key, i) => (
        <div className="key-row" key={i}>
          <label htmlFor={`${id}-${i}`} className="visually-hidden">
            {t("provider.keyN", { n: i + 1 })}
          </label>
          <input
            id={`${id}-${i}`}
            type={visible ? "text" : "password"}
            autoComplete="off"
            spellCheck={false}
            className="mono"
            placeholder={t("provider.keyPlaceholder")}
            value={key}
            disabled={disabled}
            onChange={(e) => set(i, e.target.value)}
          />
          <button
            type="button"
            className="btn btn-small btn-ghost"
            disabled={disabled}
            aria-label={t("provider.removeKeyN", { n: i + 1 })}
            onClick={() => onChange(keys.filter((_, j) => j !== i))}
          >
            {t("provider.removeKey")}
          </button>
        </div>
      ))}
      {keys.length === 0 && <p className="muted">{t("provider.noKeysWillSend")}</p>}
      <div className="row">
        <button type="button" className="btn btn-small" disabled={disabled} onClick={() => onChange([...keys, ""])}>
          {t("provider.addKey")}
        </button>
        <label className="inline-field">
          <input type="checkbox" checked={visible} onChange={(e) => setVisible(e.target.checked)} />
          {t("provider.showKeys")}
        </label>
        {editing && (
          <button type="button" className="btn btn-small btn-ghost" disabled={disabled} onClick={() => {
            onChange([]);
            onReplacingChange(false);
          }}>
            {t("provider.keepKeys")}
          </button>
        )}
      </div>
      {error && (
        <p id={errId} className="field-error">
          {error}
        </p>
      )}
    </fieldset>
  );
}
