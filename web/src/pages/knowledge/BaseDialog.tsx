// Creating a knowledge base, or editing one: name, description and emoji, then the engine's two
// forms (creation and retrieval) drawn from its schemas by SchemaForm. Changing the embedding model
// of a base with files needs its files re-embedded: the dialog offers it, and the server refuses
// (409, in its own words) when it is not asked for.
import { useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { useTranslation } from "react-i18next";
import { toast } from "sonner";
import { post, put } from "../../api/client";
import { Dialog } from "../../components/Dialog";
import { Field } from "../../components/Field";
import { FormError, QueryState, errorMessage } from "../../components/PageState";
import { SchemaForm, fieldErrorsFrom, type SchemaFormProps } from "../../components/SchemaForm";
import { EmbeddingModelSelect } from "./EmbeddingModelSelect";
import { draftOf, embeddingChanged, engineFor, requestBody, type BaseDraft } from "./knowledge";
import { knowledgeKeys, useEngines, useFiles } from "./queries";
import type { KnowledgeBase, KnowledgeEngine } from "./types";

export function BaseDialog({
  open,
  onOpenChange,
  base,
  onSaved,
}: {
  open: boolean;
  onOpenChange: (open: boolean) => void;
  base?: KnowledgeBase; // editing when given
  onSaved?: (uuid: string) => void;
}) {
  const { t } = useTranslation("knowledge");
  const engines = useEngines();
  return (
    <Dialog open={open} onOpenChange={onOpenChange} wide title={t(base ? "dialog.editTitle" : "dialog.newTitle")}>
      {open && (
        <QueryState query={engines}>
          {(list) => (
            <BaseForm
              engine={engineFor(list, base?.knowledge_engine_plugin_id)}
              base={base}
              onCancel={() => onOpenChange(false)}
              onSaved={(uuid) => {
                onOpenChange(false);
                onSaved?.(uuid);
              }}
            />
          )}
        </QueryState>
      )}
    </Dialog>
  );
}

const renderCustom: NonNullable<SchemaFormProps["renderCustom"]> = (item, value, set, id) =>
  item.type === "embedding-model-selector" ? <EmbeddingModelSelect id={id} value={value} set={set} /> : undefined;

function BaseForm({
  engine,
  base,
  onCancel,
  onSaved,
}: {
  engine: KnowledgeEngine | undefined;
  base?: KnowledgeBase;
  onCancel: () => void;
  onSaved: (uuid: string) => void;
}) {
  const { t } = useTranslation("knowledge");
  const { t: tc } = useTranslation();
  const client = useQueryClient();
  const [draft, setDraft] = useState<BaseDraft>(() => draftOf(engine, base));
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const [nameMissing, setNameMissing] = useState(false);
  const message = error ? errorMessage(error) : undefined;
  // "creation_settings.chunk_size must be ..." lands under that field of the right form.
  const creationErrors = fieldErrorsFrom(message, "creation_settings.");
  const retrievalErrors = fieldErrorsFrom(message, "retrieval_settings.");
  const placed = Object.keys(creationErrors).length + Object.keys(retrievalErrors).length > 0;
  // Whether the base has files decides if a new embedding model needs them re-embedded.
  const files = useFiles(base?.uuid ?? "", base !== undefined);
  const modelChanged = base !== undefined && (files.data?.length ?? 0) > 0 && embeddingChanged(base, draft);
  const set = (patch: Partial<BaseDraft>) => setDraft((d) => ({ ...d, ...patch }));

  return (
    <form
      noValidate
      onSubmit={async (e) => {
        e.preventDefault();
        if (!draft.name.trim()) {
          setNameMissing(true);
          return;
        }
        setBusy(true);
        setError(null);
        try {
          const body = requestBody(draft, engine, base);
          const data = base
            ? await put<{ uuid: string; task_id?: number }>(`/knowledge/bases/${base.uuid}`, body)
            : await post<{ uuid: string }>("/knowledge/bases", body);
          await client.invalidateQueries({ queryKey: knowledgeKeys.all });
          if ("task_id" in data && data.task_id != null) toast.success(t("dialog.reembedStarted"));
          onSaved(data.uuid ?? base?.uuid ?? "");
        } catch (err) {
          setError(err);
        } finally {
          setBusy(false);
        }
      }}
    >
      <div className="kb-name-row">
        <Field id="kb-emoji" label={t("dialog.emoji")}>
          {(p) => (
            <input {...p} className="kb-emoji-input" maxLength={8} value={draft.emoji} onChange={(e) => set({ emoji: e.target.value })} />
          )}
        </Field>
        <Field id="kb-name" label={t("dialog.name")} required error={nameMissing ? t("dialog.nameRequired") : undefined}>
          {(p) => (
            <input
              {...p}
              autoComplete="off"
              required
              value={draft.name}
              onChange={(e) => {
                setNameMissing(false);
                set({ name: e.target.value });
              }}
            />
          )}
        </Field>
      </div>
      <Field id="kb-description" label={t("dialog.description")}>
        {(p) => <textarea {...p} rows={2} value={draft.description} onChange={(e) => set({ description: e.target.value })} />}
      </Field>
      <fieldset className="kb-fieldset">
        <legend>{t("dialog.creation")}</legend>
        <SchemaForm
          items={engine?.creation_schema ?? []}
          value={draft.creation}
          onChange={(creation) => set({ creation })}
          errors={creationErrors}
          renderCustom={renderCustom}
          disabled={busy}
        />
        {modelChanged && (
          <div className="field field-check">
            <input
              id="kb-reembed"
              type="checkbox"
              checked={draft.reembed}
              onChange={(e) => set({ reembed: e.target.checked })}
            />
            <label htmlFor="kb-reembed">{t("dialog.reembed")}</label>
          </div>
        )}
      </fieldset>
      <fieldset className="kb-fieldset">
        <legend>{t("dialog.retrieval")}</legend>
        <SchemaForm
          items={engine?.retrieval_schema ?? []}
          value={draft.retrieval}
          onChange={(retrieval) => set({ retrieval })}
          errors={retrievalErrors}
          disabled={busy}
        />
      </fieldset>
      {!placed && <FormError error={error} />}
      <div className="dialog-actions">
        <button type="button" className="btn" onClick={onCancel}>
          {tc("cancel")}
        </button>
        <button type="submit" className="btn btn-primary" disabled={busy}>
          {busy ? tc("saving") : tc("save")}
        </button>
      </div>
    </form>
  );
}
