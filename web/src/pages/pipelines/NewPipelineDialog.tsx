// "New pipeline": name, description and emoji; the server fills the config with LangBot's defaults
// and the editor opens on the new pipeline. A refused field keeps what was typed and says why there.
import { useQueryClient } from "@tanstack/react-query";
import { useId, useState, type FormEvent } from "react";
import { useTranslation } from "react-i18next";
import { useNavigate } from "react-router";
import { post } from "../../api/client";
import { Dialog } from "../../components/Dialog";
import { errorMessage, FormError } from "../../components/PageState";
import { fieldErrorsFrom } from "../../components/SchemaForm";
import { pipelineKeys } from "./queries";

const fields = ["name", "description", "emoji"] as const;
type FieldName = (typeof fields)[number];

export function NewPipelineDialog({ open, onOpenChange }: { open: boolean; onOpenChange: (open: boolean) => void }) {
  const { t } = useTranslation("pipelines");
  const { t: tc } = useTranslation();
  const id = useId();
  const navigate = useNavigate();
  const client = useQueryClient();
  const [values, setValues] = useState<Record<FieldName, string>>({ name: "", description: "", emoji: "⚙️" });
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const named = error ? Object.keys(fieldErrorsFrom(errorMessage(error)))[0] : undefined;
  const fieldError = fields.find((f) => f === named);

  async function submit(e: FormEvent) {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const { uuid } = await post<{ uuid: string }>("/pipelines", values);
      await client.invalidateQueries({ queryKey: pipelineKeys.all });
      onOpenChange(false);
      setValues({ name: "", description: "", emoji: "⚙️" });
      navigate(`/pipelines/${uuid}`);
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  }

  const input = (name: FieldName, props: { required?: boolean; maxLength?: number; multiline?: boolean }) => {
    const errId = fieldError === name ? `${id}-${name}-err` : undefined;
    const common = {
      id: `${id}-${name}`,
      value: values[name],
      required: props.required,
      "aria-invalid": errId ? true : undefined,
      "aria-describedby": errId,
    };
    return (
      <div className={`field${errId ? " field-invalid" : ""}`}>
        <label htmlFor={common.id}>{t(`new.${name}`)}</label>
        {props.multiline ? (
          <textarea {...common} rows={3} onChange={(e) => setValues({ ...values, [name]: e.target.value })} />
        ) : (
          <input
            {...common}
            type="text"
            maxLength={props.maxLength}
            autoComplete="off"
            onChange={(e) => setValues({ ...values, [name]: e.target.value })}
          />
        )}
        {errId && (
          <p id={errId} className="field-error">
            {errorMessage(error)}
          </p>
        )}
      </div>
    );
  };

  return (
    <Dialog
      open={open}
      onOpenChange={(o) => {
        onOpenChange(o);
        if (!o) setError(null);
      }}
      title={t("new.title")}
    >
      <form onSubmit={submit}>
        {input("name", { required: true })}
        {input("description", { multiline: true })}
        {input("emoji", {})}
        {!fieldError && <FormError error={error} />}
        <div className="dialog-actions">
          <button type="button" className="btn" onClick={() => onOpenChange(false)}>
            {tc("cancel")}
          </button>
          <button type="submit" className="btn btn-primary" disabled={busy}>
            {busy ? tc("saving") : tc("save")}
          </button>
        </div>
      </form>
    </Dialog>
  );
}
