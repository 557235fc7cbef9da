import { useMutation, useQueryClient } from "@tanstack/react-query";
import { useId } from "react";
import { useTranslation } from "react-i18next";
import { FormError } from "../../components/PageState";
import { pluginKeys, setNetworkAllowed } from "./api";
import type { Plugin } from "./types";

// What confines the plugin, and the admin's leave to reach the network. The leave only matters
// when the manifest asks for the network (docs/plugins.md, "The sandbox"), so it is offered only
// then; changing it restarts a running plugin.
export function PluginSandbox({ plugin }: { plugin: Plugin }) {
  const { t } = useTranslation("plugins");
  const id = useId();
  const queryClient = useQueryClient();
  const { sandbox } = plugin;
  const mutation = useMutation({
    mutationFn: (allow: boolean) => setNetworkAllowed(plugin.author, plugin.name, allow),
    onSettled: () => queryClient.invalidateQueries({ queryKey: pluginKeys.all }),
  });
  const allowed = mutation.isPending ? Boolean(mutation.variables) : sandbox.allow_network;
  return (
    <section className="card" aria-labelledby={`${id}-title`}>
      <h2 id={`${id}-title`}>{t("sandbox.title")}</h2>
      <dl className="plugin-facts">
        <dt>{t("sandbox.confinement")}</dt>
        <dd>{sandbox.status ? <span className="mono">{sandbox.status}</span> : <span className="muted">{t("sandbox.notRunning")}</span>}</dd>
        <dt>{t("sandbox.network")}</dt>
        <dd>
          {!sandbox.network_requested
            ? t("sandbox.notRequested")
            : sandbox.allow_network
              ? t("sandbox.allowed")
              : t("sandbox.requestedNotAllowed")}
        </dd>
      </dl>
      {sandbox.network_requested && (
        <div className="field field-check">
          <input
            id={`${id}-net`}
            type="checkbox"
            checked={allowed}
            disabled={mutation.isPending}
            aria-describedby={`${id}-net-help`}
            onChange={(e) => mutation.mutate(e.target.checked)}
          />
          <label htmlFor={`${id}-net`}>{t("sandbox.allow")}</label>
          <p id={`${id}-net-help`} className="field-help">
            {mutation.isPending ? t("sandbox.restarting") : t("sandbox.allowHelp")}
          </p>
        </div>
      )}
      <FormError error={mutation.error} />
    </section>
  );
}
