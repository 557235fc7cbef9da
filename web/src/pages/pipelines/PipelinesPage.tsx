// The pipelines list: what each pipeline is, which one new bots get, and the ways in (editor, debug
// chat), copy and delete. A delete the server refuses (the default pipeline, one bots use) shows
// its reason in the confirmation dialog.
import { useMutation, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { useTranslation } from "react-i18next";
import { Link } from "react-router";
import { toast } from "sonner";
import { del, post } from "../../api/client";
import type { Pipeline } from "../../api/types";
import { PageHeader } from "../../app/Layout";
import { ConfirmDelete } from "../../components/Dialog";
import { Empty, errorMessage, QueryState } from "../../components/PageState";
import { NewPipelineDialog } from "./NewPipelineDialog";
import { pipelineKeys, usePipelines } from "./queries";
import "./pipelines.css";

export default function PipelinesPage() {
  const { t } = useTranslation("pipelines");
  const query = usePipelines();
  const [creating, setCreating] = useState(false);
  return (
    <>
      <PageHeader
        title={t("list.title")}
        actions={
          <button type="button" className="btn btn-primary" onClick={() => setCreating(true)}>
            {t("list.new")}
          </button>
        }
      >
        <p className="muted">{t("list.intro")}</p>
      </PageHeader>
      <QueryState query={query}>
        {(pipelines) =>
          pipelines.length === 0 ? (
            <Empty
              action={
                <button type="button" className="btn btn-primary" onClick={() => setCreating(true)}>
                  {t("list.new")}
                </button>
              }
            >
              {t("list.empty")}
            </Empty>
          ) : (
            <PipelineTable pipelines={pipelines} />
          )
        }
      </QueryState>
      <NewPipelineDialog open={creating} onOpenChange={setCreating} />
    </>
  );
}

function PipelineTable({ pipelines }: { pipelines: Pipeline[] }) {
  const { t, i18n } = useTranslation("pipelines");
  const client = useQueryClient();
  const copy = useMutation({
    mutationFn: (p: Pipeline) => post<{ uuid: string }>(`/pipelines/${p.uuid}/copy`),
    onSuccess: (_, p) => {
      toast.success(t("list.copied", { name: p.name }));
      return client.invalidateQueries({ queryKey: pipelineKeys.all });
    },
    onError: (e) => toast.error(errorMessage(e)),
  });
  return (
    <div className="table-wrap">
      <table className="table pipelines-table">
        <thead>
          <tr>
            <th scope="col">{t("list.name")}</th>
            <th scope="col">{t("list.description")}</th>
            <th scope="col">{t("list.updated")}</th>
            <th scope="col">
              <span className="visually-hidden">{t("list.actions")}</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {pipelines.map((p) => (
            <tr key={p.uuid}>
              <td>
                <span className="pipeline-name">
                  <span aria-hidden="true" className="pipeline-emoji">
                    {p.emoji}
                  </span>
                  <Link to={`/pipelines/${p.uuid}`} id={`pipeline-${p.uuid}`}>
                    {p.name}
                  </Link>
                  {p.is_default && <span className="badge badge-enabled">{t("list.default")}</span>}
                </span>
              </td>
              <td className="muted" data-label={t("list.description")}>
                {p.description}
              </td>
              <td className="nowrap" data-label={t("list.updated")}>
                <time dateTime={p.updated_at}>{new Date(p.updated_at).toLocaleString(i18n.language)}</time>
              </td>
              <td>
                <div className="row row-nowrap">
                  {/* Named "Debug chat" and described by the row's name, so the pipeline's own link is the
                      only link whose name contains the pipeline's name. */}
                  <Link className="btn" to={`/pipelines/${p.uuid}/chat`} aria-describedby={`pipeline-${p.uuid}`}>
                    {t("list.chat")}
                  </Link>
                  <button
                    type="button"
                    className="btn"
                    disabled={copy.isPending && copy.variables?.uuid === p.uuid}
                    aria-label={t("list.copyOf", { name: p.name })}
                    onClick={() => copy.mutate(p)}
                  >
                    {t("list.copy")}
                  </button>
                  <ConfirmDelete
                    what={p.name}
                    triggerLabel={t("list.deleteOf", { name: p.name })}
                    detail={p.is_default ? t("list.deleteDefault") : undefined}
                    onConfirm={async () => {
                      await del(`/pipelines/${p.uuid}`);
                      toast.success(t("list.deleted", { name: p.name }));
                      await client.invalidateQueries({ queryKey: pipelineKeys.all });
                    }}
                  />
                </div>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
