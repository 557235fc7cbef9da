// "Test connection" inside the server form: tests what the form holds, before it is saved. The
// body goes to POST /mcp/servers/_/test (LangBot's console does the same); the server fills in
// masked header values from the stored server of the body's name, so an edit can be tested
// without retyping its secrets.
import { useState } from "react";
import { useTranslation } from "react-i18next";
import { post } from "../../api/client";
import { TestRun } from "./McpTestDialog";

export function McpTestRunner({ body, disabled }: { body: () => unknown; disabled?: boolean }) {
  const { t } = useTranslation("mcp");
  const [run, setRun] = useState<{ key: number; body: unknown } | null>(null);
  return (
    <div className="mcp-form-test">
      <button
        type="button"
        className="btn btn-small"
        disabled={disabled}
        onClick={() => setRun((r) => ({ key: (r?.key ?? 0) + 1, body: body() }))}
      >
        {t("test.form")}
      </button>
      {run && (
        <TestRun
          key={run.key}
          label={t("test.formProgress")}
          start={() => post<{ task_id: number }>("/mcp/servers/_/test", run.body)}
        />
      )}
    </div>
  );
}
