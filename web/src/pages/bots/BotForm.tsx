// Create or edit a bot: name, description, adapter, the adapter's config form generated from its
// schema, pipeline, log retention (and, for a new bot, whether to start it). A refused save keeps
// everything typed and shows the server's message at the field it names.
import { useMemo, useState, type FormEvent } from "react";
import { useTranslation } from "react-i18next";
import { toast } from "sonner";
import { post, put } from "../../api/client";
import type { Bot } from "../../api/types";
import { ErrorState, Loading } from "../../components/PageState";
import { SchemaForm, defaultsOf, isVisible, type FormValue } from "../../components/SchemaForm";
import { localize } from "../../i18n";
import { useRenderCustom } from "./customFields";
import { botFormErrors, type BotFormErrors } from "./formErrors";
import { useAdapters, useInvalidateBots, usePipelines } from "./queries";
import { displayOnlyTypes, type Adapter } from "./types";

interface Draft {
  name: string;
  description: string;
  adapter: string;
  config: FormValue;
  use_pipeline_uuid: string;
  log_retention: string;
  enable: boolean;
}

function configFor(adapter: Adapter | undefined, stored: FormValue = {}): FormValue {
  return { ...defaultsOf(adapter?.spec.config ?? []), ...stored };
}

// Display-only items (the webhook URL, embed code) are not values: they are not sent.
function configToSend(adapter: Adapter | undefined, config: FormValue): FormValue {
  const out = { ...config };
  for (const item of adapter?.spec.config ?? []) if (displayOnlyTypes.has(item.type)) delete out[item.name];
  return out;
}

export function BotForm({ bot, onSaved }: { bot?: Bot; onSaved?: (uuid: string) => void }) {
  const adapters = useAdapters();
  const pipelines = usePipelines();
  if (adapters.isPending || pipelines.isPending) return <Loading />;
  if (adapters.error) return <ErrorState error={adapters.error} onRetry={() => adapters.refetch()} />;
  if (pipelines.error) return <ErrorState error={pipelines.error} onRetry={() => pipelines.refetch()} />;
  return <BotFormBody bot={bot} adapters={adapters.data} pipelines={pipelines.data} onSaved={onSaved} />;
}

function BotFormBody({
  bot,
  adapters,
  pipelines,
  onSaved,
}: {
  bot?: Bot;
  adapters: Adapter[];
  pipelines: { uuid: string; name: string; is_default: boolean }[];
  onSaved?: (uuid: string) => void;
}) {
  const { t, i18n } = useTranslation("bots");
  const { t: tc } = useTranslation();
  const invalidate = useInvalidateBots();
  const renderCustom = useRenderCustom(bot);
  const [draft, setDraft] = useState<Draft>(() => {
    const adapterName = bot?.adapter ?? (adapters.find((a) => a.name === "webhook") ?? adapters[0])?.name ?? "";
    return {
      name: bot?.name ?? "",
      description: bot?.description ?? "",
      adapter: adapterName,
      config: configFor(
        adapters.find((a) => a.name === adapterName),
        bot?.config as FormValue | undefined,
      ),
      use_pipeline_uuid: bot?.use_pipeline_uuid ?? pipelines.find((p) => p.is_default)?.uuid ?? "",
      log_retention: bot?.log_retention != null ? String(bot.log_retention) : "",
      enable: false,
    };
  });
  const [errors, setErrors] = useState<BotFormErrors>({ fields: {}, config: {} });
  const [saving, setSaving] = useState(false);
  const adapter = adapters.find((a) => a.name === draft.adapter);
  const items = useMemo(() => adapter?.spec.config ?? [], [adapter]);
  const set = <K extends keyof Draft>(key: K, value: Draft[K]) => setDraft((d) => ({ ...d, [key]: value }));
  const hasSecrets = Boolean(bot) && items.some((i) => i.secret || i.type === "secret" || i.type === "password");

  // A config error about an item the form does not show (hidden by show_if) would be invisible.
  const visibleNames = new Set(items.filter((i) => isVisible(i, draft.config)).map((i) => i.name));
  const hiddenConfigError = Object.entries(errors.config).find(([name]) => !visibleNames.has(name))?.[1];

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setSaving(true);
    setErrors({ fields: {}, config: {} });
    const body: Record<string, unknown> = {
      name: draft.name,
      description: draft.description,
      adapter: draft.adapter,
      config: configToSend(adapter, draft.config),
    };
    if (draft.use_pipeline_uuid) body.use_pipeline_uuid = draft.use_pipeline_uuid;
    if (draft.log_retention.trim() !== "") body.log_retention = Number(draft.log_retention);
    try {
      let uuid = bot?.uuid;
      if (bot) {
        await put(`/platform/bots/${bot.uuid}`, body);
      } else {
        body.enable = draft.enable;
        uuid = (await post<{ uuid: string }>("/platform/bots", body)).uuid;
      }
      await invalidate(uuid);
      toast.success(tc("saved"));
      if (uuid) onSaved?.(uuid);
    } catch (err) {
      setErrors(botFormErrors(err));
    } finally {
      setSaving(false);
    }
  };

  const fieldError = (name: keyof BotFormErrors["fields"], id: string) =>
    errors.fields[name] ? (
      <p id={`${id}-err`} className="field-error">
        {errors.fields[name]}
      </p>
    ) : null;
  const invalid = (name: keyof BotFormErrors["fields"]) => (errors.fields[name] ? " field-invalid" : "");
  const described = (name: keyof BotFormErrors["fields"], id: string, help?: boolean) =>
    [help ? `${id}-help` : "", errors.fields[name] ? `${id}-err` : ""].filter(Boolean).join(" ") || undefined;
  const idp = bot ? `bot-${bot.uuid}` : "bot-new";

  return (
    <form onSubmit={submit} noValidate className="bot-form">
      <div className={`field${invalid("name")}`}>
        <label htmlFor={`${idp}-name`}>{t("form.name")} *</label>
        <input
          id={`${idp}-name`}
          required
          maxLength={255}
          value={draft.name}
          aria-invalid={errors.fields.name ? true : undefined}
          aria-describedby={described("name", `${idp}-name`)}
          onChange={(e) => set("name", e.target.value)}
        />
        {fieldError("name", `${idp}-name`)}
      </div>
      <div className={`field${invalid("description")}`}>
        <label htmlFor={`${idp}-description`}>{t("form.description")}</label>
        <textarea
          id={`${idp}-description`}
          rows={2}
          value={draft.description}
          aria-describedby={described("description", `${idp}-description`)}
          onChange={(e) => set("description", e.target.value)}
        />
        {fieldError("description", `${idp}-description`)}
      </div>
      <div className={`field${invalid("adapter")}`}>
        <label htmlFor={`${idp}-adapter`}>{t("form.adapter")} *</label>
        <select
          id={`${idp}-adapter`}
          value={draft.adapter}
          aria-describedby={described("adapter", `${idp}-adapter`, true)}
          onChange={(e) => {
            const next = adapters.find((a) => a.name === e.target.value);
            // The stored config belongs to the stored adapter; another adapter starts from its defaults.
            const stored = bot && bot.adapter === e.target.value ? (bot.config as FormValue) : undefined;
            setDraft((d) => ({ ...d, adapter: e.target.value, config: configFor(next, stored) }));
            setErrors((er) => ({ ...er, config: {} }));
          }}
        >
          {adapters.map((a) => (
            <option key={a.name} value={a.name}>
              {localize(a.label, i18n.language) || a.name}
            </option>
          ))}
        </select>
        <p id={`${idp}-adapter-help`} className="field-help">
          {localize(adapter?.description, i18n.language)}
        </p>
        {fieldError("adapter", `${idp}-adapter`)}
      </div>
      <fieldset className="bot-config">
        <legend>{t("form.config")}</legend>
        {hasSecrets && <p className="field-help">{t("form.secretsMasked")}</p>}
        {items.length === 0 ? (
          <p className="muted">{t("form.noConfig")}</p>
        ) : (
          <SchemaForm
            items={items}
            value={draft.config}
            onChange={(config) => set("config", config)}
            errors={errors.config}
            renderCustom={renderCustom}
            disabled={saving}
          />
        )}
      </fieldset>
      <div className={`field${invalid("use_pipeline_uuid")}`}>
        <label htmlFor={`${idp}-pipeline`}>{t("form.pipeline")}</label>
        <select
          id={`${idp}-pipeline`}
          value={draft.use_pipeline_uuid}
          aria-describedby={described("use_pipeline_uuid", `${idp}-pipeline`, true)}
          onChange={(e) => set("use_pipeline_uuid", e.target.value)}
        >
          {!draft.use_pipeline_uuid && <option value="">{t("form.defaultPipeline")}</option>}
          {pipelines.map((p) => (
            <option key={p.uuid} value={p.uuid}>
              {p.name}
              {p.is_default ? ` (${t("form.default")})` : ""}
            </option>
          ))}
          {draft.use_pipeline_uuid && !pipelines.some((p) => p.uuid === draft.use_pipeline_uuid) && (
            <option value={draft.use_pipeline_uuid}>{t("form.missingPipeline")}</option>
          )}
        </select>
        <p id={`${idp}-pipeline-help`} className="field-help">
          {t("form.pipelineHelp")}
        </p>
        {fieldError("use_pipeline_uuid", `${idp}-pipeline`)}
      </div>
      <div className={`field${invalid("log_retention")}`}>
        <label htmlFor={`${idp}-retention`}>{t("form.logRetention")}</label>
        <input
          id={`${idp}-retention`}
          type="number"
          inputMode="numeric"
          min={1}
          step={1}
          placeholder="1000"
          value={draft.log_retention}
          aria-describedby={described("log_retention", `${idp}-retention`, true)}
          onChange={(e) => set("log_retention", e.target.value)}
        />
        <p id={`${idp}-retention-help`} className="field-help">
          {t("form.logRetentionHelp")}
        </p>
        {fieldError("log_retention", `${idp}-retention`)}
      </div>
      {!bot && (
        <div className="field field-check">
          <input
            id={`${idp}-start`}
            type="checkbox"
            checked={draft.enable}
            onChange={(e) => set("enable", e.target.checked)}
          />
          <label htmlFor={`${idp}-start`}>{t("form.startNow")}</label>
        </div>
      )}
      {(errors.general || hiddenConfigError) && (
        <p className="form-error" role="alert">
          {errors.general ?? hiddenConfigError}
        </p>
      )}
      {Object.keys(errors.config).length + Object.keys(errors.fields).length > 0 && !hiddenConfigError && (
        <p className="form-error" role="alert">
          {t("form.fixFields")}
        </p>
      )}
      <div className="form-actions">
        <button type="submit" className="btn btn-primary" disabled={saving}>
          {saving ? tc("saving") : tc("save")}
        </button>
      </div>
    </form>
  );
}
