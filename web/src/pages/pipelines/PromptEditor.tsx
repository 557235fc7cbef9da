// The local agent's prompt: ordered {role, content} messages put before the conversation. The
// first message's content box carries the field's own id, so the "Prompt" label points at it.
import { useTranslation } from "react-i18next";

export interface PromptMessage {
  role: string;
  content: string;
}

const roles = ["system", "user", "assistant"] as const;

export function promptOf(value: unknown): PromptMessage[] {
  if (!Array.isArray(value)) return [];
  return value.map((m) => ({
    role: typeof m?.role === "string" ? m.role : "system",
    content: typeof m?.content === "string" ? m.content : "",
  }));
}

export function PromptEditor({
  id,
  value,
  set,
  disabled,
}: {
  id: string;
  value: unknown;
  set: (v: PromptMessage[]) => void;
  disabled?: boolean;
}) {
  const { t } = useTranslation("pipelines");
  const messages = promptOf(value);
  const update = (i: number, patch: Partial<PromptMessage>) =>
    set(messages.map((m, j) => (j === i ? { ...m, ...patch } : m)));
  return (
    <div className="prompt-editor">
      {messages.length === 0 && <p className="field-help">{t("prompt.empty")}</p>}
      {messages.map((m, i) => {
        const contentId = i === 0 ? id : `${id}-content-${i}`;
        return (
          <div key={i} className="prompt-row">
            <div className="prompt-row-head">
              <label htmlFor={`${id}-role-${i}`}>{t("prompt.role", { n: i + 1 })}</label>
              <select
                id={`${id}-role-${i}`}
                value={m.role}
                disabled={disabled}
                onChange={(e) => update(i, { role: e.target.value })}
              >
                {roles.map((r) => (
                  <option key={r} value={r}>
                    {t(`prompt.roles.${r}`)}
                  </option>
                ))}
                {!(roles as readonly string[]).includes(m.role) && <option value={m.role}>{m.role}</option>}
              </select>
              <button
                type="button"
                className="btn btn-small btn-ghost"
                disabled={disabled}
                aria-label={t("prompt.remove", { n: i + 1 })}
                onClick={() => set(messages.filter((_, j) => j !== i))}
              >
                {t("prompt.removeShort")}
              </button>
            </div>
            <label htmlFor={contentId} className="prompt-content-label">
              {t("prompt.content", { n: i + 1 })}
            </label>
            <textarea
              id={contentId}
              rows={3}
              value={m.content}
              disabled={disabled}
              onChange={(e) => update(i, { content: e.target.value })}
            />
          </div>
        );
      })}
      <button
        type="button"
        className="btn btn-small"
        disabled={disabled}
        onClick={() => set([...messages, { role: messages.length === 0 ? "system" : "user", content: "" }])}
      >
        {t("prompt.add")}
      </button>
    </div>
  );
}
