// Shapes only the pipeline pages read: the editor's metadata (GET /pipelines/_/metadata), the
// installed plugins it offers for binding, and the debug chat's frames (docs/bots.md).
import type { I18nText, SchemaItem } from "../../api/types";

export interface StageMeta {
  name: string;
  label: I18nText;
  description?: I18nText;
  config: SchemaItem[];
}

export interface SectionMeta {
  name: string; // trigger, safety, ai, output
  label: I18nText;
  stages: StageMeta[];
}

export interface PipelineMetadata {
  configs: SectionMeta[];
}

export type StageValues = Record<string, unknown>;
export type PipelineConfig = Record<string, Record<string, StageValues>>;

// LangBot's plugin binding on a pipeline (docs/plugins.md "In the pipeline").
export interface ExtensionsPreferences {
  enable_all_plugins?: boolean;
  plugins?: { author: string; name: string }[];
  [key: string]: unknown;
}

export interface InstalledPlugin {
  author: string;
  name: string;
  plugin_id: string;
  version: string;
  enabled: boolean;
  label?: I18nText;
  description?: I18nText;
  status: string;
}

export interface ChainElement {
  type: string; // Plain, Image, At, AtAll, Quote, Voice, File, ...
  text?: string;
  url?: string;
  base64?: string;
  target?: string;
  name?: string;
  id?: string;
}

export type SessionType = "person" | "group";

export interface ChatMessage {
  id: number;
  role: "user" | "assistant";
  content: string;
  message_chain: ChainElement[];
  timestamp: string;
  is_final: boolean;
  connection_id?: string;
}
