// /knowledge/<uuid>: one knowledge base, its settings in brief, its files (upload, status,
// delete) and a box to try retrieval against it.
import { useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { useTranslation } from "react-i18next";
import { Link, useNavigate, useParams } from "react-router";
import { del } from "../../api/client";
import { PageHeader } from "../../app/Layout";
import { ConfirmDelete } from "../../components/Dialog";
import { QueryState } from "../../components/PageState";
import { BaseDialog } from "./BaseDialog";
import { FilesSection } from "./FilesSection";
import { knowledgeKeys, useBase, useEmbeddingModels } from "./queries";
import { RetrievalBox } from "./RetrievalBox";
import type { KnowledgeBase } from "./types";
import "./knowledge.css";

export default function KnowledgeBasePage() {
  const { uuid = "" } = useParams();
  const base = useBase(uuid);
  return <QueryState query={base}>{(b) => <BaseView base={b} />}</QueryState>;
}

function BaseView({ base }: { base: KnowledgeBase }) {
  const { t } = useTranslation("knowledge");
  const { t: tc } = useTranslation();
  const client = useQueryClient();
  const navigate = useNavigate();
  const models = useEmbeddingModels();
  const [editing, setEditing] = useState(false);
  const modelUuid = String(base.creation_settings?.embedding_model_uuid ?? "");
  const model = models.data?.find((m) => m.uuid === modelUuid);
  const r = base.retrieval_settings ?? {};

  return (
    <>
      <p>
        <Link to="/knowledge">{t("back")}</Link>
      </p>
      <PageHeader
        title={`${base.emoji ? `${base.emoji} ` : ""}${base.name}`}
        actions={
          <>
            <button type="button" className="btn" onClick={() => setEditing(true)}>
              {tc("edit")}
            </button>
            <ConfirmDelete
              what={base.name}
              triggerLabel={t("deleteNamed", { name: base.name })}
              detail={t("deleteDetail")}
              onConfirm={async () => {
                await del(`/knowledge/bases/${base.uuid}`);
                client.removeQueries({ queryKey: knowledgeKeys.base(base.uuid) });
                await client.invalidateQueries({ queryKey: knowledgeKeys.bases });
                navigate("/knowledge");
              }}
            />
          </>
        }
      >
        {base.description && <p className="muted">{base.description}</p>}
      </PageHeader>
      <dl className="kb-summary">
        <div>
          <dt>{t("summary.model")}</dt>
          <dd>{model?.name ?? (models.isPending ? "…" : t("model.missing", { uuid: modelUuid }))}</dd>
        </div>
        <div>
          <dt>{t("summary.search")}</dt>
          <dd>{String(r.search_type ?? "hybrid")}</dd>
        </div>
        <div>
          <dt>{t("summary.topK")}</dt>
          <dd>{String(r.top_k ?? 5)}</dd>
        </div>
        <div>
          <dt>{t("summary.threshold")}</dt>
          <dd>{String(r.score_threshold ?? 0.2)}</dd>
        </div>
      </dl>
      <FilesSection baseUuid={base.uuid} />
      <RetrievalBox baseUuid={base.uuid} />
      <BaseDialog open={editing} onOpenChange={setEditing} base={base} />
    </>
  );
}
