// Background work (plugin installs, upgrades, ...) from GET /system/tasks, newest first. Polled
// quickly while something runs, slowly otherwise; a failed task shows its exception in full.
import { useQuery } from "@tanstack/react-query";
import { useState } from "react";
import { useTranslation } from "react-i18next";
import { listTasks, taskKeys } from "../../api/tasks";
import { Empty, QueryState } from "../../components/PageState";
import { StatusBadge } from "../../components/StatusBadge";

const pageSize = 25;
const statuses = ["pending", "running", "succeeded", "failed", "cancelled"] as const;

export function TasksCard() {
  const { t, i18n } = useTranslation("system");
  const { t: tc } = useTranslation();
  const [status, setStatus] = useState("");
  const [limit, setLimit] = useState(pageSize);
  const tasks = useQuery({
    queryKey: taskKeys.list,
    queryFn: listTasks,
    refetchInterval: (q) => (q.state.data?.some((task) => !task.runtime.done) ? 2_000 : 15_000),
  });
  const when = (iso: string) => new Date(iso).toLocaleString(i18n.language);
  return (
    <section className="card" aria-labelledby="tasks-title">
      <div className="system-head">
        <h2 id="tasks-title">{t("tasks.title")}</h2>
        <label className="inline-field" htmlFor="tasks-status">
          {t("tasks.status")}
          <select id="tasks-status" value={status} onChange={(e) => setStatus(e.target.value)}>
            <option value="">{t("tasks.all")}</option>
            {statuses.map((s) => (
              <option key={s} value={s}>
                {tc(`status.${s}`)}
              </option>
            ))}
          </select>
        </label>
      </div>
      <QueryState query={tasks}>
        {(all) => {
          const list = status ? all.filter((task) => task.status === status) : all;
          if (list.length === 0) return <Empty>{all.length === 0 ? t("tasks.empty") : t("tasks.noneWithStatus")}</Empty>;
          return (
            <>
              <div className="table-wrap">
                <table className="table table-cards">
                  <thead>
                    <tr>
                      <th scope="col">{t("tasks.status")}</th>
                      <th scope="col">{t("tasks.kind")}</th>
                      <th scope="col">{t("tasks.label")}</th>
                      <th scope="col">{t("tasks.updated")}</th>
                    </tr>
                  </thead>
                  <tbody>
                    {list.slice(0, limit).map((task) => (
                      <tr key={task.id}>
                        <td data-label={t("tasks.status")}>
                          <StatusBadge status={task.status} />
                        </td>
                        <td data-label={t("tasks.kind")}>
                          <span className="mono nowrap">{task.kind || task.task_type}</span>
                          {task.kind && task.task_type && task.kind !== task.task_type && (
                            <div className="muted system-small">{task.task_type}</div>
                          )}
                        </td>
                        <td className="system-task-label" data-label={t("tasks.label")}>
                          {task.label || task.name}
                          {!task.runtime.done && task.task_context.current_action && (
                            <div className="muted system-small">{task.task_context.current_action}</div>
                          )}
                          {task.runtime.exception && <pre className="system-exception">{task.runtime.exception}</pre>}
                        </td>
                        <td className="nowrap" data-label={t("tasks.updated")}>
                          <time dateTime={task.updated_at}>{when(task.updated_at)}</time>
                        </td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </div>
              {list.length > limit && (
                <div className="form-actions">
                  <button type="button" className="btn" onClick={() => setLimit((l) => l + pageSize)}>
                    {t("tasks.more", { count: Math.min(pageSize, list.length - limit), total: list.length })}
                  </button>
                </div>
              )}
            </>
          );
        }}
      </QueryState>
    </section>
  );
}
