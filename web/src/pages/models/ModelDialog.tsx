// Creating or editing an LLM or embedding model, with a Test that calls the provider with what the
// form holds right now (path uuid `_`), before anything is saved. A refused save keeps the form.
import { useMemo, useState } from "react";
import { useTranslation } from "react-i18next";
import { post, put } from "../../api/client";
import type { Model, Provider } from "../../api/types";
import { Dialog } from "../../components/Dialog";
import { FormError, errorMessage } from "../../components/PageState";
import { fieldErrorsFrom } from "../../components/SchemaForm";
import { useModelTest } from "./modelTest";
import { useInvalidateModels, useProviders, useRequesters } from "./queries";
import { TestOutcome } from "./TestOutcome";
import type { ModelBody, ModelKind } from "./types";

const abilities = ["chat", "vision", "func_call"] as const;

// The server's field names, as the form's: "requester_config.model must ..." belongs to Model ID.
const fieldOf: Record<string, string> = {
  name: "name",
  provider_uuid: "provider",
  provider: "provider",
  requester_config: "model",
  abilities: "abilities",
  extra_args: "extra_args",
  description: "description",
};

export function ModelDialog({
  kind,
  model,
  open,
  onOpenChange,
}: {
  kind: ModelKind;
  model?: Model;
  open: boolean;
  onOpenChange: (open: boolean) => void;
}) {
  const { t } = useTranslation("models");
  return (
    <Dialog
      open={open}
      onOpenChange={onOpenChange}
      title={t(model ? `model.editTitle.${kind}` : `model.newTitle.${kind}`)}
      wide
    >
      {open && <ModelForm kind={kind} model={model} onDone={() => onOpenChange(false)} />}
    </Dialog>
  );
}

function ModelForm({ kind, model, onDone }: { kind: ModelKind; model?: Model; onDone: () => void }) {
  const { t } = useTranslation("models");
  const { t: tc } = useTranslation();
  const providers = useProviders();
  const requesters = useRequesters();
  const invalidate = useInvalidateModels();
  const test = useModelTest(kind);
  const [name, setName] = useState(model?.name ?? "");
  const [providerUuid, setProviderUuid] = useState(model?.provider_uuid ?? "");
  const [modelId, setModelId] = useState(model?.requester_config.model ?? "");
  const [abilitySet, setAbilitySet] = useState<string[]>(model?.abilities ?? (kind === "llm" ? ["chat"] : []));
  const [description, setDescription] = useState(model?.description ?? "");
  const [extraArgs, setExtraArgs] = useState(
    model && Object.keys(model.extra_args ?? {}).length > 0 ? JSON.stringify(model.extra_args, null, 2) : "",
  );
  const [testInput, setTestInput] = useState("Hello");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const [localErrors, setLocalErrors] = useState<Record<string, string>>({});

  const list: Provider[] = providers.data ?? [];
  // Until the person picks one, the first provider is the choice (the select shows it selected).
  const chosen = providerUuid || list[0]?.uuid || "";
  const provider = list.find((p) => p.uuid === chosen);
  const requester = requesters.data?.find((r) => r.name === provider?.requester);
  const use = kind === "llm" ? "llm" : "text-embedding";
  const mismatch = requester && !requester.spec.support_type.includes(use);

  const serverErrors = useMemo(() => {
    const out: Record<string, string> = {};
    for (const [field, message] of Object.entries(error ? fieldErrorsFrom(errorMessage(error)) : {})) {
      if (fieldOf[field]) out[fieldOf[field]] = message;
    }
    return out;
  }, [error]);
  const errors = { ...serverErrors, ...localErrors };
  const generalError = error && Object.keys(serverErrors).length === 0 ? error : null;

  // The body both Save and Test send; null when the form itself is not valid yet.
  const build = (): ModelBody | null => {
    const local: Record<string, string> = {};
    let extra: Record<string, unknown> = {};
    if (extraArgs.trim()) {
      try {
        const parsed: unknown = JSON.parse(extraArgs);
        if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) local.extra_args = t("model.extraArgsObject");
        else extra = parsed as Record<string, unknown>;
      } catch (e) {
        local.extra_args = `${tc("form.invalidJson")}: ${(e as Error).message}`;
      }
    }
    if (!chosen) local.provider = t("model.providerRequired");
    setLocalErrors(local);
    if (Object.keys(local).length > 0) return null;
    const body: ModelBody = {
      name: name.trim(),
      description,
      provider_uuid: chosen,
      // Other requester_config keys (LangBot's `args`) are kept as stored.
      requester_config: { args: {}, ...(model?.requester_config ?? {}), model: modelId.trim() || name.trim() },
      extra_args: extra,
    };
    if (kind === "llm") body.abilities = abilities.filter((a) => abilitySet.includes(a));
    return body;
  };

  const submit = async (e: React.FormEvent) => {
    e.preventDefault();
    const body = build();
    if (!body) return;
    setBusy(true);
    setError(null);
    try {
      if (model) await put(`/provider/models/${kind}/${model.uuid}`, body);
      else await post(`/provider/models/${kind}`, body);
      await invalidate();
      onDone();
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };

  const runTest = () => {
    const body = build();
    if (body) test.mutate({ uuid: "_", input: testInput, draft: body });
  };

  const fieldClass = (f: string) => `field${errors[f] ? " field-invalid" : ""}`;
  const describe = (f: string, help?: string) =>
    [help, errors[f] ? `model-${f}-err` : undefined].filter(Boolean).join(" ") || undefined;
  const fieldError = (f: string) =>
    errors[f] ? (
      <p id={`model-${f}-err`} className="field-error">
        {errors[f]}
      </p>
    ) : null;

  return (
    <form onSubmit={submit} noValidate>
      <div className={fieldClass("name")}>
        <label htmlFor="model-name">
          {t("model.name")}
          <span aria-hidden="true"> *</span>
        </label>
        <input
          id="model-name"
          required
          autoComplete="off"
          maxLength={255}
          value={name}
          aria-invalid={errors.name ? true : undefined}
          aria-describedby={describe("name")}
          onChange={(e) => setName(e.target.value)}
        />
        {fieldError("name")}
      </div>
      <div className={fieldClass("provider")}>
        <label htmlFor="model-provider">
          {t("model.provider")}
          <span aria-hidden="true"> *</span>
        </label>
        {providers.isPending ? (
          <p className="muted">{tc("loading")}</p>
        ) : list.length === 0 ? (
          <p className="notice" id="model-provider">
            {t("model.noProviders")}
          </p>
        ) : (
          <select
            id="model-provider"
            required
            value={chosen}
            aria-invalid={errors.provider ? true : undefined}
            aria-describedby={describe("provider", mismatch ? "model-provider-warn" : undefined)}
            onChange={(e) => setProviderUuid(e.target.value)}
          >
            {list.map((p) => (
              <option key={p.uuid} value={p.uuid}>
                {p.name}
              </option>
            ))}
          </select>
        )}
        {mismatch && (
          <p id="model-provider-warn" className="field-help requester-warning">
            {t(`model.providerMismatch.${kind}`)}
          </p>
        )}
        {fieldError("provider")}
      </div>
      <div className={fieldClass("model")}>
        <label htmlFor="model-id">{t("model.modelId")}</label>
        <input
          id="model-id"
          className="mono"
          autoComplete="off"
          spellCheck={false}
          placeholder={name.trim() || undefined}
          value={modelId}
          aria-invalid={errors.model ? true : undefined}
          aria-describedby={describe("model", "model-id-help")}
          onChange={(e) => setModelId(e.target.value)}
        />
        <p id="model-id-help" className="field-help">
          {t("model.modelIdHelp")}
        </p>
        {fieldError("model")}
      </div>
      {kind === "llm" && (
        <fieldset className={`${fieldClass("abilities")} abilities`} aria-describedby={describe("abilities")}>
          <legend>{t("model.abilities")}</legend>
          <div className="row">
            {abilities.map((a) => (
              <label key={a} className="inline-field">
                <input
                  type="checkbox"
                  checked={abilitySet.includes(a)}
                  onChange={(e) =>
                    setAbilitySet((s) => (e.target.checked ? [...s, a] : s.filter((x) => x !== a)))
                  }
                />
                {t(`ability.${a}`)}
              </label>
            ))}
          </div>
          {fieldError("abilities")}
        </fieldset>
      )}
      <div className={fieldClass("description")}>
        <label htmlFor="model-description">{t("model.description")}</label>
        <textarea
          id="model-description"
          rows={2}
          value={description}
          aria-describedby={describe("description")}
          onChange={(e) => setDescription(e.target.value)}
        />
        {fieldError("description")}
      </div>
      <div className={fieldClass("extra_args")}>
        <label htmlFor="model-extra-args">{t("model.extraArgs")}</label>
        <textarea
          id="model-extra-args"
          className="mono"
          rows={3}
          spellCheck={false}
          placeholder='{"temperature": 0.7}'
          value={extraArgs}
          aria-invalid={errors.extra_args ? true : undefined}
          aria-describedby={describe("extra_args", "model-extra-args-help")}
          onChange={(e) => setExtraArgs(e.target.value)}
        />
        <p id="model-extra-args-help" className="field-help">
          {t("model.extraArgsHelp")}
        </p>
        {fieldError("extra_args")}
      </div>
      <div className="model-try">
        <div className="field">
          <label htmlFor="model-test-input">{t(kind === "llm" ? "test.prompt" : "test.text")}</label>
          <div className="row mdl-inline">
            <input id="model-test-input" value={testInput} onChange={(e) => setTestInput(e.target.value)} />
            <button type="button" className="btn" disabled={test.isPending || list.length === 0} onClick={runTest}>
              {t("test.button")}
            </button>
          </div>
          <p className="field-help">{t("test.draftHelp")}</p>
        </div>
        <TestOutcome pending={test.isPending} result={test.data} error={test.error} />
      </div>
      <FormError error={generalError} />
      <div className="form-actions">
        <button type="button" className="btn" onClick={onDone}>
          {tc("cancel")}
        </button>
        <button type="submit" className="btn btn-primary" disabled={busy || list.length === 0}>
          {busy ? tc("saving") : tc("save")}
        </button>
      </div>
    </form>
  );
}
