import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState, type FormEvent } from "react";
import { useTranslation } from "react-i18next";
import { toast } from "sonner";
import { ApiError } from "../../api/client";
import { ErrorState, FormError, Loading } from "../../components/PageState";
import { defaultsOf, fieldErrorsFrom, SchemaForm, type FormValue } from "../../components/SchemaForm";
import { getConfig, pluginKeys, saveConfig } from "./api";
import type { Plugin } from "./types";

// The plugin's settings, drawn from its manifest's config schema. Saving restarts the plugin with
// them; a refused value is shown at its field and what was typed stays.
export function PluginConfig({ plugin }: { plugin: Plugin }) {
  const { t } = useTranslation("plugins");
  const items = plugin.manifest?.config ?? [];
  const query = useQuery({
    queryKey: pluginKeys.config(plugin.author, plugin.name, plugin.version),
    queryFn: () => getConfig(plugin.author, plugin.name),
    // The form owns the values once drawn: a background refresh must not overwrite what is typed.
    staleTime: Infinity,
    refetchOnWindowFocus: false,
  });
  return (
    <section className="card" aria-labelledby="plugin-config">
      <h2 id="plugin-config">{t("config.title")}</h2>
      {items.length === 0 ? (
        <p className="muted">{t("config.none")}</p>
      ) : query.isPending ? (
        <Loading />
      ) : query.error ? (
        <ErrorState error={query.error} onRetry={() => query.refetch()} />
      ) : (
        <ConfigForm key={plugin.version} plugin={plugin} initial={{ ...defaultsOf(items), ...query.data }} />
      )}
    </section>
  );
}

function ConfigForm({ plugin, initial }: { plugin: Plugin; initial: FormValue }) {
  const { t } = useTranslation(["plugins", "common"]);
  const queryClient = useQueryClient();
  const [value, setValue] = useState<FormValue>(initial);
  const mutation = useMutation({
    mutationFn: (config: FormValue) => saveConfig(plugin.author, plugin.name, config),
    onSuccess: (_data, config) => {
      queryClient.setQueryData(pluginKeys.config(plugin.author, plugin.name, plugin.version), config);
      toast.success(t("config.saved"));
    },
    onSettled: () => queryClient.invalidateQueries({ queryKey: pluginKeys.all }),
  });
  const message = mutation.error instanceof ApiError ? mutation.error.message : undefined;
  const errors = fieldErrorsFrom(message, "config.");
  const atField = Object.keys(errors).some((name) => plugin.manifest.config.some((i) => i.name === name));

  function submit(e: FormEvent) {
    e.preventDefault();
    mutation.mutate(value);
  }

  return (
    <form onSubmit={submit} noValidate>
      <SchemaForm
        items={plugin.manifest.config}
        value={value}
        onChange={setValue}
        errors={atField ? errors : {}}
        disabled={mutation.isPending}
      />
      {!atField && <FormError error={mutation.error} />}
      <p className="field-help">{t("config.restartNote")}</p>
      <div className="form-actions">
        <button type="submit" className="btn btn-primary" disabled={mutation.isPending}>
          {mutation.isPending ? t("common:saving") : t("common:save")}
        </button>
      </div>
    </form>
  );
}
