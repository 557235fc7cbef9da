// The local agent's model: a primary LLM model (the select the "Model" label names) and an ordered
// list of fallbacks tried when it fails. Values are model uuids from GET /provider/models/llm; a
// uuid that no longer exists stays selected and is flagged rather than silently replaced.
import { useId } from "react";
import { useTranslation } from "react-i18next";
import { Link } from "react-router";
import type { Model } from "../../api/types";
import { errorMessage } from "../../components/PageState";
import { useLlmModels } from "./queries";

export interface ModelChoice {
  primary: string;
  fallbacks: string[];
}

// LangBot stored a bare uuid before fallbacks existed.
export function modelChoiceOf(value: unknown): ModelChoice {
  if (typeof value === "string") return { primary: value, fallbacks: [] };
  const v = (value ?? {}) as Partial<ModelChoice>;
  return {
    primary: typeof v.primary === "string" ? v.primary : "",
    fallbacks: Array.isArray(v.fallbacks) ? v.fallbacks.filter((f): f is string => typeof f === "string") : [],
  };
}

type ListedModel = Model & { api_keys?: { name: string }[] };

export function ModelFallbackSelector({
  id,
  label,
  value,
  set,
  disabled,
}: {
  id: string;
  // The field's own label without the form's required marker, as the select's accessible name.
  label: string;
  value: unknown;
  set: (v: ModelChoice) => void;
  disabled?: boolean;
}) {
  const { t } = useTranslation("pipelines");
  const rowId = useId();
  const models = useLlmModels();
  const choice = modelChoiceOf(value);
  const list = (models.data ?? []) as ListedModel[];
  const known = new Set(list.map((m) => m.uuid));

  const options = (selected: string) => (
    <>
      <option value="">{models.isPending ? t("model.loading") : t("model.none")}</option>
      {selected && !known.has(selected) && !models.isPending && (
        <option value={selected}>{t("model.missing", { uuid: selected })}</option>
      )}
      {list.map((m) => (
        <option key={m.uuid} value={m.uuid}>
          {m.api_keys?.[0]?.name ? `${m.name} · ${m.api_keys[0].name}` : m.name}
        </option>
      ))}
    </>
  );
  const setFallback = (i: number, uuid: string) =>
    set({ ...choice, fallbacks: choice.fallbacks.map((f, j) => (j === i ? uuid : f)) });
  const move = (i: number, by: number) => {
    const next = [...choice.fallbacks];
    [next[i], next[i + by]] = [next[i + by], next[i]];
    set({ ...choice, fallbacks: next });
  };

  return (
    <div className="model-selector">
      <select
        id={id}
        aria-label={label}
        aria-required="true"
        value={choice.primary}
        disabled={disabled}
        aria-describedby={`${rowId}-note`}
        onChange={(e) => set({ ...choice, primary: e.target.value })}
      >
        {options(choice.primary)}
      </select>
      <p id={`${rowId}-note`} className="field-help">
        {models.error ? (
          <span className="field-error">{errorMessage(models.error)}</span>
        ) : !models.isPending && list.length === 0 ? (
          <>
            {t("model.noneYet")} <Link to="/models">{t("model.addOne")}</Link>
          </>
        ) : choice.primary && !known.has(choice.primary) && !models.isPending ? (
          <span className="field-error">{t("model.missingHelp")}</span>
        ) : (
          t("model.help")
        )}
      </p>
      <fieldset className="fallbacks">
        <legend>{t("model.fallbacks")}</legend>
        {choice.fallbacks.length === 0 && <p className="field-help">{t("model.noFallbacks")}</p>}
        <ol>
          {choice.fallbacks.map((uuid, i) => (
            <li key={i} className="row">
              <label htmlFor={`${rowId}-fb-${i}`} className="fallback-label">
                {t("model.fallbackN", { n: i + 1 })}
              </label>
              <select
                id={`${rowId}-fb-${i}`}
                value={uuid}
                disabled={disabled}
                onChange={(e) => setFallback(i, e.target.value)}
              >
                {options(uuid)}
              </select>
              <button
                type="button"
                className="btn btn-small"
                disabled={disabled || i === 0}
                aria-label={t("model.up", { n: i + 1 })}
                onClick={() => move(i, -1)}
              >
                ↑
              </button>
              <button
                type="button"
                className="btn btn-small"
                disabled={disabled || i === choice.fallbacks.length - 1}
                aria-label={t("model.down", { n: i + 1 })}
                onClick={() => move(i, 1)}
              >
                ↓
              </button>
              <button
                type="button"
                className="btn btn-small btn-ghost"
                disabled={disabled}
                aria-label={t("model.remove", { n: i + 1 })}
                onClick={() => set({ ...choice, fallbacks: choice.fallbacks.filter((_, j) => j !== i) })}
              >
                {t("model.removeShort")}
              </button>
            </li>
          ))}
        </ol>
        <button
          type="button"
          className="btn btn-small"
          disabled={disabled}
          onClick={() => set({ ...choice, fallbacks: [...choice.fallbacks, ""] })}
        >
          {t("model.addFallback")}
        </button>
      </fieldset>
    </div>
  );
}
