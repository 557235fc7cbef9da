import { useMutation, useQueryClient } from "@tanstack/react-query";
import { useTranslation } from "react-i18next";
import { FormError } from "../../components/PageState";
import { pluginKeys, setEnabled } from "./api";
import type { Plugin } from "./types";

// After too many crashes the server stops restarting a plugin until it is enabled again (its
// circuit breaker): this asks for exactly that, without the detour of switching it off and on.
export function StartAgainButton({ plugin }: { plugin: Plugin }) {
  const { t } = useTranslation("plugins");
  const queryClient = useQueryClient();
  const mutation = useMutation({
    mutationFn: () => setEnabled(plugin.author, plugin.name, true),
    onSettled: () => queryClient.invalidateQueries({ queryKey: pluginKeys.all }),
  });
  if (!(plugin.enabled && plugin.status === "failed") && !mutation.isPending && !mutation.error) return null;
  return (
    <>
      <button type="button" className="btn btn-small" disabled={mutation.isPending} onClick={() => mutation.mutate()}>
        {mutation.isPending ? t("enable.starting") : t("state.startAgain")}
      </button>
      <FormError error={mutation.error} />
    </>
  );
}
