import { useQuery } from "@tanstack/react-query";
import { useTranslation } from "react-i18next";
import { ApiError } from "../../api/client";
import { ErrorState, Loading } from "../../components/PageState";
import { getReadme, pluginKeys } from "./api";
import { Markdown } from "./Markdown";

// The package's README, read again when the version changes (an upgrade brings its own).
export function PluginReadme({ author, name, version }: { author: string; name: string; version: string }) {
  const { t } = useTranslation("plugins");
  const query = useQuery({
    queryKey: pluginKeys.readme(author, name, version),
    queryFn: () => getReadme(author, name),
    staleTime: Infinity,
  });
  let body;
  if (query.isPending) body = <Loading />;
  else if (query.error instanceof ApiError && query.error.status === 404) body = <p className="muted">{t("readme.none")}</p>;
  else if (query.error) body = <ErrorState error={query.error} onRetry={() => query.refetch()} />;
  else body = <Markdown source={query.data ?? ""} />;
  return (
    <section className="card" aria-labelledby="plugin-readme">
      <h2 id="plugin-readme">{t("readme.title")}</h2>
      {body}
    </section>
  );
}
