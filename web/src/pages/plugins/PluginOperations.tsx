import { useMutation, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { useTranslation } from "react-i18next";
import { useNavigate } from "react-router";
import { toast } from "sonner";
import type { Task } from "../../api/types";
import { ConfirmDelete } from "../../components/Dialog";
import { FormError } from "../../components/PageState";
import { TaskProgress } from "../../components/TaskProgress";
import { deletePlugin, pluginKeys, upgradePlugin } from "./api";
import type { Plugin } from "./types";

type Operation = { kind: "upgrade" | "delete"; taskId: number; failed?: boolean };

// Upgrade and delete run as server tasks: each is followed here to its end. A finished delete goes
// back to the list; a finished upgrade says which version runs now.
export function PluginOperations({
  plugin,
  label,
  onDeleting,
}: {
  plugin: Plugin;
  label: string;
  onDeleting: (deleting: boolean) => void;
}) {
  const { t } = useTranslation("plugins");
  const queryClient = useQueryClient();
  const navigate = useNavigate();
  const [operation, setOperation] = useState<Operation | null>(null);
  const [outcome, setOutcome] = useState<string | null>(null);
  const upgrade = useMutation({
    mutationFn: () => upgradePlugin(plugin.author, plugin.name),
    onMutate: () => setOutcome(null),
    onSuccess: (started) => setOperation({ kind: "upgrade", taskId: started.task_id }),
  });
  // A failed task stays on screen with its reason, but does not block trying again.
  const running = operation !== null && !operation.failed;

  function finished(task: Task) {
    const result = (task.runtime.result ?? {}) as { upgraded?: boolean; version?: string; previous_version?: string };
    if (operation?.kind === "delete") {
      if (task.status === "succeeded") {
        queryClient.removeQueries({ queryKey: pluginKeys.one(plugin.author, plugin.name) });
        // The list must not show it for a moment after the redirect, before its refresh lands.
        queryClient.setQueryData<Plugin[]>(pluginKeys.list, (list) => list?.filter((p) => p.plugin_id !== plugin.plugin_id));
        void queryClient.invalidateQueries({ queryKey: pluginKeys.list });
        toast.success(t("delete.done", { plugin: label }));
        navigate("/plugins");
        return;
      }
      onDeleting(false);
    } else if (task.status === "succeeded") {
      setOutcome(
        result.upgraded
          ? t("upgrade.done", { from: result.previous_version, to: result.version })
          : t("upgrade.latest", { version: result.version ?? plugin.version }),
      );
    }
    void queryClient.invalidateQueries({ queryKey: pluginKeys.all });
    // A success is summed up in `outcome`; a failure keeps its bar and reason on screen.
    if (task.status === "succeeded") setOperation(null);
    else setOperation((op) => op && { ...op, failed: true });
  }

  return (
    <div className="stack">
      <div className="row">
        <button
          type="button"
          className="btn"
          disabled={upgrade.isPending || running}
          aria-describedby={plugin.install_source === "local" ? "plugin-upgrade-help" : undefined}
          onClick={() => upgrade.mutate()}
        >
          {t("upgrade.button")}
        </button>
        <ConfirmDelete
          what={label}
          detail={t("delete.detail")}
          disabled={running}
          onConfirm={async () => {
            const started = await deletePlugin(plugin.author, plugin.name);
            onDeleting(true);
            setOutcome(null);
            setOperation({ kind: "delete", taskId: started.task_id });
          }}
        />
      </div>
      {plugin.install_source === "local" && (
        <p id="plugin-upgrade-help" className="field-help">
          {t("upgrade.fromMarketplace")}
        </p>
      )}
      <FormError error={upgrade.error} />
      {operation && (
        <TaskProgress
          key={operation.taskId}
          taskId={operation.taskId}
          label={operation.kind === "delete" ? t("delete.progress", { plugin: label }) : t("upgrade.progress", { plugin: label })}
          onDone={finished}
        />
      )}
      {outcome && (
        <p className="notice" role="status">
          {outcome}
        </p>
      )}
    </div>
  );
}
