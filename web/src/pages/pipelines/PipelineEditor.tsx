// The pipeline editor's state: the draft, whether it differs from what the server has, saving
// (PUT /pipelines/{uuid} with name, description, emoji, config and the plugin binding) and where a
// refusal belongs: the field it names gets the message and its tab opens; nothing typed is lost.
import * as Tabs from "@radix-ui/react-tabs";
import { useQueryClient } from "@tanstack/react-query";
import { useEffect, useRef, useState, type FormEvent } from "react";
import { useTranslation } from "react-i18next";
import { Link, useSearchParams } from "react-router";
import { toast } from "sonner";
import { ApiError, put } from "../../api/client";
import type { Pipeline } from "../../api/types";
import { errorMessage } from "../../components/PageState";
import { localize } from "../../i18n";
import { BasicsCard } from "./BasicsCard";
import { bodyOf, draftOf, placeOfError, stageKey, type Draft, type ErrorPlace } from "./editorState";
import { McpBindings } from "./McpBindings";
import { PluginBindings } from "./PluginBindings";
import { pipelineKeys } from "./queries";
import { SectionPanel } from "./SectionPanel";
import type { PipelineMetadata } from "./types";
import { useLeaveGuard } from "./useLeaveGuard";

const pluginsTab = "plugins";

export function PipelineEditor({ pipeline, metadata }: { pipeline: Pipeline; metadata: PipelineMetadata }) {
  const { t, i18n } = useTranslation("pipelines");
  const { t: tc } = useTranslation();
  const client = useQueryClient();
  const [draft, setDraft] = useState<Draft>(() => draftOf(pipeline, metadata));
  const [baseline, setBaseline] = useState(() => JSON.stringify(draft));
  const dirty = JSON.stringify(draft) !== baseline;
  const [params, setParams] = useSearchParams();
  const tab = params.get("section") ?? "ai";
  const setTab = (section: string) => setParams({ section }, { replace: true });
  const [saving, setSaving] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const [place, setPlace] = useState<ErrorPlace | undefined>();
  const [focusNonce, setFocusNonce] = useState(0);
  const [openRunners, setOpenRunners] = useState<Set<string>>(new Set());
  const [serverChanged, setServerChanged] = useState(false);
  const loadedVersion = useRef(pipeline.updated_at);
  const justSaved = useRef(false);
  const leaveDialog = useLeaveGuard(dirty);

  // The server's copy changed (our save, another tab, the API): follow it unless that would throw
  // away edits, in which case say so and let the person choose.
  useEffect(() => {
    if (pipeline.updated_at === loadedVersion.current) return;
    loadedVersion.current = pipeline.updated_at;
    if (!dirty) {
      const fresh = draftOf(pipeline, metadata);
      setDraft(fresh);
      setBaseline(JSON.stringify(fresh));
    } else if (!justSaved.current) {
      setServerChanged(true);
    }
    justSaved.current = false;
  }, [pipeline]);

  // After a refusal: show the named field (scrolled into view and focused) on its tab. The tab
  // switch is a navigation that may commit after this render, so look again once it has.
  const focusPending = useRef(false);
  useEffect(() => {
    if (!place || !focusPending.current) return;
    const frame = requestAnimationFrame(() => {
      const scope =
        place.kind === "stage"
          ? document.querySelector(`[data-stage="${stageKey(place.section, place.stage)}"]`)
          : place.kind === "basic"
            ? document.querySelector('[data-stage="basics"]')
            : null;
      const name = place.kind === "stage" ? place.field : place.kind === "basic" ? place.field : undefined;
      const target = (name && scope?.querySelector(`[data-field="${CSS.escape(name)}"]`)) || scope;
      if (!target) return;
      focusPending.current = false;
      target.scrollIntoView({ block: "center" });
      (target.querySelector("input:not([disabled]), select, textarea") as HTMLElement | null)?.focus();
    });
    return () => cancelAnimationFrame(frame);
  }, [place, focusNonce, tab, openRunners]);

  const update = (patch: Partial<Draft>) => setDraft((d) => ({ ...d, ...patch }));

  async function save(e: FormEvent) {
    e.preventDefault();
    setSaving(true);
    setError(null);
    setPlace(undefined);
    const sent = JSON.stringify(draft);
    try {
      await put(`/pipelines/${pipeline.uuid}`, bodyOf(draft));
      setBaseline(sent);
      justSaved.current = true;
      setServerChanged(false);
      toast.success(t("editor.saved"));
      await client.invalidateQueries({ queryKey: pipelineKeys.all });
    } catch (err) {
      setError(err);
      const where = err instanceof ApiError && err.status === 400 ? placeOfError(err.message, metadata) : undefined;
      setPlace(where);
      if (where?.kind === "stage" || where?.kind === "section") setTab(where.section);
      if (where?.kind === "plugins") setTab(pluginsTab);
      if (where?.kind === "stage") setOpenRunners((s) => new Set(s).add(where.stage));
      focusPending.current = true;
      setFocusNonce((n) => n + 1);
    } finally {
      setSaving(false);
    }
  }

  const message = error ? errorMessage(error) : "";
  const fieldErrors: Record<string, Record<string, string>> = {};
  const stageErrors: Record<string, string> = {};
  if (place?.kind === "stage") {
    const key = stageKey(place.section, place.stage);
    if (place.field) fieldErrors[key] = { [place.field]: message };
    else stageErrors[key] = message;
  }
  const errorTab = place?.kind === "stage" || place?.kind === "section" ? place.section : place?.kind === "plugins" ? pluginsTab : "";

  return (
    <form onSubmit={save} noValidate className="pipeline-editor">
      {leaveDialog}
      <div className="editor-bar" role="region" aria-label={t("editor.saveBar")}>
        <span className={dirty ? "dirty-marker" : "muted"} role="status">
          {dirty ? t("editor.unsaved") : t("editor.allSaved")}
        </span>
        <div className="row">
          <button
            type="button"
            className="btn"
            disabled={!dirty || saving}
            onClick={() => {
              const fresh = draftOf(pipeline, metadata);
              setDraft(fresh);
              setBaseline(JSON.stringify(fresh));
              setError(null);
              setPlace(undefined);
              setServerChanged(false);
            }}
          >
            {t("editor.discard")}
          </button>
          <button type="submit" className="btn btn-primary" disabled={saving}>
            {saving ? tc("saving") : tc("save")}
          </button>
        </div>
        {error != null && (
          <p className="form-error editor-error" role="alert">
            {place ? t("editor.notSavedAt", { message }) : t("editor.notSaved", { message })}
          </p>
        )}
      </div>
      {serverChanged && (
        <div className="notice notice-warn row" role="status">
          <span>{t("editor.serverChanged")}</span>
          <button
            type="button"
            className="btn btn-small"
            onClick={() => {
              const fresh = draftOf(pipeline, metadata);
              setDraft(fresh);
              setBaseline(JSON.stringify(fresh));
              setServerChanged(false);
            }}
          >
            {t("editor.loadServer")}
          </button>
        </div>
      )}
      <BasicsCard
        draft={draft}
        onChange={update}
        errors={place?.kind === "basic" ? { [place.field]: message } : {}}
      />
      <Tabs.Root value={tab} onValueChange={setTab} className="editor-tabs">
        <Tabs.List className="tabs-list" aria-label={t("editor.sections")}>
          {metadata.configs.map((s) => (
            <Tabs.Trigger key={s.name} value={s.name}>
              {localize(s.label, i18n.language) || s.name}
              {errorTab === s.name && <ErrorDot />}
            </Tabs.Trigger>
          ))}
          <Tabs.Trigger value={pluginsTab}>
            {t("plugins.tab")}
            {errorTab === pluginsTab && <ErrorDot />}
          </Tabs.Trigger>
        </Tabs.List>
        {metadata.configs.map((s) => (
          <Tabs.Content key={s.name} value={s.name}>
            {place?.kind === "section" && place.section === s.name && (
              <p className="form-error" role="alert">
                {message}
              </p>
            )}
            <SectionPanel
              section={s}
              values={draft.config[s.name] ?? {}}
              onStageChange={(stage, value) =>
                setDraft((d) => ({ ...d, config: { ...d.config, [s.name]: { ...d.config[s.name], [stage]: value } } }))
              }
              fieldErrors={fieldErrors}
              stageErrors={stageErrors}
              openRunners={openRunners}
              onToggleRunner={(stage, open) =>
                setOpenRunners((prev) => {
                  const next = new Set(prev);
                  if (open) next.add(stage);
                  else next.delete(stage);
                  return next;
                })
              }
            />
          </Tabs.Content>
        ))}
        <Tabs.Content value={pluginsTab}>
          <PluginBindings
            value={draft.preferences}
            onChange={(preferences) => update({ preferences })}
            error={place?.kind === "plugins" ? message : undefined}
          />
          <McpBindings
            pipelineUuid={pipeline.uuid}
            value={draft.preferences}
            onChange={(preferences) => update({ preferences })}
          />
        </Tabs.Content>
      </Tabs.Root>
      <p className="muted editor-footer">
        <Link to={`/pipelines/${pipeline.uuid}/chat`}>{t("editor.openChat")}</Link>
      </p>
    </form>
  );
}

function ErrorDot() {
  const { t } = useTranslation("pipelines");
  return (
    <span className="tab-error" title={t("editor.tabHasError")}>
      {" "}
      ●<span className="visually-hidden">{t("editor.tabHasError")}</span>
    </span>
  );
}
