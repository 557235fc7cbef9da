import { useQueryClient } from "@tanstack/react-query";
import { useTranslation } from "react-i18next";
import { Link } from "react-router";
import type { Task } from "../../api/types";
import { TaskProgress, useTask } from "../../components/TaskProgress";
import { pluginKeys } from "./api";
import type { TrackedTask } from "./useTrackedTasks";

function pluginIdOf(task: Task | undefined): string | null {
  const result = task?.runtime.result as { plugin_id?: unknown } | null | undefined;
  return typeof result?.plugin_id === "string" ? result.plugin_id : null;
}

// One install followed to its end: the bar while it runs, then a link to the new plugin or the
// reason it failed (TaskProgress shows runtime.exception).
export function InstallTask({ tracked, onDismiss }: { tracked: TrackedTask; onDismiss: () => void }) {
  const { t } = useTranslation("plugins");
  const queryClient = useQueryClient();
  const query = useTask(tracked.id);
  const task = query.data;
  const pluginId = pluginIdOf(task);
  // A task the server no longer knows (another data directory, say) can be dismissed too.
  const finished = (task?.runtime.done ?? false) || query.error != null;
  return (
    <li className="card install-task">
      <div className="row install-task-head">
        <strong>{t("install.installing", { subject: tracked.subject })}</strong>
        {finished && (
          <button
            type="button"
            className="btn btn-ghost btn-small"
            onClick={onDismiss}
            aria-label={t("install.dismiss", { subject: tracked.subject })}
          >
            ×
          </button>
        )}
      </div>
      <TaskProgress
        taskId={tracked.id}
        label={t("install.progressOf", { subject: tracked.subject })}
        onDone={() => queryClient.invalidateQueries({ queryKey: pluginKeys.all })}
      />
      {task?.status === "succeeded" && pluginId && (
        <p className="install-success">
          {t("install.succeeded")}{" "}
          <Link to={`/plugins/${pluginId}`}>{t("install.open", { plugin: pluginId })}</Link>
        </p>
      )}
    </li>
  );
}
