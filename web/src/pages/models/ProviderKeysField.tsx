// A provider's API keys. Stored keys only ever reach the browser masked; the server keeps the
// stored key behind every mask a save sends back, so each stored key is a row that can be removed,
// and new keys are typed into password inputs beside them.
import { useId, useState } from "react";
import { useTranslation } from "react-i18next";

export interface KeyEntry {
  value: string; // the mask of a stored key, or what was typed
  stored: boolean;
}

export const keyEntriesOf = (masks: string[] | undefined): KeyEntry[] =>
  masks ? masks.map((value) => ({ value, stored: true })) : [{ value: "", stored: false }];

// What a save sends as api_keys: the kept masks and the typed keys, in order, blanks left out.
export const apiKeysOf = (entries: KeyEntry[]): string[] =>
  entries.map((e) => (e.stored ? e.value : e.value.trim())).filter(Boolean);

export function ProviderKeysField({
  keys,
  onChange,
  error,
  disabled,
}: {
  keys: KeyEntry[];
  onChange: (keys: KeyEntry[]) => void;
  error?: string;
  disabled?: boolean;
}) {
  const { t } = useTranslation("models");
  const id = useId();
  const [visible, setVisible] = useState(false);
  const errId = error ? `${id}-err` : undefined;
  const set = (i: number, value: string) => onChange(keys.map((k, j) => (j === i ? { ...k, value } : k)));
  return (
    <fieldset className={`field keys-field${error ? " field-invalid" : ""}`} aria-describedby={errId}>
      <legend>{t("provider.keys")}</legend>
      {keys.map((key, i) => (
        <div className="key-row" key={i}>
          {key.stored ? (
            <span className="mono key-stored" id={`${id}-${i}`}>
              {key.value} <span className="muted">{t("provider.keyStored")}</span>
            </span>
          ) : (
            <>
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
                value={key.value}
                disabled={disabled}
                onChange={(e) => set(i, e.target.value)}
              />
            </>
          )}
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
        <button
          type="button"
          className="btn btn-small"
          disabled={disabled}
          onClick={() => onChange([...keys, { value: "", stored: false }])}
        >
          {t("provider.addKey")}
        </button>
        <label className="inline-field">
          <input type="checkbox" checked={visible} onChange={(e) => setVisible(e.target.checked)} />
          {t("provider.showKeys")}
        </label>
      </div>
      {error && (
        <p id={errId} className="field-error">
          {error}
        </p>
      )}
    </fieldset>
  );
}
