// /knowledge: the knowledge bases, each opening its own page (files, upload, try retrieval);
// create, edit and delete here. The engine is built into the server (docs/knowledge.md).
import { useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { useTranslation } from "react-i18next";
import { Link, useNavigate } from "react-router";
import { del } from "../../api/client";
import { PageHeader } from "../../app/Layout";
import { ConfirmDelete } from "../../components/Dialog";
import { Empty, QueryState } from "../../components/PageState";
import { localize } from "../../i18n";
import { BaseDialog } from "./BaseDialog";
import { knowledgeKeys, useBases } from "./queries";
import type { KnowledgeBase } from "./types";
import "./knowledge.css";

export default function KnowledgePage() {
  const { t, i18n } = useTranslation("knowledge");
  const { t: tc } = useTranslation();
  const client = useQueryClient();
  const navigate = useNavigate();
  const bases = useBases();
  const [creating, setCreating] = useState(false);
  const [editing, setEditing] = useState<KnowledgeBase | null>(null);
  const when = (iso: string) => new Date(iso).toLocaleString(i18n.language);

  return (
    <>
      <PageHeader
        title={t("title")}
        actions={
          <button type="button" className="btn btn-primary" onClick={() => setCreating(true)}>
            {t("new")}
          </button>
        }
      >
        <p className="muted">{t("intro")}</p>
      </PageHeader>
      <QueryState query={bases}>
        {(list) =>
          list.length === 0 ? (
            <Empty>{t("empty")}</Empty>
          ) : (
            <div className="table-wrap">
              <table className="table table-cards">
                <thead>
                  <tr>
                    <th scope="col">{t("col.name")}</th>
                    <th scope="col">{t("col.description")}</th>
                    <th scope="col">{t("col.engine")}</th>
                    <th scope="col">{t("col.updated")}</th>
                    <th scope="col">
                      <span className="visually-hidden">{t("col.actions")}</span>
                    </th>
                  </tr>
                </thead>
                <tbody>
                  {list.map((b) => (
                    <tr key={b.uuid}>
                      <td data-label={t("col.name")}>
                        <span aria-hidden="true">{b.emoji} </span>
                        <Link to={`/knowledge/${b.uuid}`}>
                          <strong>{b.name}</strong>
                        </Link>
                      </td>
                      <td className="kb-description" data-label={t("col.description")}>
                        {b.description || <span className="muted">—</span>}
                      </td>
                      <td data-label={t("col.engine")}>
                        {localize(b.knowledge_engine?.name, i18n.language) || b.knowledge_engine_plugin_id}
                      </td>
                      <td className="nowrap" data-label={t("col.updated")}>
                        <time dateTime={b.updated_at}>{when(b.updated_at)}</time>
                      </td>
                      <td>
                        <div className="row row-actions">
                          <button
                            type="button"
                            className="btn btn-small"
                            aria-label={t("editNamed", { name: b.name })}
                            onClick={() => setEditing(b)}
                          >
                            {tc("edit")}
                          </button>
                          <ConfirmDelete
                            what={b.name}
                            triggerLabel={t("deleteNamed", { name: b.name })}
                            detail={t("deleteDetail")}
                            onConfirm={async () => {
                              await del(`/knowledge/bases/${b.uuid}`);
                              await client.invalidateQueries({ queryKey: knowledgeKeys.all });
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
      <BaseDialog open={creating} onOpenChange={setCreating} onSaved={(uuid) => uuid && navigate(`/knowledge/${uuid}`)} />
      <BaseDialog open={editing !== null} onOpenChange={(o) => !o && setEditing(null)} base={editing ?? undefined} />
    </>
  );
}
