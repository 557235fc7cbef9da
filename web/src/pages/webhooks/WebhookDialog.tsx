// Creating a webhook (name, URL, description, enabled) or editing one. The server refuses with its
// reason; what was typed stays.
import { useState } from "react";
import { useForm } from "react-hook-form";
import { useTranslation } from "react-i18next";
import { post, put } from "../../api/client";
import { Dialog } from "../../components/Dialog";
import { Field } from "../../components/Field";
import { FormError } from "../../components/PageState";
import type { Webhook } from "./types";

interface Fields {
  name: string;
  url: string;
  description: string;
  enabled: boolean;
}

export function WebhookDialog({
  open,
  onOpenChange,
  webhook,
  onSaved,
}: {
  open: boolean;
  onOpenChange: (open: boolean) => void;
  webhook?: Webhook; // editing when given
  onSaved: (created?: Webhook) => void;
}) {
  const { t } = useTranslation("webhooks");
  return (
    <Dialog open={open} onOpenChange={onOpenChange} title={webhook ? t("dialog.editTitle", { name: webhook.name }) : t("dialog.newTitle")}>
      {open && <WebhookForm webhook={webhook} onSaved={onSaved} onCancel={() => onOpenChange(false)} />}
    </Dialog>
  );
}

function WebhookForm({ webhook, onSaved, onCancel }: { webhook?: Webhook; onSaved: (created?: Webhook) => void; onCancel: () => void }) {
  const { t } = useTranslation("webhooks");
  const { t: tc } = useTranslation();
  const [error, setError] = useState<unknown>(null);
  const { register, handleSubmit, formState } = useForm<Fields>({
    defaultValues: {
      name: webhook?.name ?? "",
      url: webhook?.url ?? "",
      description: webhook?.description ?? "",
      enabled: webhook?.enabled ?? true,
    },
  });
  const filled = (v: string) => v.trim() !== "";
  return (
    <form
      noValidate
      onSubmit={handleSubmit(async (v) => {
        setError(null);
        const body = { name: v.name.trim(), url: v.url.trim(), description: v.description };
        try {
          if (webhook) {
            await put(`/webhooks/${webhook.id}`, body);
            onSaved();
          } else {
            const data = await post<{ webhook: Webhook }>("/webhooks", { ...body, enabled: v.enabled });
            onSaved(data.webhook);
          }
        } catch (e) {
          setError(e);
        }
      })}
    >
      <Field id="webhook-name" label={t("dialog.name")} required error={formState.errors.name ? t("dialog.required") : undefined}>
        {(p) => <input {...p} autoComplete="off" {...register("name", { validate: filled })} />}
      </Field>
      <Field
        id="webhook-url"
        label={t("dialog.url")}
        required
        help={t("dialog.urlHelp")}
        error={formState.errors.url ? t("dialog.urlInvalid") : undefined}
      >
        {(p) => (
          <input
            {...p}
            type="url"
            autoComplete="off"
            placeholder="https://example.com/hooks/switchboard"
            {...register("url", { validate: (v) => /^https?:\/\/\S+$/i.test(v.trim()) })}
          />
        )}
      </Field>
      <Field id="webhook-description" label={t("dialog.description")}>
        {(p) => <textarea {...p} rows={2} {...register("description")} />}
      </Field>
      {!webhook && (
        <Field id="webhook-enabled" label={t("dialog.enabled")} checkbox>
          {(p) => <input {...p} type="checkbox" {...register("enabled")} />}
        </Field>
      )}
      <FormError error={error} />
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
