// Creating an API key (name and description), or renaming one. The server refuses with its reason
// (shown under the field it names); what was typed stays.
import { useState } from "react";
import { useForm } from "react-hook-form";
import { useTranslation } from "react-i18next";
import { post, put } from "../../api/client";
import { Dialog } from "../../components/Dialog";
import { Field } from "../../components/Field";
import { FormError, errorMessage } from "../../components/PageState";
import { fieldErrorsFrom } from "../../components/SchemaForm";
import type { ApiKey } from "./types";

interface Fields {
  name: string;
  description: string;
}

export function ApiKeyDialog({
  open,
  onOpenChange,
  apiKey,
  onSaved,
}: {
  open: boolean;
  onOpenChange: (open: boolean) => void;
  apiKey?: ApiKey; // renaming when given
  onSaved: (created?: ApiKey) => void;
}) {
  const { t } = useTranslation("apikeys");
  return (
    <Dialog open={open} onOpenChange={onOpenChange} title={t(apiKey ? "dialog.editTitle" : "dialog.newTitle")}>
      {open && <ApiKeyForm apiKey={apiKey} onSaved={onSaved} onCancel={() => onOpenChange(false)} />}
    </Dialog>
  );
}

function ApiKeyForm({
  apiKey,
  onSaved,
  onCancel,
}: {
  apiKey?: ApiKey;
  onSaved: (created?: ApiKey) => void;
  onCancel: () => void;
}) {
  const { t } = useTranslation("apikeys");
  const { t: tc } = useTranslation();
  const [error, setError] = useState<unknown>(null);
  const { register, handleSubmit, formState } = useForm<Fields>({
    defaultValues: { name: apiKey?.name ?? "", description: apiKey?.description ?? "" },
  });
  const fieldErrors = error ? fieldErrorsFrom(errorMessage(error)) : {};
  const nameError = formState.errors.name ? t("dialog.nameRequired") : fieldErrors.name;
  const descriptionError = fieldErrors.description;
  const generalError = error && !fieldErrors.name && !fieldErrors.description ? error : null;

  return (
    <form
      noValidate
      onSubmit={handleSubmit(async (v) => {
        setError(null);
        try {
          if (apiKey) {
            await put(`/apikeys/${apiKey.id}`, v);
            onSaved();
          } else {
            const data = await post<{ key: ApiKey }>("/apikeys", v);
            onSaved(data.key);
          }
        } catch (e) {
          setError(e);
        }
      })}
    >
      <Field id="apikey-name" label={t("dialog.name")} required help={t("dialog.nameHelp")} error={nameError}>
        {(p) => (
          <input
            {...p}
            autoComplete="off"
            {...register("name", { required: true, validate: (v) => v.trim() !== "" })}
          />
        )}
      </Field>
      <Field id="apikey-description" label={t("dialog.description")} error={descriptionError}>
        {(p) => <textarea {...p} rows={2} {...register("description")} />}
      </Field>
      <FormError error={generalError} />
      <div className="form-actions">
        <button type="button" className="btn" onClick={onCancel}>
          {tc("cancel")}
        </button>
        <button type="submit" className="btn btn-primary" disabled={formState.isSubmitting}>
          {formState.isSubmitting ? tc("saving") : tc("save")}
        </button>
      </div>
    </form>
  );
}
