// /models: the providers that answer model calls, and the LLM and embedding models on them.
import { useTranslation } from "react-i18next";
import { PageHeader } from "../../app/Layout";
import { ModelsSection } from "./ModelsSection";
import { ProvidersSection } from "./ProvidersSection";
import "./models.css";

export default function ModelsPage() {
  const { t } = useTranslation("models");
  return (
    <>
      <PageHeader title={t("title")}>
        <p className="muted">{t("intro")}</p>
      </PageHeader>
      <ProvidersSection />
      <ModelsSection />
    </>
  );
}
