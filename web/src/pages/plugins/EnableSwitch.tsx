// Starts or stops the plugin. The server answers once the process has started (or failed to), so
// the switch shows the asked-for position as busy until then, and the list shows the outcome.
// `visibleLabel` draws the label beside the switch; otherwise it is the switch's aria-label.
import { useQueryClient } from "@tanstack/react-query";
import { useTranslation } from "react-i18next";
import { ServerSwitch } from "../../components/ServerSwitch";
import { pluginKeys, setEnabled } from "./api";
import type { Plugin } from "./types";

export function EnableSwitch({ plugin, label, visibleLabel }: { plugin: Plugin; label: string; visibleLabel?: boolean }) {
  const { t } = useTranslation("plugins");
  const queryClient = useQueryClient();
  return (
    <ServerSwitch
      className="row plugin-enable"
      checked={plugin.enabled}
      label={label}
      visibleLabel={visibleLabel}
      busyText={(next) => (next ? t("enable.starting") : t("enable.stopping"))}
      failureText={(message) => t("enable.failed", { message })}
      onToggle={async (enabled) => {
        try {
          await setEnabled(plugin.author, plugin.name, enabled);
        } finally {
          await queryClient.invalidateQueries({ queryKey: pluginKeys.all });
        }
      }}
    />
  );
}
