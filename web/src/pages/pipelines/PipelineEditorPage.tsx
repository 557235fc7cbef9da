// /pipelines/:uuid: the pipeline and the metadata its form is generated from, then the editor.
import { useTranslation } from "react-i18next";
import { Link, useParams } from "react-router";
import { PageHeader } from "../../app/Layout";
import { ErrorState, Loading } from "../../components/PageState";
import { PipelineEditor } from "./PipelineEditor";
import { usePipeline, usePipelineMetadata } from "./queries";
import "./pipelines.css";

export default function PipelineEditorPage() {
  const { uuid = "" } = useParams();
  const { t } = useTranslation("pipelines");
  const pipeline = usePipeline(uuid);
  const metadata = usePipelineMetadata();
  const failed = pipeline.error ?? metadata.error;
  return (
    <>
      <PageHeader
        title={pipeline.data ? t("editor.title", { name: pipeline.data.name }) : t("editor.titleLoading")}
        actions={
          <>
            <Link className="btn" to="/pipelines">
              {t("editor.back")}
            </Link>
            {pipeline.data && (
              <Link className="btn" to={`/pipelines/${uuid}/chat`}>
                {t("editor.chat")}
              </Link>
            )}
          </>
        }
      >
        {pipeline.data && (
          <p className="muted">
            <span aria-hidden="true">{pipeline.data.emoji} </span>
            {pipeline.data.is_default && <span className="badge badge-enabled">{t("list.default")}</span>}{" "}
            <span className="mono">{uuid}</span>
          </p>
        )}
      </PageHeader>
      {failed ? (
        <ErrorState
          error={failed}
          onRetry={() => {
            void pipeline.refetch();
            void metadata.refetch();
          }}
        />
      ) : pipeline.data && metadata.data ? (
        <PipelineEditor key={uuid} pipeline={pipeline.data} metadata={metadata.data} />
      ) : (
        <Loading />
      )}
    </>
  );
}
