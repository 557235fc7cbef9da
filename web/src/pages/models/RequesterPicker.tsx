// Picks a provider's requester from GET /provider/requesters: narrowed by what it is used for
// (support_type), grouped by kind of provider, with its description and what it supports below.
import { useId, useState } from "react";
import { useTranslation } from "react-i18next";
import { localize } from "../../i18n";
import type { Requester } from "./types";

const categories = ["manufacturer", "maas", "self-hosted"];
const uses = ["llm", "text-embedding", "rerank"];

// Whether this server can call the requester for chat or embeddings (docs/api.md: the OpenAI
// chat-completions family, anthropic-messages and ollama-chat; rerank and seekdb are listed only).
export function canCall(r: Requester): boolean {
  return r.wire !== "other" && r.spec.support_type.some((s) => s === "llm" || s === "text-embedding");
}

export function RequesterPicker({
  requesters,
  value,
  onChange,
  error,
  disabled,
}: {
  requesters: Requester[];
  value: string;
  onChange: (name: string) => void;
  error?: string;
  disabled?: boolean;
}) {
  const { t, i18n } = useTranslation("models");
  const id = useId();
  const [use, setUse] = useState("");
  const selected = requesters.find((r) => r.name === value);
  // The current choice stays listed even when the filter would hide it, so the select never lies.
  const shown = requesters.filter((r) => !use || r.spec.support_type.includes(use) || r.name === value);
  const groups = [...categories, ""].map((category) => ({
    category,
    items: shown.filter((r) =>
      category ? r.spec.provider_category === category : !categories.includes(r.spec.provider_category ?? ""),
    ),
  }));
  const supportLabel = (r: Requester) => r.spec.support_type.map((s) => t(`use.${s}`, { defaultValue: s })).join(", ");
  return (
    <div className="requester-picker">
      <div className="field">
        <label htmlFor={`${id}-use`}>{t("provider.useFilter")}</label>
        <select id={`${id}-use`} value={use} onChange={(e) => setUse(e.target.value)} disabled={disabled}>
          <option value="">{t("use.any")}</option>
          {uses.map((u) => (
            <option key={u} value={u}>
              {t(`use.${u}`)}
            </option>
          ))}
        </select>
      </div>
      <div className={`field${error ? " field-invalid" : ""}`}>
        <label htmlFor={`${id}-requester`}>
          {t("provider.requester")}
          <span aria-hidden="true"> *</span>
        </label>
        <select
          id={`${id}-requester`}
          required
          value={value}
          disabled={disabled}
          aria-describedby={`${id}-requester-help${error ? ` ${id}-requester-err` : ""}`}
          aria-invalid={error ? true : undefined}
          onChange={(e) => onChange(e.target.value)}
        >
          {!selected && <option value="">{t("provider.chooseRequester")}</option>}
          {groups
            .filter((g) => g.items.length > 0)
            .map((g) => (
              <optgroup key={g.category || "other"} label={t(`category.${g.category || "other"}`)}>
                {g.items.map((r) => (
                  <option key={r.name} value={r.name}>
                    {localize(r.label, i18n.language) || r.name} — {supportLabel(r)}
                  </option>
                ))}
              </optgroup>
            ))}
        </select>
        <div id={`${id}-requester-help`} className="field-help">
          {selected ? (
            <>
              {localize(selected.description, i18n.language) && <p>{localize(selected.description, i18n.language)}</p>}
              <p>
                <span className="mono">{selected.name}</span> · {t("provider.supports", { uses: supportLabel(selected) })}
              </p>
              {!canCall(selected) && <p className="requester-warning">{t("provider.cannotCall")}</p>}
            </>
          ) : (
            t("provider.requesterHelp")
          )}
        </div>
        {error && (
          <p id={`${id}-requester-err`} className="field-error">
            {error}
          </p>
        )}
      </div>
    </div>
  );
}
