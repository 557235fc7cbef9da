// The pipeline metadata's field types SchemaForm does not draw itself. Anything else falls back to
// SchemaForm's own controls (and unknown types to its JSON box), so no setting is out of reach.
import { useState } from "react";
import { useTranslation } from "react-i18next";
import type { SchemaItem } from "../../api/types";
import { localize } from "../../i18n";
import type { SchemaFormProps } from "../../components/SchemaForm";
import { KnowledgeBasesField } from "./KnowledgeBasesField";
import { ModelFallbackSelector } from "./ModelFallbackSelector";
import { PromptEditor } from "./PromptEditor";

export const renderPipelineField: NonNullable<SchemaFormProps["renderCustom"]> = (item, value, set, id) => {
  switch (item.type) {
    case "model-fallback-selector":
      return <ModelFallbackSelector id={id} label={localize(item.label) || item.name} value={value} set={set} />;
    case "prompt-editor":
      return <PromptEditor id={id} value={value} set={set} />;
    case "knowledge-base-multi-selector":
      return <KnowledgeBasesField id={id} label={localize(item.label) || item.name} value={value} set={set} />;
    case "json":
      return <JsonField id={id} item={item} value={value} set={set} />;
    default:
      return undefined;
  }
};

// JSON edited as text. LangBot stores some JSON settings as a string ("{}"), others as objects:
// the stored kind is kept. Text that does not parse is not stored, and says so.
function JsonField({
  id,
  item,
  value,
  set,
}: {
  id: string;
  item: SchemaItem;
  value: unknown;
  set: (v: unknown) => void;
}) {
  const { t } = useTranslation("pipelines");
  const asText = typeof (value ?? item.default) === "string";
  const [text, setText] = useState(() =>
    typeof value === "string" ? value : JSON.stringify(value ?? item.default ?? {}, null, 2),
  );
  const [invalid, setInvalid] = useState(false);
  return (
    <>
      <textarea
        id={id}
        className="mono"
        rows={4}
        value={text}
        aria-invalid={invalid || undefined}
        aria-describedby={invalid ? `${id}-json` : undefined}
        onChange={(e) => {
          setText(e.target.value);
          try {
            const parsed = JSON.parse(e.target.value);
            setInvalid(false);
            set(asText ? e.target.value : parsed);
          } catch {
            setInvalid(true);
          }
        }}
      />
      {invalid && (
        <p id={`${id}-json`} className="field-error">
          {t("json.invalid")}
        </p>
      )}
    </>
  );
}
