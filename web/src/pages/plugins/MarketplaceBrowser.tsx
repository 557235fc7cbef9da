import { keepPreviousData, useMutation, useQuery } from "@tanstack/react-query";
import { useId, useMemo, useState } from "react";
import { useTranslation } from "react-i18next";
import { Link } from "react-router";
import { get } from "../../api/client";
import type { SystemInfo } from "../../api/types";
import { Empty, ErrorState, FormError, Loading } from "../../components/PageState";
import { localize } from "../../i18n";
import { installFromMarketplace, listMarketplace, pluginKeys } from "./api";
import type { MarketplacePlugin, Plugin } from "./types";
import type { TrackedTask } from "./useTrackedTasks";

const PAGE_SIZE = 20;

// The marketplace's listing, page by page, as the server proxies it. The proxy passes only page and
// page_size on, so the search box filters the page on screen and says so.
export function MarketplaceBrowser({
  installed,
  onStarted,
}: {
  installed: Plugin[];
  onStarted: (task: TrackedTask) => void;
}) {
  const { t, i18n } = useTranslation("plugins");
  const id = useId();
  const [page, setPage] = useState(1);
  const [filter, setFilter] = useState("");
  const info = useQuery({ queryKey: ["system-info"], queryFn: () => get<SystemInfo>("/system/info") });
  const enabled = info.data?.enable_marketplace !== false;
  const listing = useQuery({
    queryKey: pluginKeys.marketplace(page, PAGE_SIZE),
    queryFn: () => listMarketplace(page, PAGE_SIZE),
    enabled: info.isSuccess && enabled,
    placeholderData: keepPreviousData,
    staleTime: 60_000,
  });
  const installedById = useMemo(() => new Map(installed.map((p) => [p.plugin_id, p])), [installed]);
  const shown = useMemo(() => {
    const words = filter.trim().toLowerCase();
    const all = listing.data?.plugins ?? [];
    if (!words) return all;
    return all.filter((p) =>
      [p.author, p.name, localize(p.label, i18n.language), localize(p.description, i18n.language)]
        .join(" ")
        .toLowerCase()
        .includes(words),
    );
  }, [listing.data, filter, i18n.language]);

  if (info.isPending) return <Loading />;
  if (info.error) return <ErrorState error={info.error} onRetry={() => info.refetch()} />;
  if (!enabled) return <p className="notice">{t("marketplace.disabled")}</p>;
  const total = listing.data?.total;
  const lastPage = total !== undefined ? Math.max(1, Math.ceil(total / PAGE_SIZE)) : undefined;
  const hasNext = lastPage !== undefined ? page < lastPage : (listing.data?.plugins.length ?? 0) === PAGE_SIZE;
  return (
    <div className="stack">
      <p className="muted">{t("marketplace.source", { url: info.data?.cloud_service_url ?? "" })}</p>
      <div className="field marketplace-filter">
        <label htmlFor={`${id}-filter`}>{t("marketplace.filter")}</label>
        <input id={`${id}-filter`} type="search" value={filter} onChange={(e) => setFilter(e.target.value)} />
        <p className="field-help">{t("marketplace.filterHelp")}</p>
      </div>
      {listing.isPending ? (
        <Loading />
      ) : listing.error ? (
        <ErrorState error={listing.error} onRetry={() => listing.refetch()} />
      ) : shown.length === 0 ? (
        <Empty>{filter ? t("marketplace.noMatch") : t("marketplace.empty")}</Empty>
      ) : (
        <ul className="marketplace-list" aria-busy={listing.isFetching || undefined}>
          {shown.map((p) => (
            <MarketplaceItem
              key={`${p.author}/${p.name}`}
              item={p}
              installed={installedById.get(`${p.author}/${p.name}`)}
              onStarted={onStarted}
            />
          ))}
        </ul>
      )}
      {(page > 1 || hasNext) && (
        <nav className="row plugins-pager" aria-label={t("marketplace.pages")}>
          <button type="button" className="btn" disabled={page <= 1} onClick={() => setPage((p) => p - 1)}>
            {t("marketplace.previous")}
          </button>
          <span className="muted">
            {lastPage !== undefined ? t("marketplace.pageOf", { page, pages: lastPage }) : t("marketplace.page", { page })}
          </span>
          <button type="button" className="btn" disabled={!hasNext} onClick={() => setPage((p) => p + 1)}>
            {t("marketplace.next")}
          </button>
        </nav>
      )}
    </div>
  );
}

function MarketplaceItem({
  item,
  installed,
  onStarted,
}: {
  item: MarketplacePlugin;
  installed?: Plugin;
  onStarted: (task: TrackedTask) => void;
}) {
  const { t, i18n } = useTranslation("plugins");
  const id = `${item.author}/${item.name}`;
  const label = localize(item.label, i18n.language) || item.name;
  const description = localize(item.description, i18n.language);
  const install = useMutation({
    mutationFn: () => installFromMarketplace(item.author, item.name),
    // The task takes over from here (shown above the tabs); the button is free again at once so a
    // refused install can be asked again, and a second click meets the server's own "running" answer.
    onSuccess: (started) => {
      onStarted({ id: started.task_id, subject: id });
      install.reset();
    },
  });
  return (
    <li className="card marketplace-item">
      <div className="marketplace-item-text">
        <h3>{label}</h3>
        <p className="muted mono">
          {id}
          {item.latest_version ? ` · v${item.latest_version}` : ""}
        </p>
        {description && <p>{description}</p>}
        <FormError error={install.error} />
      </div>
      <div className="marketplace-item-action">
        {installed ? (
          <Link className="btn" to={`/plugins/${id}`}>
            {item.latest_version && item.latest_version !== installed.version
              ? t("marketplace.installedOlder", { version: installed.version, latest: item.latest_version })
              : t("marketplace.installed", { version: installed.version })}
            <span className="visually-hidden">: {label}</span>
          </Link>
        ) : (
          <button
            type="button"
            className="btn btn-primary"
            disabled={install.isPending}
            onClick={() => install.mutate()}
          >
            {install.isPending ? t("marketplace.starting") : t("marketplace.install")}
            <span className="visually-hidden"> {label}</span>
          </button>
        )}
      </div>
    </li>
  );
}
