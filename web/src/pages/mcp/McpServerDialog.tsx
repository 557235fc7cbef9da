// Creating or editing an MCP server: name, transport (mode) and that mode's extra_args. Header and
// environment values arrive masked and are sent back as they are unless retyped, so the server
// keeps the stored secret (docs/mcp.md "Secrets"). The server's refusal is shown in its words.
import { useState } from "react";
import { useTranslation } from "react-i18next";
import { post, put } from "../../api/client";
import { Dialog } from "../../components/Dialog";
import { Field } from "../../components/Field";
import { FormError } from "../../components/PageState";
import { bodyOf, formOf, modes, type McpForm } from "./form";
import { McpTestRunner } from "./McpTestRunner";
import { PairsField } from "./PairsField";
import type { McpServer } from "./types";

export function McpServerDialog({
  open,
  onOpenChange,
  server,
  onSaved,
}: {
  open: boolean;
  onOpenChange: (open: boolean) => void;
  server?: McpServer; // editing when given
  onSaved: () => void;
}) {
  const { t } = useTranslation("mcp");
  return (
    <Dialog
      open={open}
      onOpenChange={onOpenChange}
      title={server ? t("dialog.editTitle", { name: server.name }) : t("dialog.newTitle")}
      wide
    >
      {open && <McpServerForm server={server} onSaved={onSaved} onCancel={() => onOpenChange(false)} />}
    </Dialog>
  );
}

function McpServerForm({ server, onSaved, onCancel }: { server?: McpServer; onSaved: () => void; onCancel: () => void }) {
  const { t } = useTranslation("mcp");
  const { t: tc } = useTranslation();
  const [form, setForm] = useState<McpForm>(() => formOf(server));
  const [error, setError] = useState<unknown>(null);
  const [missing, setMissing] = useState<Set<string>>(new Set());
  const [busy, setBusy] = useState(false);
  const set = (p: Partial<McpForm>) => setForm((f) => ({ ...f, ...p }));
  const http = form.mode !== "stdio";

  const submit = async (e: React.FormEvent) => {
    e.preventDefault();
    const needed = new Set<string>();
    if (form.name.trim() === "") needed.add("name");
    if (http && form.url.trim() === "") needed.add("url");
    if (!http && form.command.trim() === "") needed.add("command");
    setMissing(needed);
    if (needed.size) return;
    setBusy(true);
    setError(null);
    try {
      const body = bodyOf(form, server);
      if (server) await put(`/mcp/servers/${encodeURIComponent(server.name)}`, body);
      else await post("/mcp/servers", body);
      onSaved();
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };

  return (
    <form noValidate onSubmit={submit}>
      <Field id="mcp-name" label={t("form.name")} required help={t("form.nameHelp")} error={missing.has("name") ? t("form.required") : undefined}>
        {(p) => <input {...p} autoComplete="off" value={form.name} onChange={(e) => set({ name: e.target.value })} />}
      </Field>
      <Field id="mcp-mode" label={t("form.mode")} help={t(`form.modeHelp.${form.mode}`)}>
        {(p) => (
          <select {...p} value={form.mode} onChange={(e) => set({ mode: e.target.value as McpForm["mode"] })}>
            {modes.map((m) => (
              <option key={m} value={m}>
                {t(`mode.${m}`)}
              </option>
            ))}
          </select>
        )}
      </Field>
      {http ? (
        <>
          <Field id="mcp-url" label={t("form.url")} required error={missing.has("url") ? t("form.required") : undefined}>
            {(p) => (
              <input
                {...p}
                type="url"
                autoComplete="off"
                placeholder={form.mode === "sse" ? "https://example.com/sse" : "https://example.com/mcp"}
                value={form.url}
                onChange={(e) => set({ url: e.target.value })}
              />
            )}
          </Field>
          <PairsField
            id="mcp-headers"
            legend={t("form.headers")}
            help={t("form.secretHelp")}
            keyLabel={t("form.headerName")}
            valueLabel={t("form.headerValue")}
            addLabel={t("form.addHeader")}
            pairs={form.headers}
            onChange={(headers) => set({ headers })}
          />
          <div className="mcp-numbers">
            <Field id="mcp-timeout" label={t("form.timeout")} help={t("form.timeoutHelp")}>
              {(p) => (
                <input
                  {...p}
                  type="number"
                  min={1}
                  max={600}
                  inputMode="numeric"
                  value={form.timeout}
                  onChange={(e) => set({ timeout: e.target.value })}
                />
              )}
            </Field>
            {form.mode === "sse" && (
              <Field id="mcp-sse-read" label={t("form.sseReadTimeout")} help={t("form.sseReadTimeoutHelp")}>
                {(p) => (
                  <input
                    {...p}
                    type="number"
                    min={1}
                    max={600}
                    inputMode="numeric"
                    value={form.sseReadTimeout}
                    onChange={(e) => set({ sseReadTimeout: e.target.value })}
                  />
                )}
              </Field>
            )}
          </div>
        </>
      ) : (
        <>
          <Field id="mcp-command" label={t("form.command")} required help={t("form.commandHelp")} error={missing.has("command") ? t("form.required") : undefined}>
            {(p) => (
              <input {...p} autoComplete="off" className="mono" value={form.command} onChange={(e) => set({ command: e.target.value })} />
            )}
          </Field>
          <Field id="mcp-args" label={t("form.args")} help={tc("form.onePerLine")}>
            {(p) => <textarea {...p} rows={3} className="mono" value={form.args} onChange={(e) => set({ args: e.target.value })} />}
          </Field>
          <PairsField
            id="mcp-env"
            legend={t("form.env")}
            help={t("form.secretHelp")}
            keyLabel={t("form.envName")}
            valueLabel={t("form.envValue")}
            addLabel={t("form.addEnv")}
            pairs={form.env}
            onChange={(env) => set({ env })}
          />
        </>
      )}
      {form.mode !== "http" && (
        <p className="notice mcp-form-note" role="note">
          {t("form.notYet")}
        </p>
      )}
      {!server && (
        <Field id="mcp-enable" label={t("form.enable")} checkbox>
          {(p) => <input {...p} type="checkbox" checked={form.enable} onChange={(e) => set({ enable: e.target.checked })} />}
        </Field>
      )}
      <FormError error={error} />
      <McpTestRunner
        body={() => bodyOf(form, server)}
        disabled={form.mode === "stdio" ? form.command.trim() === "" : form.url.trim() === ""}
      />
      <div className="form-actions">
        <button type="button" className="btn" onClick={onCancel}>
          {tc("cancel")}
        </button>
        <button type="submit" className="btn btn-primary" disabled={busy}>
          {busy ? tc("saving") : tc("save")}
        </button>
      </div>
    </form>
  );
}
