// The creation schema's `embedding-model-selector`: a select of the embedding models of the Models
// page. A stored uuid that no longer exists stays selected and is flagged, never silently replaced.
import { useTranslation } from "react-i18next";
import { Link } from "react-router";
import { errorMessage } from "../../components/PageState";
import { useEmbeddingModels } from "./queries";

export function EmbeddingModelSelect({
  id,
  value,
  set,
  disabled,
}: {
  id: string;
  value: unknown;
  set: (v: string) => void;
  disabled?: boolean;
}) {
  const { t } = useTranslation("knowledge");
  const models = useEmbeddingModels();
  const selected = typeof value === "string" ? value : "";
  const list = models.data ?? [];
  const known = list.some((m) => m.uuid === selected);
  return (
    <>
      <select
        id={id}
        required
        disabled={disabled}
        aria-describedby={`${id}-models`}
        value={selected}
        onChange={(e) => set(e.target.value)}
      >
        <option value="">{models.isPending ? t("model.loading") : t("model.choose")}</option>
        {selected && !known && !models.isPending && (
          <option value={selected}>{t("model.missing", { uuid: selected })}</option>
        )}
        {list.map((m) => (
          <option key={m.uuid} value={m.uuid}>
            {m.name}
          </option>
        ))}
      </select>
      <p id={`${id}-models`} className="field-help">
        {models.error ? (
          errorMessage(models.error)
        ) : list.length === 0 && !models.isPending ? (
          <>
            {t("model.none")} <Link to="/models?kind=embedding">{t("model.add")}</Link>
          </>
        ) : null}
      </p>
    </>
  );
}
