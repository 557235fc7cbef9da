import { useTranslation } from "react-i18next";
import type { Plugin } from "./types";

// What the plugin's process is doing, in words (the colour is never the only signal). A disabled
// plugin is "stopped" by choice: say so, rather than look broken.
export function PluginStatusBadge({ plugin }: { plugin: Pick<Plugin, "status" | "enabled" | "error"> }) {
  const { t } = useTranslation("plugins");
  const status = !plugin.enabled && plugin.status === "stopped" ? "disabled" : plugin.status;
  return (
    <span className={`badge plugin-badge-${status}`} title={plugin.error || undefined}>
      {t(`status.${status}`, { defaultValue: status })}
    </span>
  );
}
