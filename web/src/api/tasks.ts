// Background tasks (plugin installs, upgrades, deletes; later knowledge ingestion): one set of
// query keys, so the dashboard, the System page and a progress bar read and refresh the same cache.
import { get } from "./client";
import type { Task } from "./types";

export const taskKeys = {
  list: ["tasks", "list"] as const,
  one: (id: number | null | undefined) => ["tasks", "one", id] as const,
};

export const listTasks = () => get<{ tasks: Task[] }>("/system/tasks").then((d) => d.tasks);
export const getTask = (id: number) => get<{ task: Task }>(`/system/tasks/${id}`).then((d) => d.task);
