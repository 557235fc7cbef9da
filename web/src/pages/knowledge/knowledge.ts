// The knowledge pages' rules that do not need a page: what a save sends, how a retrieval result
// reads, when a change of embedding model needs the files re-embedded. Unit-tested.
import { defaultsOf, isVisible, type FormValue } from "../../components/SchemaForm";
import type { SchemaItem } from "../../api/types";
import type { KnowledgeBase, KnowledgeEngine, RetrievalResult } from "./types";

export const BUILTIN_ENGINE = "switchboard/builtin";

export interface BaseDraft {
  name: string;
  description: string;
  emoji: string;
  engine: string;
  creation: FormValue;
  retrieval: FormValue;
  reembed: boolean;
}

// A new base starts from the engine's defaults; an existing one from what it stores, with the
// defaults of any field it does not have yet.
export function draftOf(engine: KnowledgeEngine | undefined, base?: KnowledgeBase): BaseDraft {
  const creationItems = engine?.creation_schema ?? [];
  const retrievalItems = engine?.retrieval_schema ?? [];
  return {
    name: base?.name ?? "",
    description: base?.description ?? "",
    emoji: base?.emoji ?? "📚",
    engine: base?.knowledge_engine_plugin_id ?? engine?.plugin_id ?? BUILTIN_ENGINE,
    creation: { ...defaultsOf(creationItems), ...(base?.creation_settings ?? {}) },
    retrieval: { ...defaultsOf(retrievalItems), ...(base?.retrieval_settings ?? {}) },
    reembed: false,
  };
}

// Only the fields the form shows are sent (a parent_child size is not sent for a chunk index), and
// an emptied number is left out so that the server's default applies.
export function visibleSettings(items: SchemaItem[], value: FormValue): FormValue {
  const out: FormValue = {};
  for (const item of items) {
    if (!isVisible(item, value)) continue;
    const v = value[item.name];
    if (v === undefined || v === null || v === "") continue;
    out[item.name] = v;
  }
  return out;
}

export function requestBody(draft: BaseDraft, engine: KnowledgeEngine | undefined, existing?: KnowledgeBase) {
  const body: Record<string, unknown> = {
    name: draft.name.trim(),
    description: draft.description.trim(),
    emoji: draft.emoji.trim() || "📚",
    creation_settings: visibleSettings(engine?.creation_schema ?? [], draft.creation),
    retrieval_settings: visibleSettings(engine?.retrieval_schema ?? [], draft.retrieval),
  };
  if (!existing) body.knowledge_engine_plugin_id = draft.engine;
  if (existing && draft.reembed && embeddingChanged(existing, draft)) body.reembed = true;
  return body;
}

export function embeddingChanged(base: KnowledgeBase, draft: BaseDraft): boolean {
  const before = base.creation_settings?.embedding_model_uuid ?? "";
  const after = draft.creation.embedding_model_uuid ?? "";
  return before !== after;
}

export function engineFor(engines: KnowledgeEngine[] | undefined, id: string | undefined) {
  return engines?.find((e) => e.plugin_id === id) ?? engines?.[0];
}

// A result's passage: its text parts in order (LangBot's content list).
export function passageText(result: RetrievalResult): string {
  return (result.content ?? [])
    .filter((c) => c.type === "text" && typeof c.text === "string")
    .map((c) => c.text)
    .join("\n");
}

// The score (0..1, higher is better); a LangBot-style answer with a distance only gives 1 - distance.
export function scoreOf(result: RetrievalResult): number | null {
  if (typeof result.score === "number") return result.score;
  if (typeof result.distance === "number") return 1 - result.distance;
  return null;
}

export function formatBytes(n: number, lang: string): string {
  const units = ["B", "KB", "MB", "GB"];
  let v = n;
  let i = 0;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i += 1;
  }
  return `${new Intl.NumberFormat(lang, { maximumFractionDigits: i === 0 ? 0 : 1 }).format(v)} ${units[i]}`;
}
