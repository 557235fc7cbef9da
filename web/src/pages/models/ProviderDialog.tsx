// Creating or editing a provider: its name, its requester, the requester's config form (from the
// requester's schema) and its API keys. A refused save keeps every value and shows the server's
// message at the field it names.
import { useMemo, useState } from "react";
import { useTranslation } from "react-i18next";
import { post, put } from "../../api/client";
import type { Provider } from "../../api/types";
import { Dialog } from "../../components/Dialog";
import { FormError, errorMessage } from "../../components/PageState";
import { SchemaForm, defaultsOf, fieldErrorsFrom, type FormValue } from "../../components/SchemaForm";
import { localize } from "../../i18n";
import { Field } from "../../components/Field";
import { apiKeysOf, keyEntriesOf, ProviderKeysField, type KeyEntry } from "./ProviderKeysField";
import { useInvalidateModels } from "./queries";
import { RequesterPicker } from "./RequesterPicker";
import type { Requester } from "./types";

// The requester schema items a provider stores (ProviderDraft: name, requester, base_url,
// api_keys). The others (timeout, args) are server-wide settings here, so they are not offered.
const storedItems = new Set(["base_url"]);

function configItems(r: Requester | undefined) {
  return (r?.spec.config ?? []).filter((item) => storedItems.has(item.name));
}

function defaultConfig(r: Requester | undefined): FormValue {
  const out = defaultsOf(configItems(r));
  if (r?.default_base_url && !out.base_url) out.base_url = r.default_base_url;
  return out;
}

export function ProviderDialog({
  open,
  onOpenChange,
  provider,
  requesters,
}: {
  open: boolean;
  onOpenChange: (open: boolean) => void;
  provider?: Provider; // editing when given (keys masked)
  requesters: Requester[];
}) {
  const { t } = useTranslation("models");
  return (
    <Dialog open={open} onOpenChange={onOpenChange} title={t(provider ? "provider.editTitle" : "provider.newTitle")} wide>
      {open && <ProviderForm provider={provider} requesters={requesters} onDone={() => onOpenChange(false)} />}
    </Dialog>
  );
}

function ProviderForm({
  provider,
  requesters,
  onDone,
}: {
  provider?: Provider;
  requesters: Requester[];
  onDone: () => void;
}) {
  const { t, i18n } = useTranslation("models");
  const { t: tc } = useTranslation();
  const invalidate = useInvalidateModels();
  const firstChoice = requesters.find((r) => r.name === "openai-chat-completions") ?? requesters[0];
  const [name, setName] = useState(provider?.name ?? "");
  const [requester, setRequester] = useState(provider?.requester ?? firstChoice?.name ?? "");
  const selected = requesters.find((r) => r.name === requester);
  const [config, setConfig] = useState<FormValue>(() =>
    provider ? { base_url: provider.base_url } : defaultConfig(selected),
  );
  const [keys, setKeys] = useState<KeyEntry[]>(() => keyEntriesOf(provider?.api_keys));
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);

  const fieldErrors = useMemo(() => (error ? fieldErrorsFrom(errorMessage(error)) : {}), [error]);
  const items = configItems(selected);
  const knownFields = new Set(["name", "requester", "api_keys", ...items.map((i) => i.name)]);
  const generalError = error && !Object.keys(fieldErrors).some((f) => knownFields.has(f)) ? error : null;

  const chooseRequester = (next: string) => {
    const nextReq = requesters.find((r) => r.name === next);
    // A base URL still at the old requester's default follows the new requester; a typed one stays.
    const untouched = !config.base_url || config.base_url === selected?.default_base_url;
    setRequester(next);
    setConfig((c) => ({ ...defaultConfig(nextReq), ...c, ...(untouched ? { base_url: nextReq?.default_base_url ?? "" } : {}) }));
  };

  const submit = async (e: React.FormEvent) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    const body: Record<string, unknown> = {
      name: name.trim(),
      requester,
      base_url: String(config.base_url ?? "").trim(),
      api_keys: apiKeysOf(keys),
    };
    try {
      if (provider) await put(`/provider/providers/${provider.uuid}`, body);
      else await post("/provider/providers", body);
      await invalidate();
      onDone();
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };

  const hidden = (selected?.spec.config ?? []).filter((item) => !storedItems.has(item.name));
  return (
    <form onSubmit={submit} noValidate>
      <Field id="provider-name" label={t("provider.name")} required error={fieldErrors.name}>
        {(p) => (
          <input {...p} required autoComplete="off" value={name} maxLength={255} onChange={(e) => setName(e.target.value)} />
        )}
      </Field>
      <RequesterPicker
        requesters={requesters}
        value={requester}
        onChange={chooseRequester}
        error={fieldErrors.requester}
        disabled={busy}
      />
      <SchemaForm items={items} value={config} onChange={setConfig} errors={fieldErrors} disabled={busy} />
      {hidden.length > 0 && (
        <p className="field-help">
          {t("provider.serverWide", { names: hidden.map((i) => localize(i.label, i18n.language) || i.name).join(", ") })}
        </p>
      )}
      <ProviderKeysField
        keys={keys}
        onChange={setKeys}
        error={fieldErrors.api_keys}
        disabled={busy}
      />
      <FormError error={generalError} />
      <div className="form-actions">
        <button type="button" className="btn" onClick={onDone}>
          {tc("cancel")}
        </button>
        <button type="submit" className="btn btn-primary" disabled={busy}>
          {busy ? tc("saving") : tc("save")}
        </button>
      </div>
    </form>
  );
}
