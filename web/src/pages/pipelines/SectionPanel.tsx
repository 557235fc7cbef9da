// One section of the pipeline (trigger, safety, ai, output) as a list of stage cards. The ai
// section puts the runner first, then the chosen runner's settings; the other runners' settings
// stay reachable, collapsed.
import { useTranslation } from "react-i18next";
import { localize } from "../../i18n";
import { StageCard, StageFields } from "./StageCard";
import { stageKey } from "./editorState";
import type { SectionMeta, StageValues } from "./types";

export interface SectionPanelProps {
  section: SectionMeta;
  values: Record<string, StageValues>;
  onStageChange: (stage: string, value: StageValues) => void;
  fieldErrors: Record<string, Record<string, string>>;
  stageErrors: Record<string, string>;
  // Runner stages the person opened (or an error opened for them).
  openRunners: Set<string>;
  onToggleRunner: (stage: string, open: boolean) => void;
}

export function SectionPanel(props: SectionPanelProps) {
  const { section, values, onStageChange, fieldErrors, stageErrors } = props;
  const runnerStage = section.name === "ai" ? section.stages.find((s) => s.name === "runner") : undefined;
  const card = (name: string) => {
    const stage = section.stages.find((s) => s.name === name)!;
    const key = stageKey(section.name, name);
    return (
      <StageCard
        key={name}
        sectionName={section.name}
        stage={stage}
        value={values[name] ?? {}}
        onChange={(v) => onStageChange(name, v)}
        errors={fieldErrors[key]}
        stageError={stageErrors[key]}
      />
    );
  };
  if (!runnerStage) return <>{section.stages.map((s) => card(s.name))}</>;

  const runnerNames = new Set((runnerStage.config[0]?.options ?? []).map((o) => o.name));
  const chosen = String(values.runner?.runner ?? runnerStage.config[0]?.default ?? "");
  const others = section.stages.filter((s) => s.name !== "runner" && s.name !== chosen && runnerNames.has(s.name));
  const rest = section.stages.filter((s) => s.name !== "runner" && s.name !== chosen && !runnerNames.has(s.name));
  return (
    <>
      {card("runner")}
      {section.stages.some((s) => s.name === chosen) && card(chosen)}
      {rest.map((s) => card(s.name))}
      {others.length > 0 && <OtherRunners {...props} stages={others} />}
    </>
  );
}

function OtherRunners({
  section,
  stages,
  values,
  onStageChange,
  fieldErrors,
  stageErrors,
  openRunners,
  onToggleRunner,
}: SectionPanelProps & { stages: SectionMeta["stages"] }) {
  const { t, i18n } = useTranslation("pipelines");
  return (
    <section className="card other-runners" aria-labelledby="other-runners-title">
      <h3 id="other-runners-title">{t("editor.otherRunners")}</h3>
      <p className="muted">{t("editor.otherRunnersHelp")}</p>
      {stages.map((stage) => {
        const key = stageKey(section.name, stage.name);
        const open = openRunners.has(stage.name);
        return (
          // Closed runners render no fields, so labels like "Model" stay unique on the page.
          <details
            key={stage.name}
            open={open}
            data-stage={key}
            onToggle={(e) => onToggleRunner(stage.name, (e.currentTarget as HTMLDetailsElement).open)}
          >
            <summary>{localize(stage.label, i18n.language) || stage.name}</summary>
            {open && (
              <div className="runner-body">
                {localize(stage.description, i18n.language) && (
                  <p className="muted">{localize(stage.description, i18n.language)}</p>
                )}
                {stageErrors[key] && (
                  <p className="field-error" role="alert">
                    {stageErrors[key]}
                  </p>
                )}
                <StageFields
                  stage={stage}
                  value={values[stage.name] ?? {}}
                  onChange={(v) => onStageChange(stage.name, v)}
                  errors={fieldErrors[key]}
                />
              </div>
            )}
          </details>
        );
      })}
    </section>
  );
}
