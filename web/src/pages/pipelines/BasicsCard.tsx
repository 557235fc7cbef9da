// The pipeline's name, emoji and description, each with the server's refusal under it when it
// names that field ("name must be a non-empty string of at most 255 bytes").
import { useId, type ReactNode } from "react";
import { useTranslation } from "react-i18next";
import type { BasicField, Draft } from "./editorState";

export function BasicsCard({
  draft,
  onChange,
  errors,
}: {
  draft: Draft;
  onChange: (patch: Partial<Draft>) => void;
  errors: Partial<Record<BasicField, string>>;
}) {
  const { t } = useTranslation("pipelines");
  const id = useId();
  const field = (name: BasicField, control: (common: Record<string, unknown>) => ReactNode) => {
    const fid = `${id}-${name}`;
    const errId = errors[name] ? `${fid}-err` : undefined;
    return (
      <div className={`field basics-${name}${errId ? " field-invalid" : ""}`} data-field={name}>
        <label htmlFor={fid}>{t(`editor.${name}`)}</label>
        {control({ id: fid, "aria-invalid": errId ? true : undefined, "aria-describedby": errId })}
        {errId && (
          <p id={errId} className="field-error">
            {errors[name]}
          </p>
        )}
      </div>
    );
  };
  return (
    <section className="card basics" aria-label={t("editor.basics")} data-stage="basics">
      <div className="basics-row">
        {field("emoji", (c) => (
          <input {...c} type="text" value={draft.emoji} autoComplete="off" onChange={(e) => onChange({ emoji: e.target.value })} />
        ))}
        {field("name", (c) => (
          <input
            {...c}
            type="text"
            required
            value={draft.name}
            autoComplete="off"
            onChange={(e) => onChange({ name: e.target.value })}
          />
        ))}
      </div>
      {field("description", (c) => (
        <textarea {...c} rows={2} value={draft.description} onChange={(e) => onChange({ description: e.target.value })} />
      ))}
    </section>
  );
}
