// Names and values (HTTP headers, environment variables) as rows of two inputs. Values are
// password inputs: what the server sent is a mask, and a new value is a secret until saved.
import { useTranslation } from "react-i18next";
import type { Pair } from "./form";

export function PairsField({
  id,
  legend,
  help,
  pairs,
  onChange,
  keyLabel,
  valueLabel,
  addLabel,
}: {
  id: string;
  legend: string;
  help?: string;
  pairs: Pair[];
  onChange: (pairs: Pair[]) => void;
  keyLabel: string;
  valueLabel: string;
  addLabel: string;
}) {
  const { t } = useTranslation("mcp");
  const set = (i: number, p: Partial<Pair>) => onChange(pairs.map((old, j) => (j === i ? { ...old, ...p } : old)));
  return (
    <fieldset className="field pairs" aria-describedby={help ? `${id}-help` : undefined}>
      <legend>{legend}</legend>
      {help && (
        <p id={`${id}-help`} className="field-help">
          {help}
        </p>
      )}
      {pairs.map((p, i) => (
        <div className="pairs-row" key={i}>
          <input
            aria-label={`${keyLabel} ${i + 1}`}
            autoComplete="off"
            value={p.key}
            onChange={(e) => set(i, { key: e.target.value })}
          />
          <input
            type="password"
            aria-label={`${valueLabel} ${i + 1}`}
            autoComplete="new-password"
            value={p.value}
            onChange={(e) => set(i, { value: e.target.value })}
          />
          <button
            type="button"
            className="btn btn-small"
            aria-label={t("form.removeRow", { what: `${keyLabel} ${i + 1}` })}
            onClick={() => onChange(pairs.filter((_, j) => j !== i))}
          >
            ×
          </button>
        </div>
      ))}
      <button type="button" className="btn btn-small" onClick={() => onChange([...pairs, { key: "", value: "" }])}>
        {addLabel}
      </button>
    </fieldset>
  );
}
