// LLM and embedding models, one tab each (the tab is kept in the URL so a reload stays on it).
// Each row can be tested in place: the reply or the embedding size with its latency, or why not.
import * as Tabs from "@radix-ui/react-tabs";
import { useState } from "react";
import { useTranslation } from "react-i18next";
import { useSearchParams } from "react-router";
import { del } from "../../api/client";
import type { Model } from "../../api/types";
import { ConfirmDelete } from "../../components/Dialog";
import { Empty, QueryState } from "../../components/PageState";
import { ModelDialog } from "./ModelDialog";
import { useModelTest } from "./modelTest";
import { useInvalidateModels, useModels, useProviders } from "./queries";
import { TestOutcome } from "./TestOutcome";
import type { ModelKind } from "./types";

export function ModelsSection() {
  const { t } = useTranslation("models");
  const [params, setParams] = useSearchParams();
  const kind: ModelKind = params.get("kind") === "embedding" ? "embedding" : "llm";
  return (
    <section className="card" aria-labelledby="models-title">
      <h2 id="models-title">{t("models.title")}</h2>
      <Tabs.Root
        value={kind}
        onValueChange={(v) =>
          setParams(
            (p) => {
              if (v === "llm") p.delete("kind");
              else p.set("kind", v);
              return p;
            },
            { replace: true },
          )
        }
      >
        <Tabs.List className="tabs-list" aria-label={t("models.title")}>
          <Tabs.Trigger value="llm">{t("models.llm")}</Tabs.Trigger>
          <Tabs.Trigger value="embedding">{t("models.embedding")}</Tabs.Trigger>
        </Tabs.List>
        <Tabs.Content value="llm">
          <ModelTable kind="llm" />
        </Tabs.Content>
        <Tabs.Content value="embedding">
          <ModelTable kind="embedding" />
        </Tabs.Content>
      </Tabs.Root>
    </section>
  );
}

function ModelTable({ kind }: { kind: ModelKind }) {
  const { t } = useTranslation("models");
  const models = useModels(kind);
  const providers = useProviders();
  const [creating, setCreating] = useState(false);
  const [editing, setEditing] = useState<Model | null>(null);
  const providerName = (uuid: string) => providers.data?.find((p) => p.uuid === uuid)?.name ?? uuid;
  return (
    <>
      <div className="mdl-head">
        <p className="muted">{t(`models.intro.${kind}`)}</p>
        <button type="button" className="btn btn-primary" onClick={() => setCreating(true)}>
          {t("models.new")}
        </button>
      </div>
      <QueryState query={models}>
        {(list) =>
          list.length === 0 ? (
            <Empty>{t(`models.empty.${kind}`)}</Empty>
          ) : (
            <div className="table-wrap">
              <table className="table table-cards">
                <thead>
                  <tr>
                    <th scope="col">{t("model.name")}</th>
                    <th scope="col">{t("model.provider")}</th>
                    <th scope="col">{t("model.modelId")}</th>
                    <th scope="col">{kind === "llm" ? t("model.abilities") : t("model.dimensions")}</th>
                    <th scope="col">
                      <span className="visually-hidden">{t("actions")}</span>
                    </th>
                  </tr>
                </thead>
                <tbody>
                  {list.map((m) => (
                    <ModelRow
                      key={m.uuid}
                      kind={kind}
                      model={m}
                      providerName={providerName(m.provider_uuid)}
                      onEdit={() => setEditing(m)}
                    />
                  ))}
                </tbody>
              </table>
            </div>
          )
        }
      </QueryState>
      <ModelDialog kind={kind} open={creating} onOpenChange={setCreating} />
      <ModelDialog
        kind={kind}
        model={editing ?? undefined}
        open={editing !== null}
        onOpenChange={(o) => !o && setEditing(null)}
      />
    </>
  );
}

function ModelRow({
  kind,
  model,
  providerName,
  onEdit,
}: {
  kind: ModelKind;
  model: Model;
  providerName: string;
  onEdit: () => void;
}) {
  const { t } = useTranslation("models");
  const { t: tc } = useTranslation();
  const invalidate = useInvalidateModels();
  const test = useModelTest(kind);
  const [showTest, setShowTest] = useState(false);
  return (
    <>
      <tr>
        <td data-label={t("model.name")}>
          <strong>{model.name}</strong>
          {model.description && <div className="muted mdl-small">{model.description}</div>}
        </td>
        <td data-label={t("model.provider")}>{providerName}</td>
        <td className="mdl-break" data-label={t("model.modelId")}>
          <span className="mono mdl-small">{model.requester_config.model || model.name}</span>
        </td>
        <td data-label={kind === "llm" ? t("model.abilities") : t("model.dimensions")}>
          {kind === "llm" ? (
            <span className="row">
              {(model.abilities ?? []).map((a) => (
                <span key={a} className="badge badge-ability">
                  {t(`ability.${a}`, { defaultValue: a })}
                </span>
              ))}
            </span>
          ) : model.dimensions ? (
            model.dimensions
          ) : (
            <span className="muted">{t("model.dimensionsUnknown")}</span>
          )}
        </td>
        <td>
          <div className="row mdl-actions row-actions">
            <button
              type="button"
              className="btn btn-small"
              disabled={test.isPending}
              aria-label={t("test.buttonNamed", { name: model.name })}
              onClick={() => {
                setShowTest(true);
                test.mutate(
                  { uuid: model.uuid, input: "Hello" },
                  // An embedding test stores the dimensions it found.
                  { onSuccess: () => kind === "embedding" && invalidate() },
                );
              }}
            >
              {t("test.button")}
            </button>
            <button
              type="button"
              className="btn btn-small"
              aria-label={t("models.editNamed", { name: model.name })}
              onClick={onEdit}
            >
              {tc("edit")}
            </button>
            <ConfirmDelete
              what={model.name}
              triggerLabel={t("models.deleteNamed", { name: model.name })}
              detail={t("models.deleteDetail")}
              onConfirm={async () => {
                await del(`/provider/models/${kind}/${model.uuid}`);
                await invalidate();
              }}
            />
          </div>
        </td>
      </tr>
      {showTest && (
        <tr className="test-row">
          <td colSpan={5}>
            <div className="row mdl-inline">
              <TestOutcome pending={test.isPending} result={test.data} error={test.error} />
              {!test.isPending && (
                <button
                  type="button"
                  className="btn btn-small btn-ghost"
                  aria-label={t("test.dismissNamed", { name: model.name })}
                  onClick={() => {
                    setShowTest(false);
                    test.reset();
                  }}
                >
                  ×
                </button>
              )}
            </div>
          </td>
        </tr>
      )}
    </>
  );
}
