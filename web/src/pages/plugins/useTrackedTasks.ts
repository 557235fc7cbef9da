// The plugin operations this browser tab started and is following. Kept in sessionStorage so that
// an install still shows its progress and outcome after a visit to another page (the server keeps
// running it either way).
import { useCallback, useState } from "react";

export interface TrackedTask {
  id: number;
  // What the person asked for, in their words ("greeter.zip", "alice/echo"), until the task has a label.
  subject: string;
}

const KEY = "switchboard.plugins.tasks";

function load(): TrackedTask[] {
  try {
    const parsed: unknown = JSON.parse(sessionStorage.getItem(KEY) ?? "[]");
    return Array.isArray(parsed) ? parsed.filter((t) => typeof t?.id === "number") : [];
  } catch {
    return [];
  }
}

function store(tasks: TrackedTask[]) {
  try {
    sessionStorage.setItem(KEY, JSON.stringify(tasks));
  } catch {
    // Private mode without storage: the list still works for this page's life.
  }
}

export function useTrackedTasks() {
  const [tasks, setTasks] = useState<TrackedTask[]>(load);
  const update = useCallback((change: (tasks: TrackedTask[]) => TrackedTask[]) => {
    setTasks((current) => {
      const next = change(current);
      store(next);
      return next;
    });
  }, []);
  const add = useCallback((task: TrackedTask) => update((ts) => [task, ...ts.filter((t) => t.id !== task.id)]), [update]);
  const dismiss = useCallback((id: number) => update((ts) => ts.filter((t) => t.id !== id)), [update]);
  return { tasks, add, dismiss };
}
