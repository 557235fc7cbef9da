// Follows a background task (/system/tasks/{id}) until it ends, with a progress bar. The bar is
// determinate when the task reports numbers (`done`/`total`, `downloaded_bytes`/`total_bytes`, or a
// knowledge file's `embedded`/`chunks`)
// and indeterminate otherwise; the current action is always shown in words.
import * as Progress from "@radix-ui/react-progress";
import { useQuery } from "@tanstack/react-query";
import { useEffect } from "react";
import { useTranslation } from "react-i18next";
import { getTask, taskKeys } from "../api/tasks";
import type { Task } from "../api/types";
import { ErrorState } from "./PageState";

export function taskFraction(task: Task | undefined): number | null {
  if (!task) return null;
  if (task.runtime.done) return 1;
  const m = task.task_context.metadata ?? {};
  const pairs: [unknown, unknown][] = [
    [m.done, m.total],
    [m.downloaded_bytes, m.total_bytes],
    [m.embedded, m.chunks],
  ];
  for (const [done, total] of pairs) {
    if (typeof done === "number" && typeof total === "number" && total > 0) return Math.min(1, done / total);
  }
  return null;
}

export function useTask(taskId: number | null | undefined) {
  return useQuery({
    queryKey: taskKeys.one(taskId),
    queryFn: () => getTask(taskId!),
    enabled: taskId != null,
    refetchInterval: (q) => (q.state.data?.runtime.done ? false : 400),
  });
}

export function TaskProgress({
  taskId,
  label,
  onDone,
}: {
  taskId: number;
  label?: string;
  onDone?: (task: Task) => void;
}) {
  const { t } = useTranslation();
  const query = useTask(taskId);
  const task = query.data;
  useEffect(() => {
    if (task?.runtime.done) onDone?.(task);
    // onDone is called once per finished task, not on every render.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [task?.runtime.done]);
  if (query.error) return <ErrorState error={query.error} onRetry={() => query.refetch()} />;
  const fraction = taskFraction(task);
  const name = label ?? task?.label ?? t("task.working");
  return (
    // A failed bar turns red rather than reading as a full, finished one.
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
