// One stage of a pipeline section (e.g. ai / local-agent): its label, description and its fields,
// generated from the metadata with each field's description and default.
import { useTranslation } from "react-i18next";
import { localize } from "../../i18n";
import { SchemaForm } from "../../components/SchemaForm";
import { renderPipelineField } from "./customFields";
import type { StageMeta, StageValues } from "./types";

// LangBot's wizard hides some fields; the editor is never the wizard.
const formContext = { "__system.is_wizard": false };

export function StageFields({
  stage,
  value,
  onChange,
  errors,
}: {
  stage: StageMeta;
  value: StageValues;
  onChange: (v: StageValues) => void;
  errors?: Record<string, string>;
}) {
  return (
    <SchemaForm
      items={stage.config}
      value={value}
      onChange={onChange}
      errors={errors}
      renderCustom={renderPipelineField}
      context={formContext}
    />
  );
}

export function StageCard({
  sectionName,
  stage,
  value,
  onChange,
  errors,
  stageError,
}: {
  sectionName: string;
  stage: StageMeta;
  value: StageValues;
  onChange: (v: StageValues) => void;
  errors?: Record<string, string>;
  stageError?: string;
}) {
  const { i18n } = useTranslation();
  const titleId = `stage-${sectionName}-${stage.name}`;
  const description = localize(stage.description, i18n.language);
  return (
    <section className="card stage-card" aria-labelledby={titleId} data-stage={`${sectionName}.${stage.name}`}>
      <h3 id={titleId}>{localize(stage.label, i18n.language) || stage.name}</h3>
      {description && <p className="muted stage-description">{description}</p>}
      {stageError && (
        <p className="field-error" role="alert">
          {stageError}
        </p>
      )}
      <StageFields stage={stage} value={value} onChange={onChange} errors={errors} />
    </section>
  );
}
