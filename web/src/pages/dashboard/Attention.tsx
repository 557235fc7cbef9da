// What needs a person: plugins that should run and do not (or keep restarting), and background
// tasks that failed or are still running. Each card loads on its own and fails on its own.
import { useQuery } from "@tanstack/react-query";
import { useTranslation } from "react-i18next";
import { Link } from "react-router";
import { taskKeys, listTasks } from "../../api/tasks";
import { listPlugins, pluginKeys } from "../plugins/api";
import type { Plugin } from "../plugins/types";
import { ErrorState, Loading } from "../../components/PageState";
import { StatusBadge } from "../../components/StatusBadge";
import { localize } from "../../i18n";

// The fields of a plugin this card reads.
type PluginSummary = Pick<Plugin, "author" | "name" | "plugin_id" | "enabled" | "label" | "status" | "error">;

const SHOWN = 10;

// A disabled plugin that is stopped is as it should be; anything else short of running is not.
export function needsAttention(p: PluginSummary): boolean {
  if (p.status === "failed" || p.status === "restarting" || p.error) return true;
  return p.enabled && p.status !== "running";
}

export function PluginsAttention() {
  const { t, i18n } = useTranslation("dashboard");
  const plugins = useQuery({
    // The plugins page's own query: a change made there shows here at once, and one fetch serves both.
    queryKey: pluginKeys.list,
    queryFn: listPlugins,
    refetchInterval: 10_000,
  });
  return (
    <section className="card" aria-labelledby="dash-plugins">
      <h2 id="dash-plugins">{t("plugins.title")}</h2>
      {plugins.isPending ? (
        <Loading />
      ) : plugins.error && !plugins.data ? (
        <ErrorState error={plugins.error} onRetry={() => plugins.refetch()} />
      ) : (
        (() => {
          const troubled = plugins.data!.filter(needsAttention);
          if (troubled.length === 0) {
            return <p className="muted">{t("plugins.allGood", { count: plugins.data!.length })}</p>;
          }
          return (
            <ul className="attention-list">
              {troubled.slice(0, SHOWN).map((p) => (
                <li key={p.plugin_id}>
                  <div className="row">
                    <Link to={`/plugins/${encodeURIComponent(p.author)}/${encodeURIComponent(p.name)}`}>
                      {localize(p.label ?? undefined, i18n.language) || p.plugin_id}
                    </Link>
                    <StatusBadge status={p.status} />
                    {!p.enabled && <span className="muted">{t("plugins.disabled")}</span>}
                  </div>
                  {p.error && <p className="attention-error">{p.error}</p>}
                </li>
              ))}
              {troubled.length > SHOWN && (
                <li>
                  <Link to="/plugins">{t("more", { count: troubled.length - SHOWN })}</Link>
                </li>
              )}
            </ul>
          );
        })()
      )}
    </section>
  );
}

export function TasksAttention() {
  const { t } = useTranslation("dashboard");
  const tasks = useQuery({
    queryKey: taskKeys.list,
    queryFn: listTasks,
    refetchInterval: 5_000,
  });
  return (
    <section className="card" aria-labelledby="dash-tasks">
      <h2 id="dash-tasks">{t("tasks.title")}</h2>
      {tasks.isPending ? (
        <Loading />
      ) : tasks.error && !tasks.data ? (
        <ErrorState error={tasks.error} onRetry={() => tasks.refetch()} />
      ) : (
        (() => {
          const open = tasks
            .data!.filter((x) => x.status === "failed" || x.status === "running" || x.status === "pending")
            .sort((a, b) => (a.updated_at < b.updated_at ? 1 : -1));
          if (open.length === 0) return <p className="muted">{t("tasks.allGood", { count: tasks.data!.length })}</p>;
          return (
            <ul className="attention-list">
              {open.slice(0, SHOWN).map((task) => (
                <li key={task.id}>
                  <div className="row">
                    <strong>{task.label || task.name}</strong>
                    <StatusBadge status={task.status} />
                    <time className="muted" dateTime={task.updated_at}>
                      {new Date(task.updated_at).toLocaleString()}
                    </time>
                  </div>
                  {task.status === "failed" && task.runtime.exception && (
                    <p className="attention-error">{task.runtime.exception}</p>
                  )}
                  {task.status !== "failed" && task.task_context.current_action && (
                    <p className="muted attention-detail">{task.task_context.current_action}</p>
                  )}
                </li>
              ))}
              {open.length > SHOWN && <li className="muted">{t("moreTasks", { count: open.length - SHOWN })}</li>}
            </ul>
          );
        })()
      )}
    </section>
  );
}
