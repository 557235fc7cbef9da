// The connection test (a background task): of a stored server (POST /mcp/servers/{name}/test with
// no body) or of the form's configuration before it is saved (POST /mcp/servers/_/test with the
// form, masked values filled in by the server from the stored server of that name). Shows the
// task's progress, then the tools it listed or why it failed.
import { useEffect, useState } from "react";
import { useTranslation } from "react-i18next";
import { post } from "../../api/client";
import type { Task } from "../../api/types";
import { Dialog } from "../../components/Dialog";
import { FormError } from "../../components/PageState";
import { TaskProgress } from "../../components/TaskProgress";
import { ToolList } from "./ToolList";
import type { McpServer, McpTestResult } from "./types";

export function McpTestDialog({ server, onClose }: { server: McpServer | null; onClose: () => void }) {
  const { t } = useTranslation("mcp");
  return (
    <Dialog open={server !== null} onOpenChange={(o) => !o && onClose()} title={t("test.title", { name: server?.name ?? "" })}>
      {server && (
        <TestRun
          label={t("test.progress", { name: server.name })}
          start={() => post<{ task_id: number }>(`/mcp/servers/${encodeURIComponent(server.name)}/test`)}
        />
      )}
    </Dialog>
  );
}

// Starts the test once, when mounted (give it a new key to test again).
export function TestRun({ label, start }: { label: string; start: () => Promise<{ task_id: number }> }) {
  const { t } = useTranslation("mcp");
  const [taskId, setTaskId] = useState<number | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [result, setResult] = useState<McpTestResult | null>(null);
  useEffect(() => {
    let live = true;
    start()
      .then((d) => live && setTaskId(d.task_id))
      .catch((e) => live && setError(e));
    return () => {
      live = false;
    };
    // `start` is called once per mount; a new test is a new key.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, []);
  const done = (task: Task) => {
    if (task.status === "succeeded") setResult((task.runtime.result ?? {}) as McpTestResult);
  };
  return (
    <div className="mcp-test">
      <FormError error={error} />
      {taskId !== null && <TaskProgress taskId={taskId} label={label} onDone={done} />}
      {result && (
        <>
          <p role="status">
            {t("test.ok", { count: result.tool_count ?? result.tools?.length ?? 0, version: result.protocol_version ?? "?" })}
          </p>
          <ToolList tools={result.tools ?? []} />
        </>
      )}
    </div>
  );
}
