import * as Switch from "@radix-ui/react-switch";
import { useMutation, useQueryClient } from "@tanstack/react-query";
import { useId } from "react";
import { useTranslation } from "react-i18next";
import { toast } from "sonner";
import { errorMessage } from "../../components/PageState";
import { pluginKeys, setEnabled } from "./api";
import type { Plugin } from "./types";

// Starts or stops the plugin. The server answers once the process has started (or failed to), so
// the switch shows the asked-for position as busy until then, and the list shows the outcome.
// `visibleLabel` draws the label beside the switch; otherwise it is the switch's aria-label.
export function EnableSwitch({ plugin, label, visibleLabel }: { plugin: Plugin; label: string; visibleLabel?: boolean }) {
  const { t } = useTranslation("plugins");
  const id = useId();
  const queryClient = useQueryClient();
  const mutation = useMutation({
    mutationFn: (enabled: boolean) => setEnabled(plugin.author, plugin.name, enabled),
    onError: (e) => toast.error(t("enable.failed", { message: errorMessage(e) })),
    onSettled: () => queryClient.invalidateQueries({ queryKey: pluginKeys.all }),
  });
  const checked = mutation.isPending ? Boolean(mutation.variables) : plugin.enabled;
  return (
    <span className="row plugin-enable">
      <Switch.Root
        id={id}
        className="switch"
        checked={checked}
        // Not disabled while busy: a disabled button drops the keyboard focus.
        aria-disabled={mutation.isPending || undefined}
        aria-busy={mutation.isPending || undefined}
        aria-label={visibleLabel ? undefined : label}
        onCheckedChange={(v) => !mutation.isPending && mutation.mutate(v)}
      >
        <Switch.Thumb className="switch-thumb" />
      </Switch.Root>
      {visibleLabel && <label htmlFor={id}>{label}</label>}
      {mutation.isPending && (
        <span className="muted plugins-small" role="status">
          {checked ? t("enable.starting") : t("enable.stopping")}
        </span>
      )}
    </span>
  );
}
