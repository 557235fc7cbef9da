// Follows a plugin task (install, upgrade, delete) to its end. A local stand-in for the shared
// TaskProgress, whose useTask reads GET /system/tasks/{id} as the task itself while the server
// answers {task: {...}} (src/http/api/system_routes.cpp): once that is fixed, this file can go and
// its callers use components/TaskProgress directly. Same bar and words; a failed bar turns red
// rather than reading as a full, finished one.
import * as Progress from "@radix-ui/react-progress";
import { useQuery } from "@tanstack/react-query";
import { useEffect } from "react";
import { useTranslation } from "react-i18next";
import { get } from "../../api/client";
import type { Task } from "../../api/types";
import { ErrorState } from "../../components/PageState";
import { taskFraction } from "../../components/TaskProgress";

export function usePluginTask(taskId: number | null | undefined) {
  return useQuery({
    queryKey: ["plugin-task", taskId],
    queryFn: () => get<{ task: Task }>(`/system/tasks/${taskId}`).then((d) => d.task),
    enabled: taskId != null,
    refetchInterval: (q) => (q.state.data?.runtime.done ? false : 400),
  });
}

export function PluginTaskProgress({
  taskId,
  label,
  onDone,
}: {
  taskId: number;
  label?: string;
  onDone?: (task: Task) => void;
}) {
  const { t } = useTranslation();
  const query = usePluginTask(taskId);
  const task = query.data;
  useEffect(() => {
    if (task?.runtime.done) onDone?.(task);
    // onDone runs once per finished task, not on every render.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [task?.runtime.done]);
  if (query.error) return <ErrorState error={query.error} onRetry={() => query.refetch()} />;
  const fraction = taskFraction(task);
  const name = label ?? task?.label ?? t("task.working");
  return (
    <div className={task?.status === "failed" ? "task-progress task-failed" : "task-progress"}>
      <Progress.Root
        className={fraction === null ? "progress progress-indeterminate" : "progress"}
        value={fraction === null ? null : Math.round(fraction * 100)}
        aria-label={name}
      >
        <Progress.Indicator
          className="progress-indicator"
          style={{ transform: `translateX(-${100 - Math.round((fraction ?? 0.35) * 100)}%)` }}
        />
      </Progress.Root>
      <p className="muted" aria-live="polite">
        {task ? t(`status.${task.status}`, { defaultValue: task.status }) : t("loading")}
        {task?.task_context.current_action ? ` · ${task.task_context.current_action}` : ""}
      </p>
      {task?.status === "failed" && task.runtime.exception && (
        <p className="form-error" role="alert">
          {task.runtime.exception}
        </p>
      )}
    </div>
  );
}
