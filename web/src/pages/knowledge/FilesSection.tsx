// A base's documents: upload some (each one multipart to /files/documents, then added to the base,
// which starts its ingestion task, followed with a progress bar), the files with their status (a failed
// one with the reason), and delete. The list polls itself while a file is still being ingested.
import { useQueryClient } from "@tanstack/react-query";
import { useId, useRef, useState } from "react";
import { useTranslation } from "react-i18next";
import { api, del, post } from "../../api/client";
import { ConfirmDelete } from "../../components/Dialog";
import { Empty, FormError, QueryState } from "../../components/PageState";
import { StatusBadge } from "../../components/StatusBadge";
import { TaskProgress } from "../../components/TaskProgress";
import { formatBytes } from "./knowledge";
import { knowledgeKeys, useFiles } from "./queries";

// What the built-in parser reads (docs/knowledge.md, "Types").
const ACCEPT = ".txt,.text,.md,.markdown,.html,.htm,.pdf,.docx,text/plain,text/markdown,text/html,application/pdf";

export function FilesSection({ baseUuid }: { baseUuid: string }) {
  const { t, i18n } = useTranslation("knowledge");
  const client = useQueryClient();
  const files = useFiles(baseUuid);
  const inputId = useId();
  const input = useRef<HTMLInputElement>(null);
  const [chosen, setChosen] = useState<File[]>([]);
  const [uploading, setUploading] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const [ingesting, setIngesting] = useState<{ taskId: number; name: string }[]>([]);
  const refresh = () => client.invalidateQueries({ queryKey: knowledgeKeys.files(baseUuid) });
  const when = (iso: string) => new Date(iso).toLocaleString(i18n.language);

  const upload = async () => {
    if (!chosen.length) return;
    setUploading(true);
    setError(null);
    // One at a time: a refused file stops the rest, and what was added stays added.
    try {
      for (const file of chosen) {
        const form = new FormData();
        form.append("file", file, file.name);
        const { file_id } = await api<{ file_id: string }>("/files/documents", { method: "POST", body: form });
        const { task_id } = await post<{ task_id: number }>(`/knowledge/bases/${baseUuid}/files`, { file_id });
        setIngesting((list) => [...list, { taskId: task_id, name: file.name }]);
        setChosen((list) => list.filter((f) => f !== file));
        await refresh();
      }
      if (input.current) input.current.value = "";
    } catch (e) {
      setError(e);
    } finally {
      setUploading(false);
    }
  };

  return (
    <section className="card stack" aria-labelledby={`${inputId}-title`}>
      <h2 id={`${inputId}-title`}>{t("files.title")}</h2>
      <form
        className="kb-upload"
        onSubmit={(e) => {
          e.preventDefault();
          void upload();
        }}
      >
        <div className="field">
          <label htmlFor={inputId}>{t("files.document")}</label>
          <input
            ref={input}
            id={inputId}
            type="file"
            accept={ACCEPT}
            multiple
            aria-describedby={`${inputId}-help`}
            onChange={(e) => setChosen(Array.from(e.target.files ?? []))}
          />
          <p id={`${inputId}-help`} className="field-help">
            {t("files.types")}
          </p>
        </div>
        <button type="submit" className="btn btn-primary" disabled={!chosen.length || uploading}>
          {uploading ? t("files.uploading") : t("files.upload")}
        </button>
      </form>
      <FormError error={error} />
      {ingesting.map((job) => (
        <TaskProgress
          key={job.taskId}
          taskId={job.taskId}
          label={t("files.ingesting", { name: job.name })}
          onDone={(task) => {
            void refresh();
            // A finished file shows in the table; a failed task keeps its bar and reason here.
            if (task.status === "succeeded") setIngesting((list) => list.filter((j) => j.taskId !== job.taskId));
          }}
        />
      ))}
      <QueryState query={files}>
        {(list) =>
          list.length === 0 ? (
            <Empty>{t("files.empty")}</Empty>
          ) : (
            <div className="table-wrap">
              <table className="table table-cards">
                <thead>
                  <tr>
                    <th scope="col">{t("files.col.name")}</th>
                    <th scope="col">{t("files.col.status")}</th>
                    <th scope="col">{t("files.col.passages")}</th>
                    <th scope="col">{t("files.col.size")}</th>
                    <th scope="col">{t("files.col.added")}</th>
                    <th scope="col">
                      <span className="visually-hidden">{t("col.actions")}</span>
                    </th>
                  </tr>
                </thead>
                <tbody>
                  {list.map((f) => (
                    <tr key={f.uuid}>
                      <td className="kb-file-name" data-label={t("files.col.name")}>
                        <span className="mono">{f.file_name}</span>
                      </td>
                      <td data-label={t("files.col.status")}>
                        <StatusBadge status={f.status} />
                        {f.status === "failed" && f.error && <p className="field-error kb-file-error">{f.error}</p>}
                      </td>
                      <td data-label={t("files.col.passages")}>{f.chunk_count}</td>
                      <td className="nowrap" data-label={t("files.col.size")}>
                        {formatBytes(f.size, i18n.language)}
                      </td>
                      <td className="nowrap" data-label={t("files.col.added")}>
                        <time dateTime={f.created_at}>{when(f.created_at)}</time>
                      </td>
                      <td>
                        <div className="row row-actions">
                          <ConfirmDelete
                            what={f.file_name}
                            triggerLabel={t("files.deleteNamed", { name: f.file_name })}
                            detail={t("files.deleteDetail")}
                            onConfirm={async () => {
                              await del(`/knowledge/bases/${baseUuid}/files/${f.uuid}`);
                              await refresh();
                            }}
                          />
                        </div>
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          )
        }
      </QueryState>
    </section>
  );
}
