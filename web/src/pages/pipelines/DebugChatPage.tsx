// /pipelines/:uuid/chat: talk to a pipeline as a person or in a group, without a bot. Each mode
// keeps its own connection and history; a mode stays connected once opened, so switching back and
// forth loses nothing.
import * as Tabs from "@radix-ui/react-tabs";
import { useState } from "react";
import { useTranslation } from "react-i18next";
import { Link, useParams } from "react-router";
import { PageHeader } from "../../app/Layout";
import { ErrorState, Loading } from "../../components/PageState";
import { ChatPanel } from "./ChatPanel";
import { usePipeline } from "./queries";
import type { SessionType } from "./types";
import "./pipelines.css";

const modes: SessionType[] = ["person", "group"];

export default function DebugChatPage() {
  const { uuid = "" } = useParams();
  const { t } = useTranslation("pipelines");
  const pipeline = usePipeline(uuid);
  const [mode, setMode] = useState<SessionType>("person");
  const [opened, setOpened] = useState<Set<SessionType>>(new Set(["person"]));
  return (
    <>
      <PageHeader
        title={pipeline.data ? t("chat.title", { name: pipeline.data.name }) : t("chat.titleLoading")}
        actions={
          <>
            <Link className="btn" to="/pipelines">
              {t("editor.back")}
            </Link>
            <Link className="btn" to={`/pipelines/${uuid}`}>
              {t("chat.edit")}
            </Link>
          </>
        }
      />
      {pipeline.isPending ? (
        <Loading />
      ) : pipeline.error ? (
        <ErrorState error={pipeline.error} onRetry={() => pipeline.refetch()} />
      ) : (
        <Tabs.Root
          value={mode}
          onValueChange={(v) => {
            setMode(v as SessionType);
            setOpened((s) => new Set(s).add(v as SessionType));
          }}
        >
          <Tabs.List className="tabs-list" aria-label={t("chat.modeLabel")}>
            {modes.map((m) => (
              <Tabs.Trigger key={m} value={m}>
                {t(`chat.mode.${m}`)}
              </Tabs.Trigger>
            ))}
          </Tabs.List>
          {modes.map((m) => (
            <Tabs.Content key={m} value={m} forceMount className="chat-tab" hidden={mode !== m}>
              {opened.has(m) && <ChatPanel pipelineUuid={uuid} sessionType={m} />}
            </Tabs.Content>
          ))}
        </Tabs.Root>
      )}
    </>
  );
}
